"""Step 1 of the plan (README.md): what the lab's job nodes had allocatable and already requested, and what its
jobs requested, in the lab's own (isolated) frame, read from its committed records; beside it what the simulator's
``lab-mr-under`` family gives the same nodes and jobs. From the repository root:

    PYTHONPATH=. python results/policy/sim-daemons/labstate.py      # writes labstate.json here, prints it

Descriptive only: no simulation. "rn-small infeasible by requests at the pod's start" is reconstructed from
``jobs.csv`` (the pods on rn-small at the pod's ``start_s``: ``start_j <= start_i < finish_j``, unfinished ones to
the end, plus the DaemonSet pod's requests as the decision rows show them), so it is approximate: binding precedes
``start_s`` by the container's start.
"""

from __future__ import annotations

import csv
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from policy.decisionlog import read_log
from policy.labworld import WORLDS
from policy.sim.cluster import NODE_TYPES
from policy.sim.labmix import sample_lab

LAB = Path("results/lab/multi-resource-2026-12-07")
OUT = Path(__file__).parent
JOB_NODES = ("rn-small", "rn-medium", "rn-medium-mem", "rn-large")


def lab_nodes() -> dict:
    with open(LAB / "nodes.csv") as f:
        nodes = {r["node"]: {"cpu_m": int(r["cpu_quota_m"]), "mem_mi": int(r["mem_mi"])} for r in csv.DictReader(f)}
    # The least each node ever showed requested, and its fewest pods, over every decision row: an empty node's
    # DaemonSet pods.
    least: dict[str, list[float]] = defaultdict(lambda: [np.inf, np.inf, np.inf])
    for d, _ in read_log(LAB / "decisions").joined():
        inp = d.get("inputs")
        if not inp:
            continue
        for k, at in enumerate(inp["at"]):
            name = d["nodes"][at]
            req, pods = inp["requested"][k], inp["pods"][k]
            least[name] = [min(least[name][0], req[0]), min(least[name][1], req[1]), min(least[name][2], pods)]
    for name in nodes:
        cpu, mem, pods = least[name]
        nodes[name].update(empty_requested_cpu_m=round(cpu * 1000, 3), empty_requested_mem_mi=round(mem * 1024, 3),
                           empty_pods=pods)
    return nodes


def lab_jobs() -> tuple[dict, list[dict]]:
    with open(LAB / "jobs.csv") as f:
        rows = list(csv.DictReader(f))
    req = Counter((r["kind"], int(r["cpu_request_m"]), int(r["mem_request_mi"])) for r in rows)
    return {f"{k} {c} m {m} Mi": n for (k, c, m), n in sorted(req.items())}, rows


def small_infeasible(rows: list[dict], daemon_cpu_m: float, daemon_mem_mi: float, alloc: dict) -> dict:
    """Per net serve row of the ``model`` arm: whether rn-small was offered, and whether by ``jobs.csv`` its
    requests left a net pod no room at the pod's start."""
    by_pod = {f"{r['run']}-{r['job']}": r for r in rows if "run" in r}
    serve = [d for d, _ in read_log(LAB / "decisions").joined() if d["mode"] == "serve" and d["policy"] == "model"
             and d["name"].startswith("mod-un") and d["workload"] == "lab/net-p"]
    out = Counter()
    for d in serve:
        me = by_pod.get(d["name"])
        offered = "rn-small" in d["nodes"]
        if me is None or me["start_s"] == "":
            out[f"offered={offered}, no start"] += 1
            continue
        t = float(me["start_s"])
        there = [r for r in rows if r["run"] == me["run"] and r["node"] == "rn-small" and r is not me
                 and r["start_s"] != "" and float(r["start_s"]) <= t
                 and (r["finish_s"] == "" or t < float(r["finish_s"]))]
        cpu = daemon_cpu_m + sum(int(r["cpu_request_m"]) for r in there)
        mem = daemon_mem_mi + sum(int(r["mem_request_mi"]) for r in there)
        fits = (cpu + int(me["cpu_request_m"]) <= alloc["cpu_m"]
                and mem + int(me["mem_request_mi"]) <= alloc["mem_mi"])
        out[f"offered={offered}, fits by requests at start={fits}"] += 1
    return {"net_serve_rows": len(serve), **dict(sorted(out.items()))}


def sim_side() -> dict:
    types = {t: NODE_TYPES[f"mr-{s.node_type}"] for t, s in zip(JOB_NODES, WORLDS["multi-resource"].nodes,
                                                                   strict=True)}
    nodes = {n: {"cpu_m": t.capacity[0] * 1000, "mem_mi": t.capacity[1] * 1024, "requested": 0} for n, t in
             types.items()}
    jobs = sample_lab("under", 2000, np.random.default_rng(0), world="multi-resource")
    req = Counter((j.kind, round(j.requests[0] * 1000), round(j.requests[1] * 1024)) for j in jobs)
    return {"nodes": nodes, "job_requests": {f"{k} {c} m {m} Mi": n for (k, c, m), n in sorted(req.items())}}


def main() -> int:
    nodes = lab_nodes()
    reqs, rows = lab_jobs()
    with open(LAB / "runs.csv") as f:
        run_of = {(r["seed"], r["arm"]): r["run_id"] for r in csv.DictReader(f)}
    for r in rows:
        if (r["seed"], r["arm"]) in run_of:
            r["run"] = run_of[(r["seed"], r["arm"])]
    small = nodes["rn-small"]
    out = {"lab": {"nodes": nodes, "job_requests": reqs,
                   "model_arm_net_rows": small_infeasible(rows, small["empty_requested_cpu_m"],
                                                          small["empty_requested_mem_mi"], small)},
           "sim_lab_mr_under": sim_side()}
    (OUT / "labstate.json").write_text(json.dumps(out, indent=1) + "\n")
    sys.stdout.write(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
