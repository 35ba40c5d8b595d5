#!/usr/bin/env python3
"""Ensembles of the kept-imitation exports (issue #22) as tables, from ``results/policy/ensemble/``.

Why it exists: the folder's README fixed, before any run, the endpoint (each ensemble's served-validation ratio
to the best heuristic, ``policy.comparison``) and the rule that sends an ensemble to the test split (below 0.9
and below the best of its own members). This script computes both, and every other table of the README, from
the committed files, so the numbers and the verdicts can be rebuilt::

    python scripts/ensemble_table.py --merge validation-served results/policy/dqfd-long/validation-served \
        /tmp/ens/eval/validation                                   # once per evaluation: the joins
    python scripts/ensemble_table.py                               # table.md from the committed files

The joins put the ensembles beside earlier evaluations on the same episodes (``merge_summaries`` refuses any
row that differs), so the single members' figures come from the same file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from policy.comparison import (
    BASELINE,
    HEURISTICS,
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
from policy.paths import POLICY_RESULTS
from policy.trainlog import spread

FOLDER = POLICY_RESULTS / "ensemble"
SHIPPED = "dqn:default"
RULE = "demand-aware"
BAR = 0.9
"""The test rule's and the guard test's bar on the served validation ratio."""
SINGLES_30K = tuple(f"dqn:cal-B-A-{s}" for s in range(1, 6))
SINGLES_150K = ("dqn:cal-B-A-150k-6", "dqn:cal-B-A-150k-7")
ENSEMBLES = {"dqn:ens-all7": SINGLES_30K + SINGLES_150K, "dqn:ens-30k5": SINGLES_30K, "dqn:ens-150k2": SINGLES_150K}
"""The registered ensembles and their members (as ``policy.evaluate`` labels them)."""
LOO = {f"dqn:ens-30k-no{i}": tuple(p for p in SINGLES_30K if not p.endswith(f"-{i}")) for i in range(1, 6)}
"""The descriptive leave-one-out ensembles of the five 30k seeds."""
SIZE_HEURISTICS = ("tlp", "lvrb", "koord", "demand-aware", "lookahead", "random", "round-robin")
"""The size table's best-heuristic set: every policy but the DQN and default-k8s."""




def primary(ex: dict) -> list[str]:
    """The endpoint per ensemble beside its members', and the test rule's verdict per ensemble."""
    lines = ["## Primary: served validation (seeds 0-4, 60 episodes), ensemble / the best heuristic", "",
             f"Geometric mean over the 12 family x load cases of the excess / the lowest of {', '.join(HEURISTICS)} "
             "on the case; min-max at weight 10. Members' figures: the same episodes (joined with "
             "`results/policy/dqfd-long/validation-served`).", "",
             f"| ensemble | K | endpoint | against {RULE} alone | members: best | members: mean (min-max) | "
             f"test split? (< {BAR} and < best member) |", "|---|---:|---:|---:|---:|---|---|"]
    for ens, members in ENSEMBLES.items():
        g, own = ratio(ex, ens), [ratio(ex, m) for m in members]
        go = g < BAR and g < min(own)
        lines.append(f"| {ens.removeprefix('dqn:')} | {len(members)} | {g:.3f} | {ratio(ex, ens, (RULE,)):.3f} | "
                     f"{min(own):.3f} | {spread(own, '.3f')} | {'yes' if go else 'no'} |")
    lines += ["", "Single members on the same episodes: " + ", ".join(
        f"{m.removeprefix('dqn:')} {ratio(ex, m):.3f}" for m in SINGLES_30K + SINGLES_150K) + f"; the shipped model "
        f"{ratio(ex, SHIPPED):.3f}; " + ", ".join(f"{h} {ratio(ex, h):.3f}" for h in HEURISTICS) + ".", ""]
    loo = [ratio(ex, e) for e in LOO]
    singles = [ratio(ex, m) for m in SINGLES_30K]
    lines += ["### Descriptive: four of the five 30k seeds at a time", "",
              "| ensemble | leaves out | endpoint |", "|---|---|---:|"]
    lines += [f"| {e.removeprefix('dqn:')} | cal-B-A-{e[-1]} | {v:.3f} |" for e, v in zip(LOO, loo, strict=True)]
    lines += ["", f"Spread: the five leave-one-out ensembles {spread(loo, '.3f')} (range {max(loo) - min(loo):.3f}); "
              f"the five single seeds {spread(singles, '.3f')} (range {max(singles) - min(singles):.3f}).", ""]
    return lines


