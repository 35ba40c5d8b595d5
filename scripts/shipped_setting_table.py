#!/usr/bin/env python3
"""One network chosen in the shipped served setting (band:0.02 at weight 5; issue #22) as tables, from
``results/policy/shipped-setting/``.

Why it exists: the folder's README fixed, before any run, the candidates (nine single networks), the rule that
chooses one (the lowest served validation ratio to the best heuristic in the shipped setting) and issue #22's
test targets. This script applies the rule and computes every table of the README from the committed files::

    python scripts/shipped_setting_table.py --merge validation-served-shipped-setting \
        results/policy/distill/validation-served-shipped-setting /tmp/shipset/eval/validation   # the joins
    python scripts/shipped_setting_table.py                   # table.md from the committed files

The joins put this step's batches beside the committed rows of the same episodes (``merge_summaries`` refuses
any row that differs). Per-episode rows (``runs-*.csv`` in a folder) give the paired chosen / shipped ratio.
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

from policy.comparison import (
    BASELINE,
    HEURISTICS,
    MIN_EXCESS,
    add_merge_options,
    cases,
    cell,
    excess_by_case,
    geometric_mean,
    merge_from_args,
    ratios,
    read_summary,
    served_setting,
)
from policy.comparison import (
    ratio_to_best as ratio,
)
from policy.paired import interval
from policy.paths import POLICY_RESULTS

FOLDER = POLICY_RESULTS / "shipped-setting"
SHIPPED = "dqn:default"
CANDIDATES = (SHIPPED, *(f"dqn:cal-B-A-{s}" for s in range(1, 6)), "dqn:cal-B-A-150k-6", "dqn:cal-B-A-150k-7",
              "dqn:student")
"""The registered single-network candidates, the shipped model first (it wins a tie)."""
GUARD_BAR = 0.9
"""The guard test's bar on served validation in the shipped setting."""
TARGET, FAMILY_CAP, K8S_TARGET = 0.85, 1.05, 0.4
"""Issue #22's test targets: / the best heuristic, the worst family's ratio, / default-k8s."""



def chosen(ex: dict) -> str:
    """The registered rule: the lowest ratio, rounded to three decimals; ties to the earlier candidate."""
    return min(CANDIDATES, key=lambda p: (round(ratio(ex, p), 3), CANDIDATES.index(p)))



def _setting(folder: Path) -> str:
    s = served_setting(folder)
    return f"{s['mapping']} at weight {float(s['weight']):g}, hot filter {s['hot_filter']}"


def families(ex: dict, policy: str) -> dict[str, float]:
    """Per family: the geometric mean of its loads' ratios to the best heuristic (the ensemble study's rule)."""
    per = ratios(ex, policy, HEURISTICS)
    return {f: geometric_mean(v for (g, _), v in per.items() if g == f) for f in sorted({f for f, _ in per})}


def selection(ex: dict, folder: Path) -> list[str]:
    pick = chosen(ex)
    lines = [f"## Selection: served validation (seeds 0-4, 60 episodes; {_setting(folder)}), / the best heuristic",
             "", f"Geometric mean over the 12 family x load cases of the excess / the lowest of {', '.join(HEURISTICS)}"
             " on the case. Rule: the lowest of the nine single networks. The guard's bar is "
             f"<= {GUARD_BAR}.", "", "| policy | / best heuristic | / default-k8s | guard bar met | chosen |",
             "|---|---:|---:|---|---|"]
    for p in sorted(CANDIDATES, key=lambda p: ratio(ex, p)) + list(HEURISTICS):
        lines.append(f"| {p} | {ratio(ex, p):.3f} | {ratio(ex, p, (BASELINE,)):.3f} | "
                     f"{'yes' if ratio(ex, p) <= GUARD_BAR else 'no'} | {'**yes**' if p == pick else ''} |")
    return [*lines, "", *per_case(ex, pick, "validation"), ""]


