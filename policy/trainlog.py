"""The training studies' shared reading of what ``python -m policy.train`` printed, and their shared tables and
picture: the periodic checks (``EVAL``, ``SERVED``), how long a warm start took, a run directory collected into a
study's committed files (``collect``), the wall-time table, the learning-curve plot, the table scripts' command
line (``study_inputs``).

Why it exists: the training studies' table scripts (``scripts/warm_start_table.py``,
``scripts/warm_start_strong_table.py``, ``scripts/dqfd_table.py``, ``scripts/dqfd_long_table.py``) read the same
trainer output and draw the same things, and scripts never import each other (``tests/unit/test_scripts.py``),
so each is written here, once.
Study tooling, not the deciding core: it reads and copies files, and ``plot_curves`` imports matplotlib (Agg)
only when called; nothing on the training or serving path imports it.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

FIELDS = ("steps", "dqn", "default-k8s", "demand-aware")
"""The columns of a per-run CSV: one row per periodic evaluation (the trainer's ``eval`` line)."""
OUTPUT = ".trainer-output.txt"
"""The suffix under which a run's saved trainer output is kept beside its CSV."""
EVAL = re.compile(r"eval steps=(\d+) dqn=([\d.]+) default-k8s=([\d.]+) demand-aware=([\d.]+)")
"""One periodic evaluation line of the trainer's log: steps, then the three policies' validation excess."""
SERVED = re.compile(r"served check steps=(\d+) ratio=([\d.]+|nan)")
"""One served check line of a ``--select served`` run: steps, then the served ratio to the best heuristic."""
_TRAINED = re.compile(r"trained (\d+) steps in (\d+) s")
_TIMES = re.compile(r"^(?P<run>\S+) start=(\S+) end=(\S+) wall_s=(?P<wall>\d+) rc=(?P<rc>\d+)$")
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")


def imitation_seconds(log: Path) -> float | None:
    """Seconds from the trainer's 'effective config' line to its 'warm start:' line (env and model set-up, a
    fraction of a second, included); None when the log lacks either."""
    t: dict[str, float] = {}
    for line in log.read_text().splitlines():
        m = _STAMP.match(line)
        for key in ("effective config", "warm start:"):
            if m and key in line and key not in t:
                t[key] = dt.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S").timestamp() + int(m[2]) / 1000
    return t["warm start:"] - t["effective config"] if len(t) == 2 else None


def collect(src: Path, dest: Path) -> None:
    """A study's run directory ``src`` into its committed ``dest``: per ``<run>.log`` (the trainer's output) the
    checks as ``<run>.eval.csv`` (``FIELDS``) and, for a ``--select served`` run, ``<run>.served.csv`` (steps,
    served_ratio), the log itself as ``<run>`` + ``OUTPUT``, the run's small JSON files; the runner's
    ``times.txt`` lines (``<run> start= end= wall_s= rc=``) as ``times.csv`` with the trainer's own seconds."""
    dest.mkdir(parents=True, exist_ok=True)
    for log in sorted(src.glob("*-*.log")):
        text = log.read_text()
        for pattern, name, header in ((EVAL, "eval", FIELDS), (SERVED, "served", ("steps", "served_ratio"))):
            by_step = {int(m[1]): m.groups() for m in pattern.finditer(text)}  # the final check repeats the last
            if by_step or name == "eval":
                with (dest / f"{log.stem}.{name}.csv").open("w", newline="") as f:
                    w = csv.writer(f)
                    w.writerow(header)
                    w.writerows(by_step[s] for s in sorted(by_step))
        shutil.copy(log, dest / f"{log.stem}{OUTPUT}")
        for suffix in (".json", ".warm-start.json"):
            if (src / f"{log.stem}{suffix}").is_file():
                shutil.copy(src / f"{log.stem}{suffix}", dest / f"{log.stem}{suffix}")
    if (src / "times.txt").is_file():
        with (dest / "times.csv").open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(("run", "wall_s", "rc", "train_seconds"))
            for line in (src / "times.txt").read_text().splitlines():
                if (m := _TIMES.match(line)) and (src / f"{m['run']}.log").is_file():
                    trained = _TRAINED.search((src / f"{m['run']}.log").read_text())
                    w.writerow((m["run"], m["wall"], m["rc"], trained[2] if trained else ""))


def spread(values: Sequence[float], fmt: str = ".2f") -> str:
    """Figures over seeds as the study tables show them: ``mean (min-max)``, the one value alone, n/a for none."""
    if not values:
        return "n/a"
    if len(values) == 1:
        return f"{values[0]:{fmt}}"
    return f"{sum(values) / len(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"


def study_inputs(description: str, runs: Path, served: Path) -> dict:
    """A study table script's command line: ``--collect DIR`` first collects a run directory into ``runs``
    (``collect``), ``--merge DIR ...`` first joins evaluation batches into ``served``
    (``policy.comparison.merge_summaries``); returns ``served``'s evaluation as per-case excess
    (``policy.comparison.excess_by_case``)."""
    from policy.comparison import excess_by_case, merge_summaries, read_summary

    p = argparse.ArgumentParser(description=description)
    p.add_argument("--collect", type=Path, help="run directory to read the training logs from first")
    p.add_argument("--merge", type=Path, nargs="+", help="policy.evaluate output folders to join first")
    a = p.parse_args()
    if a.collect:
        collect(a.collect, runs)
    if a.merge:
        merge_summaries(a.merge, served)
    return excess_by_case(read_summary(served / "summary.csv"))


def times_table(runs: Path, where: str) -> list[str]:
    """Markdown lines of the wall time per run from ``runs / "times.csv"`` (``collect``'s), the trainer's own
    seconds and, for a warm run, its imitation stage (``imitation_seconds``); ``where`` says where the runs ran.
    No lines without the file."""
    path = runs / "times.csv"
    if not path.is_file():
        return []
    lines = [f"## Wall time (one run at a time, {where})", "",
             "| run | wall (s) | trainer's learn + checks (s) | imitation stage (s) |", "|---|---:|---:|---:|"]
    with path.open() as f:
        for row in csv.DictReader(f):
            stage = (imitation_seconds(runs / f"{row['run']}{OUTPUT}")
                     if (runs / f"{row['run']}.warm-start.json").is_file() else None)
            rc = "" if row["rc"] == "0" else f" (rc {row['rc']})"
            lines.append(f"| {row['run']}{rc} | {row['wall_s']} | {row['train_seconds']} | "
                         f"{'' if stage is None else f'{stage:.1f}'} |")
    return [*lines, ""]


Curve = dict[int, float]
"""steps -> a check's figure."""


def plot_curves(path: Path, arms: Sequence[tuple[str, str, Sequence[Curve]]],
                references: Sequence[tuple[str, float, str]], *, title: str, xlabel: str, ylabel: str,
                mean_label: str = "{arm}: mean of {n} seeds", markers: bool = False) -> None:
    """Checks vs steps, log scale: per arm ``(name, colour, curves)`` every curve thin and the mean over the
    steps all its curves share thick (``markers``: with dots); each reference ``(label, value, linestyle)`` a
    grey horizontal line. Written to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    for arm, colour, curves in arms:
        for c in curves:
            xs = sorted(c)
            ax.plot(xs, [c[x] for x in xs], color=colour, lw=0.7, alpha=0.45)
        xs = sorted(set.intersection(*(set(c) for c in curves)))
        ax.plot(xs, [sum(c[x] for c in curves) / len(curves) for x in xs], color=colour, lw=2.2,
                label=mean_label.format(arm=arm, n=len(curves)), **({"marker": "o", "ms": 4} if markers else {}))
    for label, value, style in references:
        ax.axhline(value, color="grey", ls=style, lw=1, label=label)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
