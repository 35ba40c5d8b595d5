"""Co-located jobs under a node's CPU quota, measured with the real node's cgroup layout but no cluster.

A real node (``harness.nodes``) is a cgroup v1 root ``/<node>`` whose ``cpu.cfs_quota_us`` confines all its
pods; kubelet puts each Burstable pod in ``kubepods/burstable/pod<uid>`` with ``cpu.shares`` = request ×
1024 / 1000 (at least 2). This bench builds that tree under ``/sys/fs/cgroup/cpu/drsched-calib/``, runs real
``python -m workloads`` jobs in it (each alone, for its solo runtime and CPU, right before every seeded mix
of 2-3 at once with different requests and starts) and writes the lab's ``jobs.csv`` / ``nodes.csv`` so
``python -m policy.calibrate`` reads them. Node quotas, job arguments and file columns are the lab's
(``policy.labworld``). It answers the calibration's first question (how a saturated quota is divided) in
minutes and without the real-node cluster lock; the host's other load is noise it does not control. Needs
root and cgroup v1. Asserts nothing.

    python bench/cgroup_contention.py --out /tmp/cgcal --seeds 1-8
"""

from __future__ import annotations

import argparse
import csv
import logging
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from policy.labworld import JOB_RUN_COLUMNS, NODE_COLUMNS, REAL_NODES, TEMPLATES

ROOT = Path(__file__).resolve().parent.parent
CG = Path("/sys/fs/cgroup/cpu/drsched-calib")
QUOTAS = tuple(s.cpu_millis for s in REAL_NODES if s.node_type in ("small", "medium"))  # millicores
REQUESTS = (25, 100, 250)
KINDS = {"cpu": TEMPLATES["cpu-s"], "io": TEMPLATES["io-m"]}
log = logging.getLogger("cgroup_contention")


def units(kind: str, quota: int) -> int:
    """About 10 s alone: a cpu unit is ~6.7 ms of a whole core; an io unit is 1 MiB at 4 MiB/s."""
    return max(1, round(1500 * quota / 1000)) if kind == "cpu" else 40


def make_node(quota: int) -> Path:
    node = CG / f"q{quota}"
    node.mkdir(parents=True, exist_ok=True)
    (node / "cpu.cfs_period_us").write_text("100000")
    (node / "cpu.cfs_quota_us").write_text(str(quota * 100))
    return node


