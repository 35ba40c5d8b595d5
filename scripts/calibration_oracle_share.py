"""How well can any CPU-sharing model predict the lab's compute jobs? The best case: everything but the job's own
run taken from the measurement.

Why it exists: the contention model's held-out error on the isolated lab (results/policy/calibration/isolated/)
is far above issue #21's target, and a better-fitted sharing rule only helps if sharing is what the error is
made of. This replays each compute job (cpu, train) of a lab results directory alone against its node's quota,
with every other job on that node present exactly from its measured start to its measured finish (an oracle
no replay has: ``policy.calibrate.replay`` predicts the co-runners too), the node's quota split by cpu request
(the pods' ``cpu.shares``) with each job capped at its own use alone (``policy.sim.sharing.water_fill``) and
non-compute jobs taking their use. What is left between this and the measured run time is not the sharing
rule's: it is what the node gave beyond its quota's fair share, or the job's own time varying.

Prints, per results directory and arm kind, the spread of log(predicted / measured) run time. ``--system-slowdown
K`` adds the replay's host speed ``sys:K`` (``policy.calibrate.host.system_speed``: the job's progress times
``1 − K · b(t)``, ``b`` the system CPUs' recorded busy share), so what is left is neither sharing nor that host.
``--by-company`` splits the jobs by whether a compute co-runner shared their node at any time (CFS bandwidth
control slices one quota between them every 100 ms; a job alone on its quota has nothing to be sliced against).

    python scripts/calibration_oracle_share.py results/lab/mr-pilot-2026-12-03 results/lab/aa-pilot-2026-12-02
"""

from __future__ import annotations

import argparse
import bisect
import csv
import math
import statistics
from collections import defaultdict
from pathlib import Path

from policy.calibrate.host import system_busy, system_speed
from policy.calibrate.labdata import read_jobs, read_nodes, read_system_ticks
from policy.sim.sharing import water_fill

COMPUTE = ("cpu", "train")
STEP_S = 0.1


