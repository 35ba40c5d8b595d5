#!/usr/bin/env python3
"""The distilled student of ``ens-all7`` (issue #22) as tables, from ``results/policy/distill/``.

Why it exists: the folder's README fixed, before any run, the endpoint (the student's served-validation ratio to
the best heuristic, ``policy.comparison``) and the rule that sends it to the test split (<= 0.85). This script
computes both, and every other table of the README, from the committed files::

    python scripts/distill_table.py --merge validation-served results/policy/ensemble/validation-served \
        /tmp/distill/eval/validation                               # once per evaluation: the joins
    python scripts/distill_table.py                                # table.md from the committed files

The joins put the student beside the teacher, its members, the shipped model and the heuristics on the same
episodes (``merge_summaries`` refuses any row that differs; the 1,000-node join with ``--rtol 1e-9``, as the
ensemble study's).
"""

from __future__ import annotations

import argparse
import csv
import json
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
)
from policy.comparison import (
    ratio_to_best as ratio,
)
from policy.paired import interval
from policy.paths import POLICY_RESULTS

FOLDER = POLICY_RESULTS / "distill"
STUDENT, TEACHER, SHIPPED = "dqn:student", "dqn:ens-all7", "dqn:default"
MEMBERS = tuple(f"dqn:cal-B-A-{s}" for s in range(1, 6)) + ("dqn:cal-B-A-150k-6", "dqn:cal-B-A-150k-7")
TEST_RULE = 0.85
"""The registered rule: the student goes to the test split iff its validation endpoint is at most this."""
GUARD_BAR = 0.9
"""The guard test's bar (shipped served setting)."""
SIZE_HEURISTICS = ("tlp", "lvrb", "koord", "demand-aware", "lookahead", "random", "round-robin")
"""The size table's best-heuristic set: every policy but the DQNs and default-k8s."""




def primary(ex: dict) -> list[str]:
    g = ratio(ex, STUDENT)
    lines = ["## Primary: served validation (seeds 0-4, 60 episodes, min-max at weight 10), / the best heuristic", "",
             f"Geometric mean over the 12 family x load cases of the excess / the lowest of {', '.join(HEURISTICS)} "
             "on the case. Teacher, members and shipped model: `results/policy/ensemble/validation-served`, the same "
             "episodes.", "", "| policy | endpoint | / demand-aware alone |", "|---|---:|---:|"]
    for p in (STUDENT, TEACHER, *MEMBERS, SHIPPED, *HEURISTICS):
        lines.append(f"| {p} | {ratio(ex, p):.4f} | {ratio(ex, p, ('demand-aware',)):.3f} |")
    lines += ["", f"Test rule (registered): endpoint <= {TEST_RULE} -> the test split once. Student {g:.4f}: "
              f"**{'test' if g <= TEST_RULE else 'no test'}**.", "",
              "Per case, / the best heuristic:", "", "| family | load | best heuristic | student | teacher | shipped |",
              "|---|---:|---|---:|---:|---:|"]
    per = {p: ratios(ex, p, HEURISTICS) for p in (STUDENT, TEACHER, SHIPPED)}
    for f, ld in cases(ex):
        best = min(HEURISTICS, key=lambda h: ex[(f, ld, h)])
        lines.append(f"| {f} | {ld:g} | {best} {ex[(f, ld, best)]:.4f} | "
                     + " | ".join(cell(per[p][(f, ld)]) for p in (STUDENT, TEACHER, SHIPPED)) + " |")
    return [*lines, ""]


def paired(student_runs: Path, teacher_runs: Path) -> list[str]:
    """Per validation episode, student excess / teacher excess (each floored at ``MIN_EXCESS``)."""
    excess: dict[tuple[str, ...], float] = {}
    for path in (student_runs, teacher_runs):
        with path.open() as f:
            for r in csv.DictReader(f):
                excess[(r["scenario"], r["load"], r["seed"], r["policy"])] = float(r["excess_slowdown"])
    lines = ["## Descriptive: per episode, paired (served validation, min-max at weight 10)", "",
             f"Excess / excess per episode (each floored at {MIN_EXCESS}), geometric mean and 95 % t interval "
             "(`policy.paired.interval`).", "", "| policy | against | episodes | ratio | 95 % interval |",
             "|---|---|---:|---:|---|"]
    episodes = sorted({k[:3] for k in excess})
    for a, b in ((STUDENT, TEACHER), (STUDENT, SHIPPED)):
        logs = [math.log(max(excess[e + (a,)], MIN_EXCESS) / max(excess[e + (b,)], MIN_EXCESS)) for e in episodes
                if e + (a,) in excess and e + (b,) in excess]
        iv = interval(logs)
        lines.append(f"| {a} | {b} | {len(logs)} | {iv.ratio:.3f} | {iv.low:.3f}-{iv.high:.3f} |")
    return [*lines, ""]


