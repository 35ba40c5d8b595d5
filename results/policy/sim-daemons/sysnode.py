"""Not in the registered plan (exploratory, run after it): the second difference README.md's step 1 found. The
extender encodes a pod against its cache's whole cluster, ``rn-system`` included: every decision row of the lab
shows ``n_nodes`` 5 and ``mean_capacity`` [0.38, 1.55, 253.25, 500], and ``rn-system`` as (1 core, 2 GiB, 1250 MB/s,
500 MB/s) with 0.2 core and 0.25 GiB requested, one pod, no usage sample and 0.2 core, 0.25 GiB assumed (all 697
rows that kept it). The simulator's models see the four job nodes only. Here the models (not kube-scheduler's own
scoring, and not the hot filter, which see only the job nodes in the lab too) are shown that node beside the four,
in ``lab-mr-under-daemons`` (the lab's frame). From the repository root:

    PYTHONPATH=. python results/policy/sim-daemons/sysnode.py      # writes sysnode.json and sysnode.md here
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import feasible  # noqa: E402  (this directory's own script, not a package)

from policy.grid import Case  # noqa: E402
from policy.labworld import ISOLATED_SCALE  # noqa: E402
from policy.served import Served  # noqa: E402
from policy.sim.engine import Simulator  # noqa: E402
from policy.sim.episode import run, scorer_choice, scorer_from_spec  # noqa: E402
from policy.splits import LAB, seeds  # noqa: E402
from policy.state import ClusterSnapshot  # noqa: E402

OUT = Path(__file__).parent
FAMILY = "lab-mr-under-daemons"
SYSTEM = dict(capacity=(1.0, 2.0, 1250.0, 500.0), requested=(0.2, 0.25), usage=(np.nan,) * 4, usage_age=np.inf,
              assumed=(0.2, 0.25, 0.0, 0.0), pods=1.0, max_pods=110.0, ready=True)


class WithSystemNode:
    """``scorer`` shown ``rn-system`` after the snapshot's nodes, as the extender's cache shows it; the scores of
    the snapshot's own nodes."""

    def __init__(self, scorer) -> None:
        self.scorer, self.name = scorer, scorer.name

    def score(self, snap: ClusterSnapshot, pod) -> np.ndarray:
        n = len(snap.names)
        ext = replace(snap, names=(*snap.names, "rn-system"),
                      **{k: np.concatenate([getattr(snap, k), np.asarray([v], dtype=getattr(snap, k).dtype)])
                         for k, v in SYSTEM.items()})
        return self.scorer.score(ext, pod)[:n]


def episode(cfg, seed, spec, name, tally, *, system: bool, jobs=None):
    scorer = scorer_from_spec(spec, seed=seed)
    if name != "default-k8s":
        scorer = Served(WithSystemNode(scorer) if system else scorer)
    sim = Simulator(cfg, seed=seed, jobs=jobs)
    return run(sim, feasible.recording(scorer_choice(scorer, np.random.default_rng(seed)), tally))


def main() -> int:
    out = {}
    for system in (False, True):
        for where in ("own_seeds", "lab_schedules"):
            tally = {p: Counter() for p in feasible.POLICIES}
            net_on = {p: Counter() for p in feasible.POLICIES}
            jct: dict[str, dict[int, float]] = {p: {} for p in feasible.POLICIES}
            if where == "own_seeds":
                for seed in seeds("lab", feasible.N_SEEDS):
                    cfg = Case(FAMILY, LAB[FAMILY].workload, feasible.LOAD, seed, "lab").sim_config(feasible.JOBS)
                    for p, spec in feasible.POLICIES.items():
                        res = episode(cfg, seed, spec, p, tally[p], system=system)
                        jct[p][seed] = res.mean_jct
                        net_on[p].update(node for kind, node in res.placements if kind == "net")
            else:
                base = Case(FAMILY, LAB[FAMILY].workload, feasible.LOAD, 0, "lab").sim_config(feasible.JOBS)
                for seed in feasible.LAB_SEEDS:
                    per: dict[str, list[float]] = {p: [] for p in feasible.POLICIES}
                    for rep in range(feasible.REPS):
                        jobs = feasible.lab_jobs(seed, np.random.default_rng([seed, rep]), ISOLATED_SCALE)
                        cfg = replace(base, n_jobs=len(jobs))
                        for p, spec in feasible.POLICIES.items():
                            res = episode(cfg, seed * 100 + rep, spec, p, tally[p], system=system, jobs=jobs)
                            per[p].append(res.mean_jct)
                            net_on[p].update(node for kind, node in res.placements if kind == "net")
                    for p in feasible.POLICIES:
                        jct[p][seed] = float(np.mean(per[p]))
            keys = list(jct["served"])
            t975 = 2.093 if where == "own_seeds" else 2.571
            out[f"{'with' if system else 'without'} rn-system, {where}"] = {
                "student_over_served": feasible.gmean_t([jct["student"][k] / jct["served"][k] for k in keys], t975),
                "served_over_default": feasible.gmean_t([jct["served"][k] / jct["default-k8s"][k] for k in keys],
                                                        t975),
                "student_over_default": feasible.gmean_t([jct["student"][k] / jct["default-k8s"][k] for k in keys],
                                                         t975),
                "net_small_infeasible": {p: c["small infeasible"] / max(c["net decisions"], 1)
                                         for p, c in tally.items()},
                "net_placements": {p: dict(sorted(c.items())) for p, c in net_on.items()}}
    (OUT / "sysnode.json").write_text(json.dumps(out, indent=1) + "\n")
    lines = ["| models shown | student / served | served / default-k8s | student / default-k8s | small infeasible "
             "(served) | net jobs placed, served model |", "|---|---|---|---|---|---|"]
    for k, r in out.items():
        f = [r[x] for x in ("student_over_served", "served_over_default", "student_over_default")]
        lines.append(f"| {k} | " + " | ".join(f"{a:.3f} ({b:.3f}-{c:.3f})" for a, b, c in f) +
                     f" | {r['net_small_infeasible']['served']:.2f} | {r['net_placements']['served']} |")
    (OUT / "sysnode.md").write_text("\n".join(lines) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
