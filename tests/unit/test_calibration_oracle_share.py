"""``scripts/calibration_oracle_share.py`` run as the command it is, on a results directory small enough to check by
hand: the quota split by request among the co-runners measured on the node, each capped at its use alone."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from policy.labworld import JOB_RUN_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "calibration_oracle_share.py"


def _job(job: str, kind: str, *, start: float, finish: float, solo: float, use: float, request: float) -> dict:
    row = dict.fromkeys(JOB_RUN_COLUMNS, "")
    row.update(seed=1, arm="default", variant="under", job=job, kind=kind, node="n", node_type="t",
               cpu_request_m=request, mem_request_mi=64, cpu_use_m=use, mem_use_mi=64, net_mbit=0, io_mbps=0,
               work=1, submit_s=start, start_s=start, finish_s=finish, exit_code=0, solo_s=solo,
               jct_s=finish - start, run_slowdown=(finish - start) / solo, slowdown=(finish - start) / solo,
               migrations=0)
    return row


def _run_dir(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    d.mkdir()
    (d / "nodes.csv").write_text("node,node_type,cpu_quota_m,mem_mi,net_mbit\nn,t,400,1024,0\n")
    rows = [
        # a and b share the 400 m node from 0 to 20 s with equal requests: 200 m each, so 10 s of work alone
        # (at 400 m) takes 20 s; a was measured at 20 s (exact), b at 25 s (the oracle's 20 s is 20 % short)
        _job("a", "cpu", start=0, finish=20, solo=10, use=400, request=80),
        _job("b", "cpu", start=0, finish=25, solo=10, use=400, request=80),
        # c alone after them, an io job beside it taking its 100 m: 300 m for 9 s of 300 m work alone: 9 s
        _job("c", "cpu", start=30, finish=39, solo=9, use=300, request=60),
        _job("d", "io", start=30, finish=50, solo=20, use=100, request=10),
    ]
    with (d / "jobs.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=JOB_RUN_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    return d


def _oracle(*args: str) -> str:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=True).stdout


def test_the_oracle_splits_the_quota_by_request_among_the_measured_co_runners(tmp_path: Path) -> None:
    d = _run_dir(tmp_path)
    out = _oracle(str(d))
    # b's oracle: 200 m while a runs (0-20 s): its 4,000 m-s are done at 20 s, against 25 s measured: log(20/25)
    # = -0.22, |error| 20 %; a and c exact. Inclusive deciles of (-0.22, 0, 0): p10 -0.18; of (0, 0, 0.2): p90 0.16
    assert out.startswith("run default") and "jobs    3" in out, out
    assert "p10 -0.18 median +0.00 p90 +0.00  |error| median 0.0% p90 16.0%" in out, out
    assert "--by-system-cpu" in _oracle("--help")


def test_the_host_speed_slows_the_oracle_and_company_is_told_apart(tmp_path: Path) -> None:
    d = _run_dir(tmp_path)
    # the system CPU 50 % busy throughout: at K = 0.4 every job progresses at 0.8 of its share. a keeps 200 m
    # while b is measured to run (to 25 s): 4,000 m-s at 160 m-s a second take 25 s, 1.25x its 20 s. b has
    # 200 m until a's measured 20 s (3,200 m-s), then 400 m (320 a second) for 2.5 s: 22.5 s, 0.9x its 25 s.
    # c: 9 s at 0.8 is 11.25 s, 1.25x (1.26 in 0.1 s steps)
    with (d / "system.csv").open("w") as f:
        f.write("seed,arm,variant,t_s,source,role,usage_ns,busy_ticks,idle_ticks\n")
        f.writelines(f"1,default,under,{t},cpu0,system,,{50 * t},{50 * t}\n" for t in range(0, 60))
    out = _oracle(str(d), "--system-slowdown", "0.4", "--by-company")
    assert "p10 -0.04 median +0.22 p90 +0.23  |error| median 25.0% p90 25.4%" in out, out
    # a and b shared the node (1.25 and 0.9), c ran beside an io job only
    assert "compute jobs alone  on their node: jobs    1  oracle / measured run time, median 1.26" in out, out
    assert "compute jobs shared on their node: jobs    2  oracle / measured run time, median 1.08" in out, out
