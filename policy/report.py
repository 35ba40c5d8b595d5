"""Statistics, CSV files, tables and plots for every evaluation (``policy.evaluate`` and its ``migration`` subcommand).

Why it exists: both evaluations report means over seeds with 95 % intervals, write the same kind of CSV and
draw JCT CDFs; one module keeps those numbers and pictures made one way. matplotlib is imported lazily with
the Agg backend, so evaluation without plots needs no display and no matplotlib.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

import numpy as np

from policy.paired import normal_quantile, t_quantile

T95_TABLE_DF = 30
"""Degrees of freedom up to which ``t95`` is Student's t; beyond, the normal (as a printed t table does)."""


@cache
def t95(df: int) -> float:
    """The two-sided 95 % quantile of Student's t with ``df`` degrees of freedom as a printed table gives it:
    ``policy.paired.t_quantile`` rounded to 3 decimals up to ``T95_TABLE_DF``, the normal's 1.96 beyond. Why
    rounded and cut: every committed summary was made with that table (12.706, 4.303, ..., 2.042, then 1.96),
    and these are its values to the bit, so the summaries stay byte-identical (tests/unit/policy/test_report.py)."""
    return round(t_quantile(0.975, df) if df <= T95_TABLE_DF else normal_quantile(0.975), 3)


def mean_ci95(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95 % confidence interval (Student t over the values, ``t95``)."""
    arr = np.asarray([v for v in values if np.isfinite(v)], dtype=float)
    if len(arr) == 0:
        return float("nan"), float("nan")
    if len(arr) == 1:
        return float(arr[0]), float("nan")
    return float(arr.mean()), float(t95(len(arr) - 1) * arr.std(ddof=1) / np.sqrt(len(arr)))


def with_ci(mean: float, ci: float, fmt: str) -> str:
    """``mean ± ci`` in ``fmt``, or the mean alone when the interval is undefined (one seed)."""
    return format(mean, fmt) + ("" if not np.isfinite(ci) else " ± " + format(ci, fmt))


def format_counts(counts: dict[str, int]) -> str:
    """``{"rn-large": 3, "rn-small": 1}`` -> ``"rn-large=3;rn-small=1"`` (one CSV cell; sorted by type)."""
    return ";".join(f"{k}={v}" for k, v in sorted(counts.items()))


def parse_counts(text: str) -> dict[str, int]:
    """The inverse of ``format_counts``."""
    return {k: int(v) for k, _, v in (part.partition("=") for part in text.split(";") if part)}


def format_placements(rows: list[dict], kinds: Sequence[str]) -> str:
    """Per case and policy of evaluation ``rows``: placements of jobs of ``kinds`` per node type (their
    ``compute_placements`` cells), summed over seeds, with each type's share."""
    totals: dict[tuple, dict[str, int]] = {}
    for r in rows:
        tally = totals.setdefault((r["scenario"], r["workload"], r["load"], r["policy"]), {})
        for node_type, n in parse_counts(r.get("compute_placements", "")).items():
            tally[node_type] = tally.get(node_type, 0) + n
    types = sorted({t for tally in totals.values() for t in tally})
    lines = [f"\n## placements: {'/'.join(kinds)} jobs per node type, all seeds (share)",
             f"{'case':<28}{'policy':<18}" + "".join(f"{t:>18}" for t in types)]
    for (scen, wl, load, pol), tally in sorted(totals.items()):
        total = sum(tally.values()) or 1
        cells = "".join(f"{f'{tally.get(t, 0)} ({tally.get(t, 0) / total:.2f})':>18}" for t in types)
        lines.append(f"{f'{scen}/{wl}/{load:g}':<28}{pol:<18}{cells}")
    return "\n".join(lines)


def write_csv(path: Path, rows: list[dict]) -> None:
    """One CSV row per dict, columns in the first row's key order; nothing is written for no rows."""
    if not rows:
        return
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _cdf(ax, values: Iterable[np.ndarray], label: str) -> None:
    """One empirical CDF line of the pooled ``values``; nothing is drawn for no values."""
    x = np.sort(np.concatenate([np.ravel(v) for v in values] or [np.zeros(0)]))
    if len(x):
        ax.plot(x, np.arange(1, len(x) + 1) / len(x), label=label)


def write_plots(series: dict, out: Path) -> list[Path]:
    """For each scenario/workload/load, from its first seed: every policy's JCT CDF, and load imbalance and
    cpu utilisation over simulated time. ``series`` maps (scenario, workload, load, seed) -> policy -> arrays."""
    plt = _pyplot()
    written = []
    first_seed: dict[tuple, int] = {}
    for scen, wl, load, seed in sorted(series):
        first_seed.setdefault((scen, wl, load), seed)
    for (scen, wl, load), seed in first_seed.items():
        per_policy = series[(scen, wl, load, seed)]
        fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
        for label, ser in sorted(per_policy.items()):
            _cdf(axes[0], [ser["jct"]], label)
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
        path = out / f"{scen}-{wl}-load{load:g}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def write_arm_cdfs(jcts: dict, arms: Sequence[str], path: Path) -> Path:
    """One JCT CDF panel per scenario, one line per arm, all seeds pooled. ``jcts`` maps (scenario, arm) ->
    list of per-seed JCT arrays."""
    plt = _pyplot()
    scenarios = list(dict.fromkeys(k[0] for k in jcts))
    fig, axes = plt.subplots(1, len(scenarios), figsize=(6 * len(scenarios), 4.5), squeeze=False,
                             layout="constrained")
    for ax, scenario in zip(axes[0], scenarios, strict=True):
        for arm in arms:
            _cdf(ax, jcts.get((scenario, arm), []), arm)
        ax.set(xlabel="job completion time (s)", ylabel="fraction of jobs", title=f"JCT CDF, {scenario} (all seeds)")
        ax.legend()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
