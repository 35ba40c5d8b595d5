"""The lab log's served rows re-scored over the kept nodes against the logged figures (README.md: the plan).

    PYTHONPATH=. python results/policy/log-context/study.py   # writes the JSON reports beside this file

Each figure is the log part of ``policy.promote`` (``log_summary`` with the arguments ``policy.promote.main`` gives
it for ``--log-rows served --nodes ... --as-served 5 --daemon-pods 0``), or ``policy.offline.model_estimates`` with
the same settings, once per ``--log-context``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from unittest import mock

import numpy as np

import policy.offline
from policy.baselines import make_scorer
from policy.decisionlog import read_log
from policy.features import Encoded, cluster_row, cluster_summary, feasible_mask, node_rows, pod_row
from policy.logged import CONTEXTS, LoggedDecision, encoding
from policy.model import ModelScorer, load_model
from policy.offline import estimate_of, model_estimates
from policy.promote import log_rows, log_summary
from policy.served import DEFAULT_HOT_FILTER
from policy.sim.calibration import default_params

HERE = Path(__file__).parent
LOG = Path("results/lab/multi-resource-2026-12-07/decisions")
PREVIOUS = Path("policy/models/archive/default-ebc0f11-s100000.npz")
STUDENT = Path("results/policy/distill/models/student.npz")
NODES = frozenset({"rn-small", "rn-medium", "rn-medium-mem", "rn-large"})
HOW = {"hot_filter": DEFAULT_HOT_FILTER, "nodes": NODES, "daemon_pods": 0}


def full_pool(pairs: list) -> list:
    """The rows whose kept nodes with inputs are all four workers: there ``kept`` is today's pool encoding."""
    def kept(d):
        i = d["inputs"]
        return {d["nodes"][a] for a, c in zip(i["at"], i["capacity"], strict=True) if c is not None} & NODES
    return [(d, o) for d, o in pairs if d["inputs"] is not None and kept(d) == NODES]


def moved(pairs: list, scorer, served_version: str) -> dict:
    """(a): ``scorer`` over ``kept`` against itself over ``logged`` (and the ``logged`` re-score against the
    recorded choice)."""
    rows = log_rows(pairs, "served", served_version)
    p = default_params()
    by = {c: model_estimates(rows, scorer, params=p, context=c, **HOW)[0] for c in CONTEXTS}
    both = sorted(by["logged"].keys() & by["kept"].keys())
    changed = [k for k in both if by["logged"][k][3] != by["kept"][k][3]]
    recorded = sum(by["logged"][k][3] != rows[k][0]["chosen"] for k in both)

    def kept_over_logged(keys):
        per = [(by["kept"][k][0], by["logged"][k][0], by["kept"][k][3] == by["logged"][k][3], by["kept"][k][3])
               for k in keys]
        e = asdict(estimate_of(per, {}, policy="kept over logged", params_label="active"))
        return {k: e[k] for k in ("n", "agreed", "value", "observed", "ratio", "lo", "hi")}

    moves: dict[str, int] = {}
    for k in changed:
        key = f"{by['logged'][k][3]} -> {by['kept'][k][3]}"
        moves[key] = moves.get(key, 0) + 1
    kinds = sorted({rows[k][0].get("workload") or "?" for k in changed})
    return {"rows": len(rows), "estimated": len(both), "logged_differs_from_recorded_chosen": recorded,
            "changed_picks": len(changed), "moves": dict(sorted(moves.items())),
            "changed_pods": kept_over_logged(changed), "all_pods": kept_over_logged(both),
            "changed_pods_by_workload": {w: kept_over_logged([k for k in changed
                                                              if (rows[k][0].get("workload") or "?") == w])
                                         for w in kinds},
            "by_context_vs_observed": {c: asdict(estimate_of(list(by[c].values()), {}, policy=scorer.name,
                                                             params_label="active")) for c in CONTEXTS}}


def across(pairs: list, candidate, candidate_context: str, baseline, baseline_context: str,
            served_version: str) -> dict:
    """Post hoc (not in the plan): ``candidate`` over one context against ``baseline`` over another, paired on
    the same pods (``estimate_of`` of (candidate, baseline) per pod: the same bootstrap as ``model_paired``)."""
    rows = log_rows(pairs, "served", served_version)
    p = default_params()
    c = model_estimates(rows, candidate, params=p, context=candidate_context, **HOW)[0]
    b = model_estimates(rows, baseline, params=p, context=baseline_context, **HOW)[0]
    per = [(c[k][0], b[k][0], c[k][3] == b[k][3], c[k][3]) for k in sorted(c.keys() & b.keys())]
    e = asdict(estimate_of(per, {}, policy=f"{candidate.name}@{candidate_context} / "
                                           f"{baseline.name}@{baseline_context}", params_label="active"))
    return {"what": e["policy"], "n": e["n"], "same_pick": e["agreed"], "candidate_value": e["value"],
            "baseline_value": e["observed"], "ratio": e["ratio"], "lo": e["lo"], "hi": e["hi"]}