def per_case(ex: dict) -> list[str]:
    """Per family x load: each registered ensemble beside its members' range, and the shipped model."""
    head = ["family", "load", "best heuristic"]
    for ens in ENSEMBLES:
        head += [ens.removeprefix("dqn:"), "its members (min-max)"]
    head.append("shipped")
    lines = ["## Per family and load (validation)", "", "Ratio to the best heuristic on the case.", "",
             "| " + " | ".join(head) + " |", "|---|---:|---|" + "---:|" * (len(head) - 3)]
    per = {p: ratios(ex, p, HEURISTICS) for p in [*ENSEMBLES, *SINGLES_30K, *SINGLES_150K, SHIPPED]}
    for fam, load in cases(ex):
        best = min(HEURISTICS, key=lambda h: ex[(fam, load, h)])
        cells = []
        for ens, members in ENSEMBLES.items():
            own = [v for m in members if (v := per[m][(fam, load)]) is not None]
            cells += [cell(per[ens][(fam, load)]), spread(own, ".2f") if own else "n/a"]
        lines.append(f"| {fam} | {load:g} | {best} {ex[(fam, load, best)]:.4f} | " + " | ".join(cells)
                     + f" | {cell(per[SHIPPED][(fam, load)])} |")
    return [*lines, ""]


def shipped_setting(ex: dict) -> list[str]:
    """The secondary: the shipped served setting (band:0.02 at weight 5), the guard test's bar."""
    present = [p for p in [*ENSEMBLES, *LOO, *SINGLES_30K, *SINGLES_150K, SHIPPED, *HEURISTICS]
               if (cases(ex)[0] + (p,)) in ex]
    lines = ["## Secondary: the shipped served setting (band:0.02 at weight 5), validation seeds 0-4", "",
             f"The guard test's setting; its bar is <= {BAR}x the best heuristic. Descriptive: nothing was chosen "
             "on it.", "", "| policy | / best heuristic | guard bar met |", "|---|---:|---|"]
    lines += [f"| {p} | {ratio(ex, p):.3f} | {'yes' if ratio(ex, p) <= BAR else 'no'} |" for p in present]
    return [*lines, ""]


def test_split(ex: dict) -> list[str]:
    """The test split against issue #22's targets, per policy and per family."""
    tested = [e for e in ENSEMBLES if (cases(ex)[0] + (e,)) in ex]
    policies = [*tested, *SINGLES_150K, SHIPPED, "demand-aware", "lookahead"]
    per = {p: ratios(ex, p, HEURISTICS) for p in policies}
    families = sorted({f for f, _ in cases(ex)})
    fam = {p: {f: geometric_mean(v for (g, _), v in per[p].items() if g == f) for f in families} for p in policies}
    lines = ["## Test split (seeds 0-4, min-max at weight 10), run once", "",
             "Issue #22's targets: excess <= 0.85x the best heuristic's (geometric mean over the cases), no family "
             "above 1.05x (a family: the geometric mean of its loads' ratios), <= 0.4x default-k8s's. The 150k "
             "singles and the shipped model: `results/policy/dqfd-long/test-served`, the same episodes.", "",
             "| policy | / best heuristic | worst family | / default-k8s |", "|---|---:|---|---:|"]
    for p in policies:
        worst = max(fam[p], key=fam[p].get)
        lines.append(f"| {p} | {geometric_mean(per[p].values()):.3f} | {worst} {fam[p][worst]:.2f} | "
                     f"{ratio(ex, p, (BASELINE,)):.3f} |")
    lines += ["", "Per family and load:", "", "| family | load | " + " | ".join(policies) + " |",
              "|---|---:|" + "---:|" * len(policies)]
    lines += [f"| {f} | {ld:g} | " + " | ".join(cell(per[p][(f, ld)]) for p in policies) + " |"
              for f, ld in cases(ex)]
    lines += ["", "Per family (the geometric mean of its loads' ratios):", "",
              "| family | " + " | ".join(policies) + " |", "|---|" + "---:|" * len(policies)]
    lines += [f"| {f} | " + " | ".join(f"{fam[p][f]:.2f}" for p in policies) + " |" for f in families]
    return [*lines, ""]


def size(ex: dict) -> list[str]:
    """At 1,000 nodes: the evaluated ensemble and the shipped model against every heuristic."""
    dqns = sorted({p for *_, p in ex if p.startswith("dqn:")})
    lines = ["## 1,000 nodes (size split, 3 seeds, served as deployed: band:0.02 at weight 5)", "",
             "Best heuristic = the lowest mean excess of every policy but the DQNs and default-k8s (the size "
             "table's rule); heuristics and the shipped model from `results/policy/size-test/nodes-1000`, the same "
             "episodes.", "", "| family | load | best heuristic | " + " | ".join(dqns) + " |",
             "|---|---:|---|" + "---:|" * len(dqns)]
    per = {p: ratios(ex, p, SIZE_HEURISTICS) for p in dqns}
    for f, ld in cases(ex):
        best = min(SIZE_HEURISTICS, key=lambda h: ex[(f, ld, h)])
        lines.append(f"| {f} | {ld:g} | {best} {ex[(f, ld, best)]:.4f} | "
                     + " | ".join(cell(per[p][(f, ld)]) for p in dqns) + " |")
    lines.append("| geometric mean (target <= 0.9) | | | " + " | ".join(
        f"**{geometric_mean(per[p].values()):.3f}**" for p in dqns) + " |")
    return [*lines, ""]