def agreement(path: Path, student_meta: Path) -> list[str]:
    rec, meta = json.loads(path.read_text()), json.loads(student_meta.read_text())["distill_report"]
    lines = ["## Agreement with the teacher (student's top feasible node among the teacher's)", "",
             f"Validation states: {rec['decisions']:,} decisions of seeds {rec['offset']}-"
             f"{rec['offset'] + rec['seeds'] - 1}, placed by the teacher served ({rec['served']}). Train split: the "
             f"fit's own {meta['train_decisions']:,} decisions and the {meta['held_decisions']:,} of its held-out "
             "episodes.", "", "| states | agreement |", "|---|---:|",
             f"| train split, fitted | {meta['train_agreement']:.3f} |",
             f"| train split, held out | {meta['held_agreement']:.3f} |",
             f"| validation, all | {rec['agreement']:.3f} |"]
    lines += [f"| validation, {f} | {v['agreement']:.3f} |" for f, v in rec["families"].items()]
    return [*lines, ""]


def shipped_setting(ex: dict) -> list[str]:
    lines = ["## Secondary: the shipped served setting (band:0.02 at weight 5), validation seeds 0-4", "",
             f"The guard test's setting; its bar is <= {GUARD_BAR}x. Descriptive. Others: "
             "`results/policy/ensemble/validation-served-shipped-setting`.", "",
             "| policy | / best heuristic | guard bar met |", "|---|---:|---|"]
    for p in (STUDENT, TEACHER, *MEMBERS, SHIPPED, *HEURISTICS):
        if (cases(ex)[0] + (p,)) in ex:
            lines.append(f"| {p} | {ratio(ex, p):.3f} | {'yes' if ratio(ex, p) <= GUARD_BAR else 'no'} |")
    return [*lines, ""]


def size(ex: dict) -> list[str]:
    dqns = [p for p in (STUDENT, TEACHER, "dqn:cal-B-A-150k-7", SHIPPED) if (cases(ex)[0] + (p,)) in ex]
    lines = ["## 1,000 nodes (size split, 3 seeds, served as deployed: band:0.02 at weight 5)", "",
             "Best heuristic = the lowest of every policy but the DQNs and default-k8s; others from "
             "`results/policy/ensemble/nodes-1000`, the same episodes.", "",
             "| family | load | best heuristic | " + " | ".join(dqns) + " |", "|---|---:|---|" + "---:|" * len(dqns)]
    per = {p: ratios(ex, p, SIZE_HEURISTICS) for p in dqns}
    for f, ld in cases(ex):
        best = min(SIZE_HEURISTICS, key=lambda h: ex[(f, ld, h)])
        lines.append(f"| {f} | {ld:g} | {best} {ex[(f, ld, best)]:.4f} | "
                     + " | ".join(cell(per[p][(f, ld)]) for p in dqns) + " |")
    lines.append("| geometric mean (target <= 0.9) | | | " + " | ".join(
        f"**{geometric_mean(per[p].values()):.3f}**" for p in dqns) + " |")
    lines.append("| / default-k8s | | | " + " | ".join(f"{ratio(ex, p, (BASELINE,)):.3f}" for p in dqns) + " |")
    return [*lines, ""]


def bench(path: Path) -> list[str]:
    rec = json.loads(path.read_text())
    models = rec["figures"]["inference"]["models"]
    sizes = list(models[0]["sizes"])
    lines = ["## Cost (bench.json): encode + Q-values per call, p50 wall / CPU (ms), one thread, in-process", "",
             f"Measured {rec['measured_at']}, load average {rec['load_before']} before, {rec['load_after']} after; "
             "every model on the same snapshots in one run. Target <= 2 ms at 5,000 nodes.", "",
             "| model | networks | " + " | ".join(f"{int(n):,} nodes" for n in sizes) + " |",
             "|---|---:|" + "---:|" * len(sizes)]
    for m in models:
        lines.append(f"| {m['model_version']} | {m['networks']} | " + " | ".join(
            f"{m['sizes'][n]['dqn_p50_ms']:.2f} / {m['sizes'][n]['dqn_cpu_p50_ms']:.2f}" for n in sizes) + " |")
    return [*lines, ""]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_merge_options(p, FOLDER)
    args = p.parse_args()
    merge_from_args(args, FOLDER)
    out = primary(excess_by_case(read_summary(FOLDER / "validation-served" / "summary.csv")))
    runs = FOLDER / "validation-served" / "runs-distill.csv"
    if runs.is_file():
        out += paired(runs, POLICY_RESULTS / "ensemble" / "validation-served" / "runs-ensemble.csv")
    if (FOLDER / "agreement.json").is_file():
        out += agreement(FOLDER / "agreement.json", FOLDER / "models" / "student.json")
    for name, section in (("validation-served-shipped-setting", shipped_setting), ("nodes-1000", size)):
        if (FOLDER / name / "summary.csv").is_file():
            out += section(excess_by_case(read_summary(FOLDER / name / "summary.csv")))
    if (FOLDER / "bench.json").is_file():
        out += bench(FOLDER / "bench.json")
    (FOLDER / "table.md").write_text("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