def pool_capacity(pairs: list) -> np.ndarray:
    """(4,) the mean capacity of the four workers, each node's capacity read from the log (one value per node)."""
    caps: dict[str, set] = {}
    for d, _ in pairs:
        if d["inputs"] is not None:
            for a, c in zip(d["inputs"]["at"], d["inputs"]["capacity"], strict=True):
                if c is not None and d["nodes"][a] in NODES:
                    caps.setdefault(d["nodes"][a], set()).add(tuple(c))
    if set(caps) != NODES or any(len(c) != 1 for c in caps.values()):
        raise ValueError(f"each worker's capacity should be one value in the log: {caps}")
    return np.array([next(iter(caps[n])) for n in sorted(NODES)], dtype=np.float64).mean(axis=0)


def pool_encoding(mean_cap: np.ndarray):
    """Post hoc (not in the plan): a row's kept workers encoded as members of the four-worker pool, the workers
    kube-scheduler's filters left out assumed infeasible (so they move neither the feasible count nor the
    utilisation mean and std): the pool's mean capacity and size, the kept nodes' rows. It stands in for the
    ``kept`` context (``logged`` is left as it is)."""
    def encode_in_pool(d, *, context="logged", nodes=None):
        if context != "kept":
            return encoding(d, context=context, nodes=nodes)
        dec = encoding(d, context="kept", nodes=NODES)
        nodes, mask = node_rows(dec.snap, dec.pod, mean_cap=mean_cap,
                                max_usage_age=d["inputs"]["max_usage_age"]), feasible_mask(dec.snap, dec.pod)
        cluster = cluster_summary(cluster_row(nodes, mask), n_feasible=int(mask.sum()), n_nodes=len(NODES))
        enc = Encoded(nodes=nodes, pod=pod_row(dec.pod, mean_cap), cluster=cluster, mask=mask)
        return LoggedDecision(names=dec.names, snap=dec.snap, pod=dec.pod, enc=enc, daemon_pods=dec.daemon_pods)
    return encode_in_pool


def main() -> int:
    pairs = read_log(LOG).joined()
    previous, student = load_model(PREVIOUS), load_model(STUDENT)
    prev = ModelScorer(previous, name="served")
    cand = ModelScorer(student, name="candidate")
    da = make_scorer("demand-aware")
    version = previous.version
    out = {"log": str(LOG), "previous": str(PREVIOUS), "student": str(STUDENT), "settings": {
        "rows": "served", "served_version": version, "nodes": sorted(NODES), "hot_filter": DEFAULT_HOT_FILTER,
        "daemon_pods": 0, "params": "active", "draws": 1000, "seed": 0}}
    out["a_previous_kept_vs_logged"] = moved(pairs, prev, version)
    out["a_demand_aware_kept_vs_logged"] = moved(pairs, da, version)
    for name, candidate in (("b_student_vs_previous", cand), ("c_demand_aware_vs_previous", da)):
        out[name] = {c: log_summary(pairs, served_version=version, candidate=candidate, served=prev, rows="served",
                                    context=c, **HOW) for c in CONTEXTS}
    sub = full_pool(pairs)
    out["secondary_full_pool_rows"] = {c: log_summary(sub, served_version=version, candidate=cand, served=prev,
                                                      rows="served", context=c, **HOW) for c in CONTEXTS}
    out["post_hoc_student_kept_vs_previous_logged"] = across(pairs, cand, "kept", prev, "logged", version)
    with mock.patch.object(policy.offline, "encoding", pool_encoding(pool_capacity(pairs))):
        out["post_hoc_pool"] = {
            "what": "not in the plan: each row's kept workers encoded as members of the four-worker pool, the "
                    "workers kube-scheduler's filters left out assumed infeasible",
            "note": "in a_previous the key 'kept' is this pool encoding, compared with the logged one",
            "a_previous": moved(pairs, prev, version),
            "b_student_vs_previous": log_summary(pairs, served_version=version, candidate=cand, served=prev,
                                                 rows="served", context="kept", **HOW),
            "c_demand_aware_vs_previous": log_summary(pairs, served_version=version, candidate=da, served=prev,
                                                      rows="served", context="kept", **HOW)}
    (HERE / "study.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
