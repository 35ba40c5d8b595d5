"""The state measure of the plan (README.md): at how many of a policy's net-pod decisions the small node (the one
with the fast link) is infeasible by requests, in ``lab-mr-under`` and its lab-frame copies ``-isolated`` and
``-daemons``; and the student / served model ratio on the lab's own six schedules. From the repository root:

    PYTHONPATH=. python results/policy/sim-daemons/feasible.py      # writes feasible.json and feasible.md here

(a) the families' own 20 seeds at load 1.07, 48 jobs (the episodes ``policy.evaluate --split lab`` runs);
(b) the lab's schedules, seeds 311-316 (``schedule-*.csv``: its jobs and submit times), 10 work-noise replicates
each, as ``results/policy/net-check/labseeds.py`` builds them, each job in the family's frame (``-isolated`` and
``-daemons``: the template scaled by ``ISOLATED_SCALE`` and its request as the lab computes it, which is what the
lab's ``jobs.csv`` shows). The models are scored as served (``policy.served.Served``'s defaults: weight 5,
``band:0.02``, hot filter ``prefer-cool``), ``default-k8s`` as kube-scheduler alone. A decision is one the
simulator offered (some node fits); the lab's counterpart is a serve row (25 of the ``model`` arm's 62 net rows
lacked rn-small).
"""

from __future__ import annotations

import csv
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from policy.grid import Case
from policy.labworld import ISOLATED_SCALE, TEMPLATES, cpu_request_m, scaled_template
from policy.served import Served
from policy.sim.engine import Simulator
from policy.sim.episode import run, scorer_choice, scorer_from_spec
from policy.sim.jobs import JobSpec
from policy.sim.labmix import WORK_SIGMA, demand, work
from policy.splits import LAB, seeds

LAB_DIR = Path("results/lab/multi-resource-2026-12-07")
OUT = Path(__file__).parent
FAMILIES = ("lab-mr-under", "lab-mr-under-isolated", "lab-mr-under-daemons")
LAB_SEEDS = (311, 312, 313, 314, 315, 316)
REPS = 10
N_SEEDS, LOAD, JOBS = 20, 1.07, 48
POLICIES = {"default-k8s": "default-k8s", "served": "dqn:policy/models/default.npz",
            "student": "dqn:results/policy/distill/models/student.npz"}
LAB_SHARE = (25, 62)


def lab_jobs(seed: int, rng: np.random.Generator, node_scale: float) -> list[JobSpec]:
    with open(LAB_DIR / f"schedule-multi-resource-drs-under-{seed}.csv") as f:
        rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        t = scaled_template(TEMPLATES[r["template"]], node_scale)
        d = demand(t)
        out.append(JobSpec(t.kind, work(t, 1.0) * float(np.exp(WORK_SIGMA * rng.standard_normal())),
                           (cpu_request_m(t.cpu_use_m, "under", node_scale=node_scale) / 1000, t.mem_use_mi / 1024),
                           d, submit=float(r["submit_s"]), expected=d))
    return out


def recording(choose, tally: Counter):
    """``choose`` that also counts, per net pod offered, whether the small node was in the feasible mask."""
    def wrapped(snap, pod, mask):
        if pod.name.startswith("net-"):
            small = next(i for i, t in enumerate(snap.names) if t.rsplit("-", 1)[0].endswith("small"))
            tally["net decisions"] += 1
            tally["small infeasible"] += int(not mask[small])
        return choose(snap, pod, mask)
    return wrapped


def episode(cfg, seed: int, spec: str, name: str, tally: Counter, jobs=None, tie: int | None = None):
    scorer = scorer_from_spec(spec, seed=seed)
    if name != "default-k8s":
        scorer = Served(scorer)
    sim = Simulator(cfg, seed=seed, jobs=jobs)
    return run(sim, recording(scorer_choice(scorer, np.random.default_rng(seed if tie is None else tie)), tally))


def gmean_t(ratios: list[float], t975: float) -> list[float]:
    logs = np.log(ratios)
    half = t975 * logs.std(ddof=1) / np.sqrt(len(logs))
    return [float(np.exp(logs.mean())), float(np.exp(logs.mean() - half)), float(np.exp(logs.mean() + half))]


def main() -> int:
    out: dict = {"lab": {"small_offered_missing": LAB_SHARE[0], "net_serve_rows": LAB_SHARE[1],
                         "share": LAB_SHARE[0] / LAB_SHARE[1]}}
    for fam in FAMILIES:
        node_scale = ISOLATED_SCALE if fam != "lab-mr-under" else 1.0
        res: dict = {}
        for where in ("own_seeds", "lab_schedules"):
            tally = {p: Counter() for p in POLICIES}
            jct = {p: {} for p in POLICIES}
            if where == "own_seeds":
                for seed in seeds("lab", N_SEEDS):
                    cfg = Case(fam, LAB[fam].workload, LOAD, seed, "lab").sim_config(JOBS)
                    for p, spec in POLICIES.items():
                        jct[p][seed] = episode(cfg, seed, spec, p, tally[p]).mean_jct
            else:
                base = Case(fam, LAB[fam].workload, LOAD, 0, "lab").sim_config(JOBS)
                for seed in LAB_SEEDS:
                    per = {p: [] for p in POLICIES}
                    for rep in range(REPS):
                        jobs = lab_jobs(seed, np.random.default_rng([seed, rep]), node_scale)
                        cfg = replace(base, n_jobs=len(jobs))
                        for p, spec in POLICIES.items():
                            per[p].append(episode(cfg, seed * 100 + rep, spec, p, tally[p], jobs=jobs).mean_jct)
                    for p in POLICIES:
                        jct[p][seed] = float(np.mean(per[p]))
            keys = list(jct["served"])
            t975 = 2.093 if where == "own_seeds" else 2.571  # t(19), t(5)
            res[where] = {
                "net_small_infeasible": {p: {"share": c["small infeasible"] / max(c["net decisions"], 1), **c}
                                         for p, c in tally.items()},
                "student_over_served": gmean_t([jct["student"][k] / jct["served"][k] for k in keys], t975),
                "served_over_default": gmean_t([jct["served"][k] / jct["default-k8s"][k] for k in keys], t975),
                "student_over_default": gmean_t([jct["student"][k] / jct["default-k8s"][k] for k in keys], t975)}
        out[fam] = res
    (OUT / "feasible.json").write_text(json.dumps(out, indent=1) + "\n")
    lines = ["| family | episodes | small infeasible at net decisions: served / student / default-k8s "
             "| student / served | served / default-k8s |", "|---|---|---|---|---|"]
    for fam in FAMILIES:
        for where, r in out[fam].items():
            sh = r["net_small_infeasible"]
            cells = " / ".join(f"{sh[p]['small infeasible']}/{sh[p]['net decisions']} ({sh[p]['share']:.2f})"
                               for p in ("served", "student", "default-k8s"))
            so, sd = r["student_over_served"], r["served_over_default"]
            lines.append(f"| {fam} | {where} | {cells} | {so[0]:.3f} ({so[1]:.3f}-{so[2]:.3f}) | "
                         f"{sd[0]:.3f} ({sd[1]:.3f}-{sd[2]:.3f}) |")
    lines += ["", f"lab, model arm: rn-small missing from {LAB_SHARE[0]} of {LAB_SHARE[1]} net serve rows "
                  f"({LAB_SHARE[0] / LAB_SHARE[1]:.2f})"]
    (OUT / "feasible.md").write_text("\n".join(lines) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
