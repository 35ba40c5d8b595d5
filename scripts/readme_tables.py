#!/usr/bin/env python3
"""The README's result tables, generated from the committed results in ``policy/results/``.

Why it exists: tables typed by hand drift from what the code measures. ``make evaluate`` writes each
evaluation's CSV and markdown into ``policy/results/``; this script derives the comparison tables the README
argues from (DQN vs default-k8s and vs the best model-based heuristic: on the test split as served, the
headline, and as a pure argmax, and on validation; each split side by side by scoring mode; migration) from
those CSVs, and copies every result file into the README block that names it::

    <!-- BEGIN generated: policy/results/test/summary.md -->
    ...
    <!-- END generated -->

    python scripts/readme_tables.py            # derive the comparison files, then rewrite the README blocks
    python scripts/readme_tables.py --check    # exit 1 when a block or a derived file is out of date
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path("policy/results")
BLOCK = re.compile(r"(<!-- BEGIN generated: (?P<path>[^ ]+) -->\n)(?P<body>.*?)(<!-- END generated -->)", re.S)
DQN = "dqn:default"
BASELINE = "default-k8s"
MODEL_BASED = ("lookahead", "demand-aware")
MIN_EXCESS = 0.005
"""A ratio to an excess below this (a policy already at the physical limit) is noise: shown as n/a, left out."""
MIN_RATIO = 0.01
"""Ratios below this count as this in the geometric mean, so one near-zero case cannot dominate it."""
COMPARISONS = (("test-served", "each policy scored as served (the hot-node filter prefer-cool, then kube-scheduler's "
                "resource scoring + the extender's 0-10 score at weight 10; default-k8s is plain kube-scheduler)"),
               ("test", "each policy's scores taken as a pure argmax"),
               ("validation", "each policy's scores taken as a pure argmax"))
"""Result folders that get a ``comparison.md``, and how the policies were scored in them."""
SERVED_LABELS = ("argmax", "served, weight 10 (hot filter prefer-cool)", "served, hot filter strict",
                 "served, no hot filter")
SERVED_TABLES = {name: tuple(zip((split, f"{split}-served", f"{split}-served-strict", f"{split}-served-nohot"),
                                 SERVED_LABELS, strict=True))
                 for name, split in (("served.md", "validation"), ("served-test.md", "test"))}
"""Derived file -> the runs it puts side by side (result folder, column label): one split by scoring mode."""


def _read(path: Path) -> list[dict]:
    with path.open() as f:
        return list(csv.DictReader(f))


def _excess(summary: list[dict], metric: str = "excess_slowdown") -> dict[tuple, float]:
    """(family, load, policy) -> mean excess slowdown (or another metric) over seeds."""
    return {(r["scenario"], float(r["load"]), r["policy"]): float(r[metric]) for r in summary}


def comparison(summary: list[dict], scoring: str = COMPARISONS[1][1]) -> str:
    """Per case: the DQN's excess as a ratio to default-k8s's and to the best of lookahead and demand-aware."""
    ex = _excess(summary)
    seeds = sorted({int(r["seeds"]) for r in summary})
    cases = sorted({(f, ld) for f, ld, _ in ex})
    lines = [f"Excess slowdown (mean slowdown - 1, mean over {'/'.join(map(str, seeds))} seeds), {scoring}; "
             "ratios are the DQN's mean excess / the other's. Best model-based = the lower of lookahead and "
             "demand-aware.", "",
             "| family | load | default-k8s | lookahead | demand-aware | dqn | dqn / default-k8s | "
             "dqn / best model-based |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    ratios: dict[str, list[float]] = {"k8s": [], "best": []}

    def ratio(key: str, num: float, den: float) -> str:
        if den < MIN_EXCESS:
            return "n/a"
        ratios[key].append(num / den)
        return f"{num / den:.2f}"
    for fam, load in cases:
        d, k = ex[(fam, load, DQN)], ex[(fam, load, BASELINE)]
        best = min(ex[(fam, load, p)] for p in MODEL_BASED)
        lines.append(f"| {fam} | {load:g} | {k:.4f} | {ex[(fam, load, 'lookahead')]:.4f} | "
                     f"{ex[(fam, load, 'demand-aware')]:.4f} | {d:.4f} | {ratio('k8s', d, k)} | "
                     f"{ratio('best', d, best)} |")
    gm = {key: math.exp(sum(math.log(max(v, MIN_RATIO)) for v in vs) / len(vs)) if vs else float("nan")
          for key, vs in ratios.items()}
    lines.append(f"| geometric mean ({len(ratios['k8s'])} / {len(ratios['best'])} cases) | all | | | | | "
                 f"**{gm['k8s']:.2f}** | **{gm['best']:.2f}** |")
    lines += ["", f"n/a: the other's excess is below {MIN_EXCESS} (at the physical limit), so the ratio is noise and "
              f"is left out of the geometric mean; ratios below {MIN_RATIO} count as {MIN_RATIO} in it."]
    return "\n".join(lines) + "\n"


def served(results: Path, runs_of: tuple[tuple[str, str], ...] = SERVED_TABLES["served.md"]) -> str:
    """Per policy: mean excess over one split's cases, as argmax and as served with each hot filter."""
    runs = [(label, _excess(_read(results / name / "summary.csv")),
             _excess(_read(results / name / "summary.csv"), "excess_queue")) for name, label in runs_of]
    policies = sorted({p for _, ex, _ in runs for _, _, p in ex}, key=lambda p: (p != BASELINE, p))
    seeds = sorted({int(r["seeds"]) for name, _ in runs_of for r in _read(results / name / "summary.csv")})
    split = runs_of[0][0].capitalize()
    lines = [f"{split}, excess slowdown averaged over its cases ({'/'.join(map(str, seeds))} seeds); "
             "default-k8s is plain kube-scheduler in every column; in brackets the part of it spent queueing "
             "(no node admitted the pod).", "",
             "| policy | " + " | ".join(label for label, _, _ in runs) + " |", "|---|" + "---:|" * len(runs)]
    for pol in policies:
        cells = []
        for _, ex, queue in runs:
            vals = [v for (_, _, p), v in ex.items() if p == pol]
            waits = [v for (_, _, p), v in queue.items() if p == pol]
            cells.append(f"{sum(vals) / len(vals):.3f} ({sum(waits) / len(waits):.3f})" if vals else "")
        lines.append(f"| {pol} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def migration(summary: list[dict]) -> str:
    """No migration vs migration per scenario: per-seed ratios with 95 % intervals, p95 JCT, migrations."""
    lines = ["| scenario | seeds | mean JCT, migration / none | makespan, migration / none | p95 JCT none -> migration "
             "(s) | migrations per run |", "|---|---:|---:|---:|---:|---:|"]
    by = {(r["scenario"], r["arm"]): r for r in summary}
    for scen in dict.fromkeys(r["scenario"] for r in summary):
        none, mig = by[(scen, "none")], by[(scen, "migration")]
        lines.append(f"| {scen} | {mig['seeds']} | {float(mig['mean_jct_ratio']):.3f} ± "
                     f"{float(mig['mean_jct_ratio_ci']):.3f} | {float(mig['makespan_ratio']):.3f} ± "
                     f"{float(mig['makespan_ratio_ci']):.3f} | {float(none['p95_jct']):.0f} -> "
                     f"{float(mig['p95_jct']):.0f} | {float(mig['migrations']):.1f} |")
    return "\n".join(lines) + "\n"


def derived(root: Path) -> dict[Path, str]:
    """Every derived result file (relative path -> content) whose inputs are present."""
    res, out = root / RESULTS, {}
    for name, scoring in COMPARISONS:
        if (res / name / "summary.csv").exists():
            out[RESULTS / name / "comparison.md"] = comparison(_read(res / name / "summary.csv"), scoring)
    for table, runs_of in SERVED_TABLES.items():
        if all((res / name / "summary.csv").exists() for name, _ in runs_of):
            out[RESULTS / table] = served(res, runs_of)
    if (res / "migration" / "migration_summary.csv").exists():
        out[RESULTS / "migration" / "migration.md"] = migration(_read(res / "migration" / "migration_summary.csv"))
    return out


def render(readme: str, root: Path) -> str:
    """The README with every generated block replaced by the current content of the file it names."""
    def fill(m: re.Match) -> str:
        path = root / m["path"]
        if not path.is_file():
            raise FileNotFoundError(f"README block names {m['path']}, which does not exist")
        return m.group(1) + path.read_text().rstrip("\n") + "\n" + m.group(4)
    return BLOCK.sub(fill, readme)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything is out of date")
    p.add_argument("--root", type=Path, default=ROOT,
                   help="the checkout whose policy/results/ to read (default: this one)")
    p.add_argument("--readme", type=Path, help="the README to fill (default: ROOT/README.md)")
    args = p.parse_args(argv)
    root = args.root
    args.readme = args.readme or root / "README.md"
    stale = []
    for rel, text in derived(root).items():
        if not (root / rel).is_file() or (root / rel).read_text() != text:
            stale.append(str(rel))
            if not args.check:
                (root / rel).write_text(text)
    try:
        before = args.readme.read_text()
        after = render(before, root)
    except (OSError, FileNotFoundError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    if after != before:
        stale.append(str(args.readme))
        if not args.check:
            args.readme.write_text(after)
    if args.check and stale:
        sys.stderr.write("out of date (run `python scripts/readme_tables.py`): " + ", ".join(stale) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