def start(node: Path, name: str, kind: str, request: int, n_units: int, work: Path) -> subprocess.Popen:
    pod = node / "kubepods" / "burstable" / f"pod-{name}"
    pod.mkdir(parents=True, exist_ok=True)
    (pod / "cpu.shares").write_text(str(max(2, request * 1024 // 1000)))
    state = work / name
    argv = [sys.executable, "-m", "workloads", kind, f"--state-dir={state}", f"--units={n_units}",
            "--checkpoint-every=0", *KINDS[kind].args]
    # join the pod's cgroup before exec, so the job's very first instruction is charged to the node
    return subprocess.Popen(["sh", "-c", f'echo $$ > {pod}/tasks && exec "$@"', "sh", *argv], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait(procs: dict[str, subprocess.Popen], t0: float) -> dict[str, tuple[float, int, float]]:
    """Per job: finish offset, exit code, CPU seconds (from the kernel's rusage of the child)."""
    out = {}
    pids = {p.pid: name for name, p in procs.items()}
    while pids:
        pid, status, usage = os.wait4(-1, 0)
        if pid in pids:
            out[pids.pop(pid)] = (time.monotonic() - t0, os.waitstatus_to_exitcode(status),
                                  usage.ru_utime + usage.ru_stime)
    return out


def run_mix(jobs: list[dict], work: Path) -> dict[str, tuple[float, int, float]]:
    """Start each job at its offset (all on their node), wait for all; per job (finish s, exit, cpu s)."""
    t0 = time.monotonic()
    procs = {}
    for j in sorted(jobs, key=lambda j: j["start_s"]):
        time.sleep(max(0.0, t0 + j["start_s"] - time.monotonic()))
        procs[j["job"]] = start(make_node(j["quota"]), j["job"], j["kind"], j["cpu_request_m"], j["work"], work)
    return wait(procs, t0)


def remove_tree() -> None:
    """rmdir the bench's cgroups, deepest first (a cgroup directory goes once its tasks have exited)."""
    for d in sorted((d for d in CG.rglob("*") if d.is_dir()), key=lambda d: len(d.parts), reverse=True):
        d.rmdir()
    if CG.exists():
        CG.rmdir()


def mix(seed: int) -> list[dict]:
    rng = random.Random(f"cgroup-calib:{seed}")
    quota = rng.choice(QUOTAS)
    k = rng.choice((2, 3))
    jobs = []
    for i in range(k):
        kind = rng.choice(("cpu", "cpu", "io"))
        jobs.append({"job": f"s{seed}j{i}", "kind": kind, "quota": quota, "cpu_request_m": rng.choice(REQUESTS),
                     "work": units(kind, quota), "start_s": 0.0 if i == 0 else rng.choice((0.0, 0.0, 3.0))})
    return jobs


def measure(mixes: dict[int, list[dict]], *, paired: bool) -> list[dict]:
    """Solo runs of every (kind, quota) the mixes use — once up front, or (``paired``) again right before
    each mix, so the host's load drifts less between a job's solo run and its mix — then each mix."""
    solo: dict[tuple[str, int], tuple[float, float]] = {}

    def solos(pairs: set[tuple[str, int]], tmp: Path) -> None:
        for kind, quota in sorted(pairs):
            name = f"solo-{kind}-{quota}-{len(rows)}"  # a fresh state dir: a job whose output exists does nothing
            (fin, code, cpu) = run_mix([{"job": name, "kind": kind, "quota": quota, "cpu_request_m": 100,
                                         "work": units(kind, quota), "start_s": 0.0}], tmp)[name]
            solo[(kind, quota)] = (fin, 1000 * cpu / fin)
            log.info("solo kind=%s quota_m=%d seconds=%.2f cpu_m=%.0f exit=%d", kind, quota, fin, 1000 * cpu / fin,
                     code)

    rows = []
    with tempfile.TemporaryDirectory(prefix="cgcal-") as tmp:
        if not paired:
            solos({(j["kind"], j["quota"]) for js in mixes.values() for j in js}, Path(tmp))
        for seed, jobs in mixes.items():
            if paired:
                solos({(j["kind"], j["quota"]) for j in jobs}, Path(tmp))
            done = run_mix(jobs, Path(tmp))
            for j in jobs:
                fin, code, _ = done[j["job"]]
                solo_s, cpu_m = solo[(j["kind"], j["quota"])]
                rows.append({"seed": seed, "arm": "cgroup", "variant": "paired" if paired else "mix", "job": j["job"],
                             "kind": j["kind"], "node": f"q{j['quota']}", "node_type": f"q{j['quota']}",
                             "cpu_request_m": j["cpu_request_m"], "mem_request_mi": 64, "cpu_use_m": round(cpu_m),
                             "mem_use_mi": 64, "net_mbit": 0,
                             "io_mbps": round(KINDS["io"].io_mbps, 2) if j["kind"] == "io" else 0,
                             "work": j["work"], "submit_s": j["start_s"], "start_s": j["start_s"],
                             "finish_s": round(fin, 3), "exit_code": code, "solo_s": round(solo_s, 3),
                             "jct_s": round(fin - j["start_s"], 3),
                             "run_slowdown": round((fin - j["start_s"]) / solo_s, 4),
                             "slowdown": round((fin - j["start_s"]) / solo_s, 4), "migrations": 0})
                log.info("job seed=%d job=%s kind=%s quota_m=%d request_m=%d run_slowdown=%.3f", seed, j["job"],
                         j["kind"], j["quota"], j["cpu_request_m"], rows[-1]["run_slowdown"])
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="directory for jobs.csv and nodes.csv")
    p.add_argument("--seeds", default="1-8", help="mixes to run, 'a-b' or comma-separated [1-8]")
    p.add_argument("--solo-once", action="store_true",
                   help="measure each (kind, quota) alone once up front instead of right before every mix")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    lo, _, hi = args.seeds.partition("-")
    seeds = list(range(int(lo), int(hi) + 1)) if hi else [int(s) for s in args.seeds.split(",")]
    mixes = {s: mix(s) for s in seeds}
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        rows = measure(mixes, paired=not args.solo_once)
    finally:
        remove_tree()
    with (args.out / "jobs.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=JOB_RUN_COLUMNS)  # no checkpoints: no cost columns
        w.writeheader()
        w.writerows(rows)
    with (args.out / "nodes.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(NODE_COLUMNS)
        w.writerows((f"q{q}", f"q{q}", q, 1024, 0) for q in QUOTAS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
