"""``scripts/system_cpu_attribution.py`` run as the command it is, on a run whose system CPU load is made from its
jobs by a known rule: the fit gives the rule back."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from policy.labworld import JOB_RUN_COLUMNS, SYSTEM_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "system_cpu_attribution.py"


def test_the_fit_gives_back_how_busy_each_running_job_makes_the_system_cpu(tmp_path: Path) -> None:
    # jobs over [start, finish): 0-3 running at a time, starts and finishes only on whole seconds 0, 10, 20, ...
    spans = [(0, 40), (10, 60), (20, 30), (50, 80)]
    with (tmp_path / "jobs.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=JOB_RUN_COLUMNS)
        w.writeheader()
        for k, (a, b) in enumerate(spans):
            w.writerow({**dict.fromkeys(JOB_RUN_COLUMNS, ""), "seed": 1, "arm": "default", "variant": "under",
                        "job": f"j{k}", "kind": "cpu", "node": "n", "node_type": "t", "cpu_request_m": 100,
                        "mem_request_mi": 64, "cpu_use_m": 100, "mem_use_mi": 64, "net_mbit": 0, "io_mbps": 0,
                        "start_s": a, "finish_s": b, "exit_code": 0, "migrations": 0})
    # busy share 0.1 + 0.05 per running job, +0.2 in an interval with a start or finish (or just after one); the
    # runtimes' cgroup at a steady 50 m
    busy = idle = 0
    with (tmp_path / "system.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(SYSTEM_COLUMNS)
        for t in range(0, 90):
            w.writerow([1, "default", "under", t + 0.5, "cpu0", "system", "", busy, idle])
            w.writerow([1, "default", "under", t + 0.5, "/n.runtime", "cgroup", 50_000_000 * t, "", ""])
            a = t + 0.5
            running = sum(1 for s, e in spans if s <= a and not e < a + 1)
            edges = sum(1 for s, e in spans for x in (s, e) if a - 2 < x <= a + 1)
            share = 0.1 + 0.05 * running + 0.2 * edges
            busy, idle = busy + round(1000 * share), idle + 1000 - round(1000 * share)
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=True).stdout
    assert "node runtimes 50 m" in out, out
    assert "busy = 0.100 +0.0500 x running jobs +0.2000 x starts and finishes" in out, out
