"""What a calibration writes: the per-job CSV, the markdown table, the scatter plot and the calibration file.

Why it exists: the measured-vs-predicted figures are the evidence for (or against) the simulator, so they
are written one way for both commands. matplotlib is imported lazily (``policy.report``), so a replay
without ``--plot`` needs none. The module owns no state.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

import yaml

from policy.calibrate.fit import Errors, by_kind
from policy.calibrate.replay import Prediction
from policy.report import _pyplot, write_csv
from policy.sim import calibration
from policy.sim.errors import ConfigError

HEADER = """\
# How co-located jobs share a node in the simulator (policy.sim.sharing), and the measurements behind it.
# `active` names the parameter set the simulator uses by default: every committed result and the shipped
# model were made with it. `original` is the rule they were made with before the real-node fit (the results
# compared in results/policy/calibrated-world.md are kept in results/policy/original-world/). Fitted sets and
# their `fits` records (the data, seeds, errors behind them) are written by
# `python -m policy.calibrate fit --write --name NAME`. `hosts` are replay-only models of the machine the lab
# runs were measured on (`fit --write-host NAME`, then `--host-cpu-m NAME`): the simulator never reads them.
# `no-sharing` is the other reference: no sharing loss (share `none`), each job as fast as alone on its node,
# the null a contention model must beat (`python -m lab shadow OUT --params no-sharing`).
"""


def pct(x: float) -> str:
    return "–" if x != x else f"{100 * x:.1f} %"


def _groups(preds: Sequence[Prediction]) -> dict[str, Errors]:
    """``by_kind``, then per request variant and per node when the jobs have more than one of them."""
    out = dict(by_kind(preds))
    for label, key in (("variant", lambda p: p.job.variant), ("node", lambda p: p.job.node)):
        values = sorted({key(p) for p in preds})
        if len(values) > 1:
            out.update({f"{label} {v}": Errors.of([p for p in preds if key(p) == v]) for v in values})
    return out


def table(columns: dict[str, Sequence[Prediction]]) -> str:
    """Markdown: one row per job kind (then per request variant and per node, when there are several), median /
    p90 error per column (parameter sets scored on the same jobs)."""
    stats = {name: _groups(preds) for name, preds in columns.items()}
    kinds = list(dict.fromkeys(k for s in stats.values() for k in s))
    head = "| kind | jobs | " + " | ".join(f"{c}: median | {c}: p90" for c in columns) + " |"
    lines = [head, "|" + "---|" * (2 + 2 * len(columns))]
    for kind in kinds:
        n = max(s[kind].n for s in stats.values() if kind in s)
        cells = []
        for s in stats.values():
            e = s.get(kind, Errors(0, float("nan"), float("nan")))
            cells += [pct(e.median), pct(e.p90)]
        lines.append(f"| {kind} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def job_rows(columns: dict[str, Sequence[Prediction]]) -> list[dict]:
    """One row per job and column: its run, measured and predicted slowdown, and error."""
    return [{"set": name, "seed": p.job.seed, "arm": p.job.arm, "variant": p.job.variant, "job": p.job.job,
             "kind": p.job.kind, "node": p.job.node, "measured": round(p.job.run_slowdown, 4),
             "predicted": round(p.predicted, 4), "error": round(p.error, 4)}
            for name, preds in columns.items() for p in preds]


def scatter(path: Path, columns: dict[str, Sequence[Prediction]]) -> None:
    """Measured vs predicted run slowdown, one panel per column, coloured by job kind, with y = x."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(columns), figsize=(4.5 * len(columns), 4.2), squeeze=False)
    for ax, (name, preds) in zip(axes[0], columns.items(), strict=True):
        values = [p.job.run_slowdown for p in preds] + [p.predicted for p in preds]
        top, low = max([*values, 1.5]) * 1.05, min([*values, 1.0]) * 0.95
        ax.plot([low, top], [low, top], color="grey", lw=0.8, ls="--")
        for kind in sorted({p.job.kind for p in preds}):
            sel = [p for p in preds if p.job.kind == kind]
            ax.scatter([p.job.run_slowdown for p in sel], [p.predicted for p in sel], s=14, label=kind)
        e = Errors.of(preds)
        ax.set(title=f"{name}: median {pct(e.median)}, p90 {pct(e.p90)}", xlabel="measured run slowdown",
               ylabel="predicted run slowdown", xlim=(low, top), ylim=(low, top))
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(out: Path, sections: dict[str, dict[str, Sequence[Prediction]]], *, title: str, notes: str = "",
          plot: bool = True) -> None:
    """``calibration.md`` (one table per section, e.g. held-out and fitting seeds), ``predictions.csv`` and
    (``plot``) ``scatter.png`` (one panel per section and column) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    flat = {f"{col} ({sec.split(' seeds')[0]})" if sec else col: preds
            for sec, cols in sections.items() for col, preds in cols.items()}
    write_csv(out / "predictions.csv", job_rows(flat))
    text = (f"# {title}\n\n{notes}\nError: |predicted − measured| / measured of each job's run slowdown "
            "(finish − start over its solo runtime on that node type).\n")
    for sec, cols in sections.items():
        text += (f"\n## {sec}\n\n" if sec else "\n") + table(cols)
    (out / "calibration.md").write_text(text)
    if plot:
        scatter(out / "scatter.png", flat)


def record_fit(path: Path, name: str, fitted: dict, fit: dict) -> None:
    """Add (or replace) set ``name`` and its record under ``fits`` in the calibration file; ``active`` and
    the other sets are kept, so the simulator's default does not change by fitting."""
    doc = calibration.read(path)
    if name in calibration.REFERENCE_SETS:
        raise ConfigError("--name", f"{name!r} is a reference rule, not a fit; fit into another name")
    doc["sets"][name] = fitted
    doc.setdefault("fits", {})[name] = {**fit, "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    path.write_text(HEADER + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None))


def record_host(path: Path, name: str, host: str, fit: dict) -> None:
    """Add (or replace) host ``name`` (a ``--host-cpu-m`` value and the record behind it) under ``hosts`` in
    the calibration file; parameter sets and ``active`` are kept."""
    doc = calibration.read(path)
    doc.setdefault("hosts", {})[name] = {"host_cpu_m": host, **fit,
                                         "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    path.write_text(HEADER + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None))