def bench(path: Path) -> list[str]:
    """Encode + Q per model from ``bench/bench_policy.py``'s record, wall and CPU p50, each against the first."""
    rec = json.loads(path.read_text())
    models = rec["figures"]["inference"]["models"]
    sizes = list(models[0]["sizes"])
    big = sizes[-1]
    lines = [f"## Cost ({path.name}): encode + Q-values per call, p50 (ms), one thread, in-process "
             "(`bench/bench_policy.py`)", "",
             f"Measured {rec['measured_at']}, load average {rec['load_before']} before, {rec['load_after']} after "
             "(other sessions' work shared CPU 0, so wall times carry waiting; the CPU time is this thread's own, "
             "what a call costs on a core to itself); every model timed on the same snapshots in the one run. "
             "Target <= 2 ms at 5,000 nodes.", "",
             "| model | networks | " + " | ".join(f"{int(n):,} nodes wall / CPU" for n in sizes)
             + f" | {int(big):,} nodes, / the first model: wall / CPU |", "|---|---:|" + "---:|" * (len(sizes) + 1)]
    first = models[0]["sizes"][big]
    for m in models:
        cells = [f"{m['sizes'][n]['dqn_p50_ms']:.2f} / {m['sizes'][n]['dqn_cpu_p50_ms']:.2f}" for n in sizes]
        own = m["sizes"][big]
        lines.append(f"| {m['model_version']} | {m['networks']} | " + " | ".join(cells)
                     + f" | {own['dqn_p50_ms'] / first['dqn_p50_ms']:.2f} / "
                     f"{own['dqn_cpu_p50_ms'] / first['dqn_cpu_p50_ms']:.2f} |")
    lines += ["", "Encode alone (wall p50, ms, shared by every model): " + ", ".join(
        f"{int(n):,} nodes {models[0]['sizes'][n]['encode_p50_ms']:.3f}" for n in sizes) + ".", ""]
    return lines


PAIRS = (("dqn:ens-all7", "dqn:cal-B-A-150k-7"), ("dqn:ens-all7", "dqn:cal-B-A-150k-6"), ("dqn:ens-all7", SHIPPED),
         ("dqn:ens-150k2", "dqn:cal-B-A-150k-7"), ("dqn:cal-B-A-150k-7", SHIPPED))
"""Descriptive per-episode comparisons (added after the results), where both sides' runs.csv are at hand (the 30k
exports' are not: they ran in the served-selection study's batches): ensembles against their best members and the
shipped model."""


def paired(folder: Path) -> list[str]:
    """Per validation episode, excess / excess (each floored at ``MIN_EXCESS``), geometric mean with a 95 % t
    interval (``policy.paired.interval``), from the evaluations' ``runs.csv`` (this step's and dqfd-long's)."""
    import csv
    import math

    from policy.comparison import MIN_EXCESS
    from policy.paired import interval

    excess: dict[tuple[str, ...], float] = {}
    for path in sorted(folder.glob("runs-*.csv")):
        with path.open() as f:
            for r in csv.DictReader(f):
                excess[(r["scenario"], r["load"], r["seed"], r["policy"])] = float(r["excess_slowdown"])
    episodes = sorted({k[:3] for k in excess})
    lines = ["## Descriptive: per episode, paired (served validation, min-max at weight 10)", "",
             f"Excess / excess per episode (each floored at {MIN_EXCESS}), geometric mean and 95 % t interval over "
             "the 60 episodes (`policy.paired.interval`). Added after the results; not registered.", "",
             "| policy | against | episodes | ratio | 95 % interval |", "|---|---|---:|---:|---|"]
    for a, b in PAIRS:
        logs = [math.log(max(excess[e + (a,)], MIN_EXCESS) / max(excess[e + (b,)], MIN_EXCESS)) for e in episodes
                if e + (a,) in excess and e + (b,) in excess]
        iv = interval(logs)
        lines.append(f"| {a} | {b} | {len(logs)} | {iv.ratio:.3f} | {iv.low:.3f}-{iv.high:.3f} |")
    return [*lines, ""]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_merge_options(p, FOLDER)
    args = p.parse_args()
    merge_from_args(args, FOLDER)
    out = primary(ex := excess_by_case(read_summary(FOLDER / "validation-served" / "summary.csv"))) + per_case(ex)
    if any((FOLDER / "validation-served").glob("runs-*.csv")):
        out += paired(FOLDER / "validation-served")
    for name, section in (("validation-served-shipped-setting", shipped_setting), ("test-served", test_split),
                          ("nodes-1000", size)):
        if (FOLDER / name / "summary.csv").is_file():
            out += section(excess_by_case(read_summary(FOLDER / name / "summary.csv")))
    for path in sorted(FOLDER.glob("bench*.json"), key=lambda q: (q.name != "bench.json", q.name)):  # then reruns
        out += bench(path)
    (FOLDER / "table.md").write_text("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