def per_case(ex: dict, pick: str, split: str) -> list[str]:
    policies = [pick, SHIPPED, "demand-aware", "lookahead"]
    per = {p: ratios(ex, p, HEURISTICS) for p in policies}
    fam = {p: families(ex, p) for p in policies}
    lines = [f"Per family and load ({split}), / the best heuristic on the case:", "",
             "| family | load | best heuristic | " + " | ".join(policies) + " |", "|---|---:|---|" + "---:|" * 4]
    for f, ld in cases(ex):
        best = min(HEURISTICS, key=lambda h: ex[(f, ld, h)])
        lines.append(f"| {f} | {ld:g} | {best} {ex[(f, ld, best)]:.4f} | "
                     + " | ".join(cell(per[p][(f, ld)]) for p in policies) + " |")
    lines += ["", f"Per family ({split}; the geometric mean of its loads' ratios):", "",
              "| family | " + " | ".join(policies) + " |", "|---|" + "---:|" * 4]
    lines += [f"| {f} | " + " | ".join(f"{fam[p][f]:.2f}" for p in policies) + " |" for f in fam[pick]]
    return lines


def test_split(ex: dict, pick: str, folder: Path) -> list[str]:
    lines = [f"## Test split (seeds 0-4; {_setting(folder)}), run once", "",
             f"Issue #22's targets: <= {TARGET}x the best heuristic (geometric mean over the cases), no family above "
             f"{FAMILY_CAP}x, <= {K8S_TARGET}x default-k8s.", "",
             "| policy | / best heuristic | worst family | / default-k8s | all three targets met |",
             "|---|---:|---|---:|---|"]
    for p in (pick, SHIPPED, "demand-aware", "lookahead"):
        fam = families(ex, p)
        worst = max(fam, key=fam.get)
        met = ratio(ex, p) <= TARGET and fam[worst] <= FAMILY_CAP and ratio(ex, p, (BASELINE,)) <= K8S_TARGET
        lines.append(f"| {p} | {ratio(ex, p):.3f} | {worst} {fam[worst]:.2f} | {ratio(ex, p, (BASELINE,)):.3f} | "
                     f"{'yes' if met else 'no'} |")
    return [*lines, "", *per_case(ex, pick, "test"), ""]


def paired(folders: dict[str, Path], pick: str) -> list[str]:
    """Per episode, chosen excess / shipped excess (each floored at ``MIN_EXCESS``), geometric mean and 95 % t
    interval (``policy.paired.interval``), from each split's ``runs-*.csv``."""
    lines = ["## Per episode, paired (registered, descriptive)", "",
             f"Excess / excess per episode (each floored at {MIN_EXCESS}), geometric mean and 95 % t interval.", "",
             "| split | policy | against | episodes | ratio | 95 % interval |", "|---|---|---|---:|---:|---|"]
    for split, folder in folders.items():
        excess: dict[tuple[str, ...], float] = {}
        for path in sorted(folder.glob("runs-*.csv")):
            with path.open() as f:
                for r in csv.DictReader(f):
                    excess[(r["scenario"], r["load"], r["seed"], r["policy"])] = float(r["excess_slowdown"])
        episodes = sorted({k[:3] for k in excess})
        logs = [math.log(max(excess[e + (pick,)], MIN_EXCESS) / max(excess[e + (SHIPPED,)], MIN_EXCESS))
                for e in episodes if e + (pick,) in excess and e + (SHIPPED,) in excess]
        if logs:
            iv = interval(logs)
            lines.append(f"| {split} | {pick} | {SHIPPED} | {len(logs)} | {iv.ratio:.3f} | "
                         f"{iv.low:.3f}-{iv.high:.3f} |")
    return [*lines, ""]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_merge_options(p, FOLDER)
    args = p.parse_args()
    merge_from_args(args, FOLDER)
    val = FOLDER / "validation-served-shipped-setting"
    ex = excess_by_case(read_summary(val / "summary.csv"))
    pick = chosen(ex)
    out = selection(ex, val)
    test = FOLDER / "test-served-shipped-setting"
    if (test / "summary.csv").is_file():
        out += test_split(excess_by_case(read_summary(test / "summary.csv")), pick, test)
    out += paired({"validation": val, "test": test}, pick)
    (FOLDER / "table.md").write_text("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
