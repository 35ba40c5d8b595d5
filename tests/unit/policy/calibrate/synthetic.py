"""Synthetic lab results for the calibration tests: CSV files whose measurements follow known parameters."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import numpy as np

from policy.calibrate.labdata import LabJob, LabNode
from policy.calibrate.replay import PLAIN, Machine, replay
from policy.labworld import EVENT_COLUMNS, JOB_RUN_COLUMNS, NODE_COLUMNS, SYSTEM_COLUMNS
from policy.sim.sharing import ContentionParams

NODES = {"small": LabNode("small", "small", 250, 768, 20), "large": LabNode("large", "large", 1000, 2048, 80)}
KINDS = {"cpu": (1000, 64, 0, 0), "io": (400, 64, 0, 30), "net": (150, 64, 16, 0)}


def job(name: str, node: str = "small", *, kind: str = "cpu", start: float = 0.0, solo: float = 60.0,
        cpu_request: float = 100, use: tuple | None = None, seed: int = 1, arm: str = "default",
        migrations: int = 0, finish: float | None = None, exit_code: float = 0) -> LabJob:
    """A measured job; unless told, it finished as if alone (slowdown 1), which ``measured`` replaces."""
    cpu, mem, net, io = KINDS[kind] if use is None else use
    return LabJob(seed, arm, "", name, kind, node, NODES[node].node_type, cpu_request, 128, cpu, mem, net, io,
                  start, start, start + solo if finish is None else finish, exit_code, solo,
                  1.0 if finish is None else (finish - start) / solo, migrations)


def measured(jobs: list[LabJob], params: ContentionParams, *, noise: float = 0.0,
             rng: np.random.Generator | None = None, machine: Machine = PLAIN,
             speed: dict | None = None) -> list[LabJob]:
    """``jobs`` with finish times and run slowdowns as ``params`` predicts them (× lognormal ``noise``);
    ``speed``: per run, the host speed series ``replay`` takes."""
    out = []
    for run in sorted({j.run for j in jobs}):
        group = [j for j in jobs if j.run == run]
        preds = {p.job.job: p.predicted
                 for p in replay(group, NODES, [], params, machine=machine, speed=(speed or {}).get(run, ()))}
        for j in group:
            if j.job in preds:
                s = preds[j.job] * (float(np.exp(noise * rng.standard_normal())) if noise else 1.0)
                j = dataclasses.replace(j, finish_s=j.start_s + s * j.solo_s, run_slowdown=s)
            out.append(j)
    return out


def schedule(seeds, rng: np.random.Generator, n: int = 8) -> list[LabJob]:
    """Random placements and starts: ``n`` jobs per seed on the two nodes, requests from 50m to 500m."""
    jobs = []
    for seed in seeds:
        for k in range(n):
            kind = str(rng.choice(list(KINDS)))
            jobs.append(job(f"j{k}", str(rng.choice(list(NODES))), kind=kind, start=float(rng.uniform(0, 60)),
                            solo=float(rng.uniform(30, 90)), cpu_request=float(rng.choice([50, 100, 250, 500])),
                            seed=seed))
    return jobs


def write(directory: Path, jobs: list[LabJob], events: list[tuple] = ()) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "jobs.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(JOB_RUN_COLUMNS)
        for j in jobs:
            row = dataclasses.asdict(j) | {"work": 100, "submit_s": j.submit_s, "jct_s": "", "slowdown": ""}
            w.writerow(["" if isinstance(row[c], float) and row[c] != row[c] else row[c] for c in JOB_RUN_COLUMNS])
    with (directory / "nodes.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(NODE_COLUMNS)
        for n in NODES.values():
            w.writerow([n.node, n.node_type, n.cpu_quota_m, n.mem_mi, n.net_mbit])
    if events:
        with (directory / "events.csv").open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(EVENT_COLUMNS)
            w.writerows(events)
    return directory


def write_system(directory: Path, ticks: dict) -> Path:
    """A ``system.csv`` from per-run cumulative (t_s, busy, idle) ticks of one system CPU, with a node CPU and a
    cgroup row beside each read (both to be ignored)."""
    with (directory / "system.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(SYSTEM_COLUMNS)
        for (seed, arm, variant), reads in ticks.items():
            for t, busy, idle in reads:
                w.writerow([seed, arm, variant, t, "cpu0", "system", "", busy, idle])
                w.writerow([seed, arm, variant, t, "cpu1", "node", "", 7, 7])
                w.writerow([seed, arm, variant, t, "/drsched-system", "cgroup", 123, "", ""])
    return directory
