"""Not in the registered plan (exploratory, run after it): the simulator's copy of the lab on the lab's OWN six
schedules (seeds 311-316: the jobs and submit times the lab ran, ``schedule-*.csv``) instead of its own 20 drawn
seeds, the student and the served model each scored as served (weight 5, ``band:0.02``, ``prefer-cool``, as
``policy.evaluate --served``), the default scheduler beside them. Does the simulator still rank the student better
when it sees the lab's arrivals? From the repository root:

    PYTHONPATH=. python results/policy/net-check/labseeds.py

writes ``labseeds.json`` and ``labseeds.md`` here. Each job is the simulator's version of its template (the
``lab-mr-under`` family's nodes and units: 250/500/500/1000 m, whole-core compute jobs, their ``under`` requests),
with the simulator's lognormal work noise drawn per replicate (``REPS`` per seed, seeded), so the per-seed figure
is a mean over replicates; ties broken from the replicate's seed.
"""

from __future__ import annotations

import csv
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from policy.decisionlog import read_log
from policy.grid import Case
from policy.labworld import TEMPLATES, cpu_request_m
from policy.served import Served
from policy.sim.engine import Simulator
from policy.sim.episode import run, scorer_choice, scorer_from_spec
from policy.sim.jobs import JobSpec
from policy.sim.labmix import WORK_SIGMA, demand, work

LAB = Path("results/lab/multi-resource-2026-12-07")
OUT = Path(__file__).parent
SEEDS = (311, 312, 313, 314, 315, 316)
REPS = 10
POLICIES = {"default-k8s": "default-k8s", "served": "dqn:policy/models/default.npz",
            "student": "dqn:results/policy/distill/models/student.npz"}


def lab_jobs(seed: int, rng: np.random.Generator) -> list[JobSpec]:
    with open(LAB / f"schedule-multi-resource-drs-under-{seed}.csv") as f:
        rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        t = TEMPLATES[r["template"]]  # the simulator's (unscaled) template, as lab-mr-under draws it
        d = demand(t)
        out.append(JobSpec(t.kind, work(t, 1.0) * float(np.exp(WORK_SIGMA * rng.standard_normal())),
                           (cpu_request_m(t.cpu_use_m, "under") / 1000, t.mem_use_mi / 1024), d,
                           submit=float(r["submit_s"]), expected=d))
    return out


def net_rows() -> dict:
    """The lab's ``model``-arm serve rows of net pods: how many, and how many had ``rn-small`` among the nodes
    kube-scheduler's filters left (by the count of nodes left)."""
    rows = [d for d, _ in read_log(LAB / "decisions").joined() if d["mode"] == "serve" and d["policy"] == "model"
            and d["name"].startswith("mod-un") and d["workload"] == "lab/net-p"]
    left = Counter(f"{'with' if 'rn-small' in d['nodes'] else 'without'} rn-small, {len(d['nodes'])} nodes"
                   for d in rows)
    return {"rows": len(rows), **dict(sorted(left.items()))}


def main() -> int:
    cfg = Case("lab-mr-under", "lab-multi-resource-under", 1.07, 0, "lab").sim_config(48)
    jct: dict[str, dict[int, list[float]]] = {p: {s: [] for s in SEEDS} for p in POLICIES}
    net_on: dict[str, Counter] = {p: Counter() for p in POLICIES}
    for seed in SEEDS:
        for rep in range(REPS):
            jobs = lab_jobs(seed, np.random.default_rng([seed, rep]))
            for name, spec in POLICIES.items():
                scorer = scorer_from_spec(spec, seed=seed)
                if name != "default-k8s":
                    scorer = Served(scorer)
                sim = Simulator(replace(cfg, n_jobs=len(jobs)), seed=seed * 100 + rep, jobs=jobs)
                res = run(sim, scorer_choice(scorer, np.random.default_rng(seed * 100 + rep)))
                jct[name][seed].append(res.mean_jct)
                net_on[name].update(node for kind, node in res.placements if kind == "net")
    per_seed = {s: {p: float(np.mean(jct[p][s])) for p in POLICIES} for s in SEEDS}
    ratio = {s: per_seed[s]["student"] / per_seed[s]["served"] for s in SEEDS}
    logs = np.log(list(ratio.values()))
    half = 2.571 * logs.std(ddof=1) / np.sqrt(len(logs))  # t(5) 97.5 %
    measured = {}
    with open(LAB / "jobs.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["arm"] in ("model", "default") and r["finish_s"] != ""]
    for s in SEEDS:
        for arm in ("model", "default"):
            measured.setdefault(s, {})[arm] = float(np.mean([float(r["jct_s"]) for r in rows
                                                             if int(r["seed"]) == s and r["arm"] == arm]))
    out = {"seeds": list(SEEDS), "reps": REPS, "mean_jct_sim": per_seed,
           "student_over_served_per_seed": ratio,
           "student_over_served": [float(np.exp(logs.mean())), float(np.exp(logs.mean() - half)),
                                   float(np.exp(logs.mean() + half))],
           "served_over_default_sim": float(np.exp(np.mean([np.log(per_seed[s]["served"] / per_seed[s]["default-k8s"])
                                                            for s in SEEDS]))),
           "lab_measured_mean_jct": measured,
           "model_over_default_lab": float(np.exp(np.mean([np.log(measured[s]["model"] / measured[s]["default"])
                                                           for s in SEEDS]))),
           "net_placements": {p: dict(sorted(c.items())) for p, c in net_on.items()},
           "lab_model_arm_net_serve_rows": net_rows()}
    (OUT / "labseeds.json").write_text(json.dumps(out, indent=1) + "\n")
    lines = ["| seed | sim default-k8s | sim served | sim student | student / served | lab default | lab model |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for s in SEEDS:
        p, m = per_seed[s], measured[s]
        lines.append(f"| {s} | {p['default-k8s']:.1f} | {p['served']:.1f} | {p['student']:.1f} | {ratio[s]:.3f} | "
                     f"{m['default']:.1f} | {m['model']:.1f} |")
    r = out["student_over_served"]
    lines += ["", f"student / served over the 6 lab schedules (geometric mean, t interval): {r[0]:.3f} "
              f"({r[1]:.3f}-{r[2]:.3f}); served / default-k8s in the simulator {out['served_over_default_sim']:.3f}, "
              f"model / default measured in the lab {out['model_over_default_lab']:.3f}", "",
              "net jobs placed, by node type, all replicates: " +
              "; ".join(f"{p} {dict(c)}" for p, c in out["net_placements"].items()), "",
              f"the lab's model arm, net pods' serve rows: {out['lab_model_arm_net_serve_rows']}"]
    (OUT / "labseeds.md").write_text("\n".join(lines) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
