"""Judge a finished run's host-interference gate again, by today's rule, from the files the run kept.

``gates.csv`` records each run's gates as judged when it ran. When the rule changes (2026-12-06: a low interval
counts as starved only when the node CPUs had no idle time, ``lab.gates``), a result directory can be judged again
without rerunning: ``counters.csv`` (the nodes' cgroup counters), ``system.csv`` (every CPU's ``/proc/stat`` ticks),
``jobs.csv`` (each job's node, start, finish and solo cpu), ``nodes.csv`` (the quotas) and, for the ``tenants``
scenario, ``tenants.csv`` with ``events.csv``'s ``tenant_started`` rows (what the tenants wanted, from when:
``lab.tenants.demand_rows``) hold everything the gate reads. ``regate`` returns each run's recorded and recomputed
rows; ``write_regated`` replaces only the host-interference rows of ``gates.csv`` and keeps the file it replaced as
``gates-recorded.csv`` (the first one: a second write never loses the run-time record), so ``lab report``, ``lab
shadow`` and the next ``lab run`` (which reruns what is flagged) read the new verdicts.
"""

from __future__ import annotations

import csv
import os
from collections import defaultdict
from pathlib import Path

from lab import report
from lab.errors import LabError
from lab.gates import HOST_GATE as HOST
from lab.gates import MAX_SHARE, gate_rows, host_gate, read_counter_rows, read_system_rows
from lab.protocol import load_protocol
from lab.tenants import TENANT_FILE, TENANT_STARTED, demand_rows, tenants_from_rows

RECORDED = "gates-recorded.csv"


class RegateError(LabError, ValueError):
    """A result directory that lacks what the gate reads; the message names the file."""


def _key(r: dict) -> tuple[int, str, str]:
    return int(r["seed"]), r["arm"], r["variant"]


def regate(out: Path, *, max_share: float | None = None) -> list[dict]:
    """One dict per run with counters: ``seed``, ``arm``, ``variant``, ``recorded`` (its host-interference row in
    gates.csv, or None) and ``now`` (the row today's rule gives). ``max_share``: the flag limit (unset: the
    protocol.yaml kept in ``out``, else the default 5 %)."""
    for name in ("counters.csv", "jobs.csv", "nodes.csv"):
        if not (out / name).exists():
            raise RegateError(f"{out / name}: missing; the host gate is judged from counters.csv, jobs.csv and "
                              "nodes.csv")
    if max_share is None:
        kept = out / "protocol.yaml"
        max_share = load_protocol(kept).interference_max if kept.exists() else MAX_SHARE
    quota = {}
    for i, r in enumerate(report.read_rows(out / "nodes.csv"), start=2):
        try:
            quota[r["node"]] = float(r["cpu_quota_m"])
        except (KeyError, TypeError, ValueError):
            raise RegateError(f"{out / 'nodes.csv'}:{i}: field cpu_quota_m: not a number") from None
    counters, system, jobs = defaultdict(list), defaultdict(list), defaultdict(list)
    for r in report.read_rows(out / "counters.csv"):
        counters[_key(r)].append(r)
    for r in report.read_rows(out / "system.csv"):  # none: judged without the node CPUs, as lab run would
        system[_key(r)].append(r)
    for r in report.read_rows(out / "jobs.csv"):
        jobs[_key(r)].append(r)
    recorded = {_key(r): r for r in report.read_rows(out / "gates.csv") if r["gate"] == HOST}
    tenants = tenants_from_rows(report.read_rows(out / TENANT_FILE), list(quota))
    started = defaultdict(dict)  # (seed, arm) -> node -> when its tenant's cycle began, arm time
    for r in report.read_rows(out / "events.csv"):
        if r["event"] == TENANT_STARTED:
            started[int(r["seed"]), r["arm"]][r["node"]] = float(r["t_s"])
    res = []
    for key in sorted(counters):
        seed, arm, variant = key
        samples = read_counter_rows(counters[key])
        began = started[seed, arm]
        wanted = demand_rows([(t, began[t.node_name]) for t in tenants.get(seed, []) if t.node_name in began],
                             until_s=max(s.t_s for s in samples))
        host = host_gate(samples, read_system_rows(system[key]), jobs[key] + wanted, quota_m=quota,
                         max_share=max_share)
        now = gate_rows(seed=seed, arm=arm, variant=variant, host=host)[0]
        res.append({"seed": seed, "arm": arm, "variant": variant, "recorded": recorded.get(key), "now": now})
    return res


def write_regated(out: Path, res: list[dict]) -> int:
    """Replace gates.csv's host-interference rows by ``res``'s ``now`` rows (the other gates' rows kept, in
    order); the replaced file is kept as gates-recorded.csv unless one is there. Returns the rows whose
    verdict changed."""
    path = out / "gates.csv"
    rows = report.read_rows(path)
    if path.exists() and not (out / RECORDED).exists():
        (out / RECORDED).write_text(path.read_text())
    now = {(r["seed"], r["arm"], r["variant"]): r["now"] for r in res}
    kept = [r for r in rows if not (r["gate"] == HOST and _key(r) in now)]
    changed = sum(1 for r in res if r["recorded"] is None
                  or str(r["recorded"]["flagged"]).strip() != str(r["now"]["flagged"]))
    tmp = path.with_name(path.name + ".tmp")  # written whole, then renamed: a crash leaves the old file
    with tmp.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=report.FILES["gates.csv"], lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(kept + [now[k] for k in sorted(now)])
    os.replace(tmp, path)
    return changed


def markdown(res: list[dict]) -> str:
    lines = ["| seed | arm | variant | recorded | now | now, in detail |", "|---|---|---|---|---|---|"]
    for r in res:
        rec = r["recorded"]
        was = "-" if rec is None else ("flagged" if str(rec["flagged"]).strip() == "1" else "passed")
        lines.append(f"| {r['seed']} | `{r['arm']}` | {r['variant']} | {was} | "
                     f"{'flagged' if r['now']['flagged'] else 'passed'} | {r['now']['detail']} |")
    return "\n".join(lines) + "\n"