def oracle_run_s(job, others, quota_m: float, *, catch_up: bool = False, speed: list = ()) -> float:
    """The job's run time with the co-runners as measured (module doc), stepped every ``STEP_S``. ``catch_up``:
    the job's cap is ``workloads``' budget since its start (``workloads/jobs/cpucap.py``), so while behind it
    wants the whole quota. ``speed``: (t_s, factor) per interval ending then, the host speed its progress is
    multiplied by (the nearest interval outside them)."""
    ends = [t for t, _ in speed]
    cap_m = min(quota_m, job.cpu_use_m)
    need = job.solo_s * cap_m  # millicore-seconds it used alone
    t, done = job.start_s, 0.0
    while done < need and t < job.start_s + 50 * job.solo_s:
        here = [o for o in others if o.start_s <= t < o.finish_s]
        light = sum(o.cpu_use_m for o in here if o.kind not in COMPUTE)
        behind = catch_up and done < cap_m * (t - job.start_s)
        wants = {0: quota_m if behind else cap_m,
                 **{k + 1: min(quota_m, o.cpu_use_m) for k, o in enumerate(here) if o.kind in COMPUTE}}
        asks = {0: max(job.cpu_request_m, 1.0), **{k + 1: max(o.cpu_request_m, 1.0)
                                                     for k, o in enumerate(here) if o.kind in COMPUTE}}
        factor = speed[min(bisect.bisect_left(ends, t), len(speed) - 1)][1] if speed else 1.0
        done += water_fill(max(quota_m - light, 0.0), wants, asks)[0] * STEP_S * factor
        t += STEP_S
    return t - job.start_s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", type=Path, help="lab results directories (jobs.csv, nodes.csv)")
    ap.add_argument("--catch-up", action="store_true", help="model the --cores cap as a budget since the job's start")
    ap.add_argument("--by-system-cpu", action="store_true",
                    help="also the measured / oracle run time by how busy the system CPU (cpu0, system.csv) was")
    ap.add_argument("--system-slowdown", type=float, default=0.0, metavar="K",
                    help="the host speed sys:K from system.csv (0: none)")
    ap.add_argument("--by-company", action="store_true",
                    help="also the measured / oracle run time of jobs alone on their node's quota against shared")
    args = ap.parse_args(argv)
    for d in args.results:
        jobs = [j for j in read_jobs(d / "jobs.csv") if math.isfinite(j.start_s) and math.isfinite(j.finish_s)]
        quota = {name: n.cpu_quota_m for name, n in read_nodes(d / "nodes.csv").items()}
        by_run = defaultdict(list)
        for j in jobs:
            by_run[(j.seed, j.arm, j.node)].append(j)
        errors, busy, company = defaultdict(list), defaultdict(list), defaultdict(list)
        ticks = _system_ticks(d / "system.csv") if args.by_system_cpu else {}
        speeds = ({run[:2]: system_speed(system_busy(t), args.system_slowdown)
                   for run, t in read_system_ticks(d / "system.csv").items()} if args.system_slowdown else {})
        for (seed, arm, node), here in by_run.items():
            for j in here:
                if j.kind in COMPUTE and j.exit_code == 0 and math.isfinite(j.solo_s):
                    others = [o for o in here if o is not j]
                    predicted = oracle_run_s(j, others, quota[node], catch_up=args.catch_up,
                                             speed=speeds.get((seed, arm), []))
                    errors[arm.partition("#")[0]].append(math.log(predicted / (j.finish_s - j.start_s)))
                    shared = any(o.kind in COMPUTE and o.start_s < j.finish_s and o.finish_s > j.start_s
                                 for o in others)
                    company["shared" if shared else "alone"].append(predicted / (j.finish_s - j.start_s))
                    share = _busy_share(ticks.get((seed, arm), []), j.start_s, j.finish_s)
                    if share is not None:
                        busy[min(int(share * 5), 4)].append(predicted / (j.finish_s - j.start_s))
        for arm, e in sorted(errors.items()):
            q = statistics.quantiles(e, n=10, method="inclusive") if len(e) > 1 else [e[0]] * 9
            absolute = [abs(math.exp(x) - 1) for x in e]
            a90 = statistics.quantiles(absolute, n=10, method="inclusive")[-1] if len(e) > 1 else absolute[0]
            print(f"{d.name} {arm:14} jobs {len(e):4}  log(pred/meas) p10 {q[0]:+.2f} median "  # noqa: T201
                  f"{statistics.median(e):+.2f} p90 {q[-1]:+.2f}  |error| median {statistics.median(absolute):.1%} "
                  f"p90 {a90:.1%}")
        for label, ratios in sorted(company.items()) if args.by_company else ():
            print(f"{d.name} compute jobs {label:6} on their node: jobs {len(ratios):4}  "  # noqa: T201
                  f"oracle / measured run time, median {statistics.median(ratios):.2f}")
        for k, ratios in sorted(busy.items()):
            print(f"{d.name} system CPU {20 * k}-{20 * k + 20} % busy: jobs {len(ratios):4}  "  # noqa: T201
                  f"oracle / measured run time, median {statistics.median(ratios):.2f}")
    return 0


def _system_ticks(path: Path) -> dict[tuple[int, str], list[tuple[float, int, int]]]:
    """cpu0's (t_s, busy ticks, idle ticks) samples of a ``system.csv`` per (seed, arm); {} without the file."""
    out: dict = defaultdict(list)
    if not path.exists():
        return out
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            if row["source"] == "cpu0":
                out[(int(row["seed"]), row["arm"])].append(
                    (float(row["t_s"]), int(row["busy_ticks"]), int(row["idle_ticks"])))
    return out


def _busy_share(samples: list, start_s: float, finish_s: float) -> float | None:
    inside = [s for s in samples if start_s <= s[0] <= finish_s]
    if len(inside) < 2:
        return None
    busy, idle = inside[-1][1] - inside[0][1], inside[-1][2] - inside[0][2]
    return busy / (busy + idle) if busy + idle > 0 else None


if __name__ == "__main__":
    raise SystemExit(main())
