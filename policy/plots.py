"""PNG plots for ``policy.evaluate``: what a reader would rather look at than read.

For each scenario/workload/load, from its first seed: the JCT CDF of every policy, and load imbalance
and cpu / net / disk utilisation over simulated time. matplotlib is imported lazily with the Agg backend,
so evaluation without plots needs no display and no matplotlib.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_plots(series: dict, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    first_seed: dict[tuple, int] = {}
    for scen, wl, load, seed in sorted(series):
        first_seed.setdefault((scen, wl, load), seed)
    for (scen, wl, load), seed in first_seed.items():
        per_policy = series[(scen, wl, load, seed)]
        tag = f"{scen}-{wl}-load{load:g}"
        fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
        for label, ser in sorted(per_policy.items()):
            jct = np.sort(ser["jct"])
            if len(jct):
                axes[0].plot(jct, np.arange(1, len(jct) + 1) / len(jct), label=label)
            t = ser["tick_times"]
            if len(t):
                axes[1].plot(t, ser["imbalance"], label=label, lw=0.8)
                axes[2].plot(t, ser["utilisation"][:, 0], label=label, lw=0.8)
        axes[0].set(xlabel="job completion time (s)", ylabel="fraction of jobs", title="JCT CDF", xscale="log")
        axes[1].set(xlabel="time (s)", ylabel="imbalance (mean std of node utilisation)", title="load imbalance")
        axes[2].set(xlabel="time (s)", ylabel="cluster cpu utilisation", title="cpu utilisation")
        axes[0].legend(fontsize=8)
        fig.suptitle(f"scenario={scen} workload={wl} load={load:g} seed={seed}")
        fig.tight_layout()
        path = out / f"{tag}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written
