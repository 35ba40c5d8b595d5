"""bench/bench_scheduler.py's rounds, summarised: what an interleaved run says beyond its first round.

Why it exists: one round of the scheduler benchmark moved with the machine's load more than with the code
(0.55, 0.91, 0.58 for the same checkout), so ``--repeat N`` alternates the no-op and drsched arms N times and
this module reads every round, not the first. Per round (the arms sharing a suffix: ``no-op extender``,
``drsched``; round r > 1 is ``no-op extender #r``, ``drsched #r``): drsched's pods/s over the no-op extender's
of the same round, over no extender's where that round has one (only round 1 does: the no-extender arm runs
once, before the rounds), the baseline tree's over the no-op's where there is one, and CPU ms per scheduled
pod to the last binding (the extender's, drsched's and the no-op's; kube-scheduler's in the drsched arm).
Over the rounds: median, min, max and n of each.

Pure and standard library only: it reads the ``arms`` dict of a record (``bench/record.py``), so records
written before it, with or without ``--repeat``, summarise the same way (``scripts/readme_tables.py``).
"""

from __future__ import annotations

import re
import statistics

KINDS = ("no extender", "no-op extender", "drsched, baseline tree", "drsched")
"""The arms of a round, in the order they run."""
ARM = re.compile(rf"(?P<arm>{'|'.join(KINDS)})(?: #(?P<round>[0-9]+))?")
FIELDS = ("ratio_to_noop", "ratio_to_no_extender", "baseline_ratio_to_noop", "extender_ms", "noop_extender_ms",
          "scheduler_ms")
"""Per-round figures: ratios, then CPU ms per scheduled pod."""


def _ms(arm: dict, process: str) -> float:
    return 1000 * arm["cpu_per_pod"].get(process, 0.0)


def _by_round(arms: dict[str, dict]) -> dict[int, dict[str, dict]]:
    by: dict[int, dict[str, dict]] = {}
    for name, arm in arms.items():
        m = ARM.fullmatch(name)
        if m:
            by.setdefault(int(m["round"] or 1), {})[m["arm"]] = arm
    return by


def rounds(arms: dict[str, dict]) -> list[dict]:
    """One dict per round that has both a no-op and a drsched arm, in round order: ``round`` and ``FIELDS``
    (None where the round lacks the arm: no extender after round 1, a baseline tree when none ran)."""
    by = _by_round(arms)
    out = []
    for n in sorted(by):
        r = by[n]
        if "no-op extender" not in r or "drsched" not in r:
            continue
        noop, mine = r["no-op extender"], r["drsched"]
        none, base = r.get("no extender"), r.get("drsched, baseline tree")
        out.append({"round": n, "ratio_to_noop": mine["pods_s"] / noop["pods_s"],
                    "ratio_to_no_extender": mine["pods_s"] / none["pods_s"] if none else None,
                    "baseline_ratio_to_noop": base["pods_s"] / noop["pods_s"] if base else None,
                    "extender_ms": _ms(mine, "extender"), "noop_extender_ms": _ms(noop, "extender"),
                    "scheduler_ms": _ms(mine, "kube-scheduler")})
    return out


def spread(values: list[float]) -> dict | None:
    """``{"median", "min", "max", "n"}`` of ``values`` (None when there are none)."""
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def summary(arms: dict[str, dict]) -> dict:
    """``{"rounds": [per round], "n": rounds, field: spread over the rounds that have it}`` for each of ``FIELDS``,
    and ``"pods_s"``: per arm kind that ran, the spread of its pods/s over those rounds."""
    per = rounds(arms)
    by = _by_round(arms)
    pods = {kind: spread([by[r["round"]][kind]["pods_s"] for r in per if kind in by[r["round"]]]) for kind in KINDS}
    return {"n": len(per), "rounds": per, "pods_s": {k: v for k, v in pods.items() if v is not None},
            **{f: spread([r[f] for r in per if r[f] is not None]) for f in FIELDS}}


COLUMNS = (("ratio_to_noop", "to no-op", ".3f"), ("ratio_to_no_extender", "to none", ".3f"),
           ("baseline_ratio_to_noop", "base/no-op", ".3f"), ("extender_ms", "ext ms/pod", ".2f"),
           ("noop_extender_ms", "no-op ms", ".2f"), ("scheduler_ms", "sched ms", ".2f"))
"""The printed table's columns: field, heading, format."""


def render(s: dict) -> list[str]:
    """The round table bench_scheduler prints: a row per round, then median, min, max and n over them."""
    def row(label: str, values) -> str:
        return f"  {label:<8}" + "".join(f"{v:>16}" for v in values)

    def cell(v: float | None, fmt: str) -> str:
        return "-" if v is None else format(v, fmt)

    lines = ["  rounds: drsched pods/s over the no-op extender's (and no extender's, the baseline tree's);",
             "  CPU ms per scheduled pod to the last binding: drsched's extender, the no-op extender,",
             "  kube-scheduler (drsched arm)", row("round", (head for _, head, _ in COLUMNS))]
    lines += [row(str(r["round"]), (cell(r[f], fmt) for f, _, fmt in COLUMNS)) for r in s["rounds"]]
    lines += [row(key, (cell(s[f] and s[f][key], fmt) for f, _, fmt in COLUMNS)) for key in ("median", "min", "max")]
    lines.append(row("n", ((s[f] or {}).get("n", 0) for f, _, _ in COLUMNS)))
    return lines
