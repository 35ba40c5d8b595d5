"""The horizon study's tables and plot (issue #22): does a long-horizon DQN beat the near-myopic one?

Reads the served validation evaluation of every candidate on the same episodes (``validation-served/summary.csv``
here) and writes ``comparison.md``; with ``--logs DIR`` (the training runner's folder: each run's log and
start/end marks, and the machine's load sampled every 20 s) it first writes ``runs.csv`` (wall time and load
per run) and ``learning_curves.csv`` (every validation check of every run); ``learning_curves.png`` is drawn
from that CSV.

The ratio is the one the README's comparison tables use (``policy.comparison``: a case whose denominator is
below ``MIN_EXCESS`` is left out, ratios below ``MIN_RATIO`` count as it), with the best heuristic per case =
the lowest excess of ``policy.comparison.HEURISTICS`` (default-k8s, demand-aware and lookahead) on that case.
Run from the checkout's root, with it on the import path:

    PYTHONPATH=. python results/policy/horizon/report.py [--logs /tmp/horizon]
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

from policy.comparison import DQN, HEURISTICS, excess_by_case, geometric_mean, ratios, read_summary

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
CANDIDATES = ROOT / "policy" / "models" / "candidates"
RECIPES = {"A": "gamma 0.5, shaping gamma 1 (the shipped recipe)",
           "B": "gamma 0.95, shaping gamma 0.95 (exactly potential-based)",
           "C": "gamma 0.95, shaping gamma 0.95, 3-step returns",
           "A100k": "recipe A, 100k steps", "B100k": "recipe B, 100k steps"}
"""Recipe -> what differs from policy/models/default-train.yaml besides the length: 30k steps, a check every
10k (the ``100k`` ones: 100k steps, a check every 25k, the shipped recipe's)."""
RUN = re.compile(r"^(?P<recipe>[A-Z][0-9k]*)-s(?P<seed>\d+)$")
"""A run's name in the runner's folder: recipe and training seed."""


def mean_excess(ex: dict[tuple, float], policy: str) -> float:
    vs = [v for (_, _, p), v in ex.items() if p == policy]
    return sum(vs) / len(vs)


def _spread(values: list[float], fmt: str = ".2f") -> str:
    if len(values) == 1:
        return f"{values[0]:{fmt}}"
    return f"{sum(values) / len(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"


def comparison(ex: dict[tuple, float], runs: dict[str, list[str]]) -> str:
    """Per recipe: mean (min-max over seeds) of each case's ratio, the geometric mean and the mean excess."""
    cases = sorted({(f, ld) for f, ld, _ in ex})
    rows = {**{r: names for r, names in runs.items()}, "shipped": [DQN]}
    per = {r: [ratios(ex, p, HEURISTICS) for p in names] for r, names in rows.items()}
    head = " | ".join(rows)
    lines = ["Served validation (5 seeds per case, `--served 10`): the DQN's excess slowdown / the best heuristic's "
             "on the same case (the lowest of default-k8s, demand-aware, lookahead). Per recipe: mean over its "
             "training seeds (min-max). `shipped` is policy/models/default.npz (recipe A, 150k-step schedule).", "",
             f"| family | load | best heuristic | {head} |", "|---|---|---|" + "---:|" * len(rows)]
    for fam, load in cases:
        best = min(HEURISTICS, key=lambda h: ex[(fam, load, h)])
        cells = []
        for r in rows:
            vs = [x[(fam, load)] for x in per[r] if x[(fam, load)] is not None]
            cells.append(_spread(vs) if vs else "n/a")
        lines.append(f"| {fam} | {load:g} | {best} {ex[(fam, load, best)]:.4f} | " + " | ".join(cells) + " |")
    gms = {r: [geometric_mean(x.values()) for x in per[r]] for r in rows}
    lines.append("| **geometric mean** | all | | " + " | ".join(f"**{_spread(gms[r])}**" for r in rows) + " |")
    lines.append("| mean excess | all | " + " / ".join(f"{h} {mean_excess(ex, h):.4f}" for h in HEURISTICS) + " | "
                 + " | ".join(_spread([mean_excess(ex, p) for p in rows[r]], ".4f") for r in rows) + " |")
    lines += ["", "Per training run (geometric mean of the case ratios; mean excess):", ""]
    for r, names in rows.items():
        for p, g in zip(names, gms[r], strict=True):
            lines.append(f"- {p}: {g:.3f}; {mean_excess(ex, p):.4f}")
    return "\n".join(lines) + "\n"


EVAL_LINE = re.compile(r"eval steps=(\d+) dqn=([\d.]+) default-k8s=([\d.]+) demand-aware=([\d.]+)")


def learning_curves(logs: Path) -> list[dict]:
    """Every validation check of every run, from its training log (``<recipe>-s<seed>.log``). The .json's
    history is not enough: it is written with the best export, so it stops at the best check. The last check
    of a run (``end``) is the end-of-training one, after the final gradient steps."""
    rows = []
    for log in sorted(p for p in logs.glob("*.log") if RUN.match(p.stem)):
        recipe, seed = RUN.match(log.stem).group("recipe", "seed")
        found = EVAL_LINE.findall(log.read_text())
        for k, (steps, dqn, k8s, da) in enumerate(found):
            rows.append({"recipe": recipe, "seed": int(seed), "steps": int(steps),
                         "check": "end" if k == len(found) - 1 else "periodic", "dqn": float(dqn),
                         "default-k8s": float(k8s), "demand-aware": float(da)})
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    colours = dict(zip(RECIPES, ("tab:blue", "tab:red", "tab:green", "navy", "darkred"), strict=True))
    for recipe in sorted({r["recipe"] for r in rows}):
        seeds = sorted({r["seed"] for r in rows if r["recipe"] == recipe})
        for seed in seeds:
            pts = [r for r in rows if r["recipe"] == recipe and r["seed"] == seed]
            line = [r for r in pts if r["check"] == "periodic"]
            ax.plot([r["steps"] for r in line], [r["dqn"] for r in line], marker="o", color=colours[recipe],
                    alpha=0.8, label=f"{recipe}: {RECIPES[recipe]}" if seed == seeds[0] else None)
            ends = [r for r in pts if r["check"] == "end"]
            ax.scatter([r["steps"] for r in ends], [r["dqn"] for r in ends], marker="x", color=colours[recipe])
    ax.axhline(rows[0]["demand-aware"], color="grey", ls="--", label="demand-aware")
    ax.set_xlabel("training steps")
    ax.set_ylabel("validation excess slowdown (training's check: 2 seeds)")
    ax.set_title("Learning curves, one line per training seed (x: end-of-training check)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def runs_table(logs: Path) -> list[dict]:
    """One row per training run from the runner's logs: ``<name>.times`` (start / end epoch and /proc/loadavg
    at each) and ``load.log`` (epoch and /proc/loadavg every 20 s while the study ran)."""
    samples = []
    for line in (logs / "load.log").read_text().splitlines():
        t, load1 = line.split()[:2]
        samples.append((int(t), float(load1)))
    rows = []
    for times in sorted(p for p in logs.glob("*.times") if RUN.match(p.stem)):
        marks = {ln.split()[0]: ln.split() for ln in times.read_text().splitlines()}
        if "end" not in marks:
            continue
        t0, t1 = int(marks["start"][1]), int(marks["end"][1])
        during = [ld for t, ld in samples if t0 <= t <= t1]
        meta = json.loads((CANDIDATES / f"horizon-{times.stem}.json").read_text())
        rows.append({"run": f"horizon-{times.stem}", "wall_s": t1 - t0, "learn_s": meta["train_seconds"],
                     "steps": meta["train_config"]["steps"], "load1_mean": round(sum(during) / len(during), 1),
                     "load1_min": min(during), "load1_max": max(during), "cores": 2})
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--summary", type=Path, default=HERE / "validation-served" / "summary.csv",
                   help="the served validation evaluation's summary.csv (default: %(default)s)")
    p.add_argument("--logs", type=Path, help="the training runner's log folder: (re)write runs.csv from it")
    args = p.parse_args(argv)
    if args.logs:  # what the runner left in its log folder becomes committed CSV here
        table = runs_table(args.logs)
        with (HERE / "runs.csv").open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(table[0]))
            w.writeheader()
            w.writerows(table)
    ex = excess_by_case(read_summary(args.summary))
    policies = {p for _, _, p in ex}
    runs = {r: sorted(p for p in policies if p.startswith(f"dqn:horizon-{r}-")) for r in RECIPES}
    runs = {r: names for r, names in runs.items() if names}
    text = comparison(ex, runs)
    if (HERE / "runs.csv").exists():
        with (HERE / "runs.csv").open() as f:
            table = list(csv.DictReader(f))
        text += ("\nTraining runs (`nice -n 15`, two at a time, on a 2-core machine shared with other work; load1 = "
                 "/proc/loadavg sampled every 20 s while the run lasted):\n\n"
                 "| run | steps | wall s | learn s | load1 mean (min-max) |\n|---|---:|---:|---:|---|\n")
        text += "".join(f"| {r['run']} | {r['steps']} | {r['wall_s']} | {r['learn_s']} | {r['load1_mean']} "
                        f"({r['load1_min']}-{r['load1_max']}) |\n" for r in table)
    (HERE / "comparison.md").write_text(text)
    curves = HERE / "learning_curves.csv"
    if args.logs:
        rows = learning_curves(args.logs)
        with curves.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    if curves.exists():
        with curves.open() as f:
            rows = [{**r, "seed": int(r["seed"]), "steps": int(r["steps"]),
                     **{k: float(r[k]) for k in ("dqn", "default-k8s", "demand-aware")}} for r in csv.DictReader(f)]
        plot(rows, HERE / "learning_curves.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
