"""How much of the system CPU's load do the lab's own jobs cause? The check that host ``sys:K`` does not take its
input from the outcome it predicts.

Why it exists: ``policy.calibrate.host.system_speed`` slows node jobs by the system CPUs' recorded busy share, and a
job's own pod work (kubelet, containerd, its shim) runs there too, so a job that ran longer could have made the
system CPU busier. Per ``system.csv`` sample interval of each run this fits, by least squares, the system CPUs'
busy share on the number of jobs running through the interval and the number started or finished in it or the
second before, and reports the node runtimes' cgroups (each node's kubelet and containerd) against the busy time.

    python scripts/system_cpu_attribution.py results/lab/multi-resource-2026-12-07 results/lab/mr-pilot-2026-12-03
"""

from __future__ import annotations

import argparse
import csv
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from policy.calibrate.labdata import read_jobs

EDGE_S = 2.0
"""A start or finish counts for the interval it falls in and for the one after (kubelet reacts within a second)."""


def intervals(path: Path) -> dict[tuple[int, str], list[tuple[float, float, float, float]]]:
    """Per (seed, arm), each interval between reads: (start, end, system CPUs' busy share, node runtimes' cores)."""
    reads: dict = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            read = reads[(int(r["seed"]), r["arm"])][float(r["t_s"])]
            if r["role"] == "system":
                read[0] += int(r["busy_ticks"])
                read[1] += int(r["idle_ticks"])
            elif r["role"] == "cgroup" and r["source"].endswith(".runtime"):
                read[2] += int(r["usage_ns"])
    out = {}
    for run, by_t in reads.items():
        ts = sorted(by_t)
        rows = []
        for a, b in zip(ts, ts[1:], strict=False):
            busy, idle = by_t[b][0] - by_t[a][0], by_t[b][1] - by_t[a][1]
            if busy >= 0 and idle >= 0 and busy + idle > 0:
                rows.append((a, b, busy / (busy + idle), (by_t[b][2] - by_t[a][2]) / 1e9 / (b - a)))
        out[run] = rows
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", type=Path, help="lab results directories (system.csv, jobs.csv)")
    args = ap.parse_args(argv)
    for d in args.results:
        jobs = defaultdict(list)
        for j in read_jobs(d / "jobs.csv"):
            jobs[(j.seed, j.arm)].append(j)
        x, y, runtime = [], [], []
        for run, rows in intervals(d / "system.csv").items():
            for a, b, busy, rt in rows:
                js = jobs.get(run, [])
                running = sum(1 for j in js if j.start_s <= a and not (math.isfinite(j.finish_s) and j.finish_s < b))
                edges = sum(1 for j in js for e in (j.start_s, j.finish_s) if math.isfinite(e) and a - EDGE_S < e <= b)
                x.append((1.0, running, edges))
                y.append(busy)
                runtime.append(rt)
        if not y:
            print(f"{d.name}: no system CPU samples")  # noqa: T201
            continue
        coef, *_ = np.linalg.lstsq(np.array(x), np.array(y), rcond=None)
        mean = float(np.mean(y))
        print(f"{d.name}: intervals {len(y)}; system CPU busy mean {mean:.3f}; node runtimes "  # noqa: T201
              f"{1000 * np.mean(runtime):.0f} m ({np.mean(runtime) / mean:.0%} of the busy time); busy = "
              f"{coef[0]:.3f} {coef[1]:+.4f} x running jobs {coef[2]:+.4f} x starts and finishes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
