"""Shadow mode's rows and results are bitwise what the plain computation gives, on random clusters and events.

``ShadowRecorder.on_binding`` saves work: its row cache keeps the encoded rows across bindings (only the changed
nodes re-encoded: binds, usage samples between bindings), the predicted slowdowns on the two nodes alone
(``policy.predicted``), the label check through a ``kube.affinity.LabelIndex``, the encoder's feasibility reused
by the filter (heat alone judged again) and, with its mean capacity, by the row's inputs, no 0-10 mapping over the
feasible nodes (only the one over the allowed nodes the row records). Each must leave what is recorded as it was.
Here every binding of random event sequences (bindings with and without node selectors and affinity, tolerations,
node label and taint changes, usage samples before and between bindings) is also computed the plain way, from the
same cache view at the same clock: the score of every node of the pod's context -- the nodes whose taints it
tolerates, and the actual one, picked node by node -- over that snapshot (``extender.decide.score``), the label
check node by node (``NodeRequirement.matches``), the slowdowns with estimated usage and jobs over every node; the
decision row built from them must be byte for byte the row the recorder queued, and its result the same.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace

import numpy as np
import orjson
import pytest

from extender.decide import Thresholds, heuristic_policy, model_policy, passes_filter, score
from extender.kube_index import IndexingWatcher
from extender.pod_index import PodIndex
from extender.recording import Recording
from extender.settings import build_settings
from extender.telemetry import Telemetry
from kube.affinity import node_requirement
from kube.cache import ClusterCache, NodeUsage
from kube.objects import NodeInfo, pod_key, tolerates
from policy.baselines import make_scorer
from policy.decisionlog import DecisionInputs, decision_row
from policy.features import estimated_usage
from policy.model import load_model
from policy.predicted import slowdown_on, without_daemons
from policy.served import served_choice, to_extender_scores
from policy.state import PodView

CLOCK = 1_765_000_000.0
ZONES, POOLS = ("a", "b", "c"), ("p0", "p1")


def plain(shadow, pod, prior, now):
    """What the recorder records for this binding, computed the plain way (module doc): (result, row bytes)."""
    key = pod_key(pod)
    uid = key[2] or f"{key[0]}/{key[1]}"
    actual = str(pod["spec"]["nodeName"])
    view = shadow.cache.view()
    row = view.index.get(actual)
    if row is None:
        return None
    # the context: the nodes whose taints the pod tolerates, and the actual node, judged node by node
    ctx = np.flatnonzero([tolerates(pod, view.taints.get(n, ())) or n == actual for n in view.names])
    snap, row = view.snapshot(now, ctx), int(np.searchsorted(ctx, row))
    pv = PodView(requests=prior.requests, demand=prior.demand, demand_source=prior.demand_source, name=key[1],
                 workload=shadow.workload_of(pod))
    scored = score(snap, pv, shadow.policy, max_usage_age=shadow.max_usage_age)
    blocked = np.zeros(len(view.names), dtype=bool)
    for name, taints in view.taints.items():
        blocked[view.index[name]] = not tolerates(pod, taints)
    need = node_requirement(pod)
    if need is not None:
        blocked |= np.array([not need.matches(view.labels.get(n, {})) for n in view.names], dtype=bool)
    blocked = blocked[ctx]
    daemon_pods = None if view.daemon_pods is None else view.daemon_pods[ctx]
    usable = replace(snap, ready=snap.ready & ~blocked) if blocked.any() else snap
    allowed = scored.enc.mask & np.isfinite(scored.raw) & \
        passes_filter(usable, pv, shadow.thresholds, shadow.max_usage_age)
    final = to_extender_scores(scored.raw, allowed, shadow.policy.mapping)
    chosen = served_choice(scored.raw, allowed, row)
    spec = pod.get("spec") or {}
    result = {"pod": f"{key[0]}/{key[1]}", "scheduler": spec.get("schedulerName") or "default-scheduler",
              "actual": actual, "chosen": None if chosen is None else snap.names[chosen], "at": round(now, 3)}
    slowdown = gain = None
    if chosen is not None:
        est = estimated_usage(snap, shadow.max_usage_age)
        jobs = without_daemons(snap, 0 if daemon_pods is None else daemon_pods)
        s_actual, s_own = (slowdown_on(jobs, pv, i, est, shadow.params) for i in (row, chosen))
        slowdown, gain = {actual: s_actual, snap.names[chosen]: s_own}, s_actual - s_own
        result.update(agree=chosen == row, slowdown=slowdown, predicted_gain=round(gain, 6))
    logged = decision_row(
        ts=now, replica=shadow.replica, mode="shadow", pod=(key[0], key[1], uid), requests=prior.requests,
        demand=prior.demand, demand_source=prior.demand_source, workload=pv.workload, policy=shadow.policy.name,
        model_version=shadow.policy.version, nodes=snap.names, scores=final, raw=scored.raw,
        chosen=result["chosen"], actual=actual, scheduler=result["scheduler"], slowdown=slowdown,
        predicted_gain=gain, keep=shadow.keep, keep_inputs=shadow.keep_inputs,
        inputs=DecisionInputs(snap=snap, cluster=scored.enc.cluster, max_usage_age=shadow.max_usage_age,
                              blocked=blocked if blocked.any() else None, daemon_pods=daemon_pods))
    return result, orjson.dumps(logged, option=orjson.OPT_SERIALIZE_NUMPY)


def node(rng, i, *, labels=None):
    cap = rng.choice(((4.0, 16.0, 1250.0, 500.0), (8.0, 32.0, 125.0, 200.0), (2.0, 4.0, 1250.0, 500.0)))
    taints = (("dedicated", "sys", "NoSchedule"),) if rng.random() < 0.15 else ()
    if labels is None:
        labels = {k: v for k, v in (("zone", rng.choice(ZONES)), ("pool", rng.choice(POOLS)),
                                    ("kubernetes.io/hostname", f"n{i}")) if rng.random() < 0.85}
    return NodeInfo(name=f"n{i}", capacity=cap, max_pods=rng.choice((3, 110)), ready=rng.random() < 0.9,
                    taints=taints, labels=labels)


def pending(rng, i):
    pod = {"metadata": {"name": f"p{i}", "namespace": rng.choice(("team", "jobs")), "uid": f"uid-{i}"},
           "spec": {"schedulerName": "default-scheduler", "containers": [{"name": "main", "resources": {
               "requests": {"cpu": rng.choice(("100m", "1", "3")), "memory": rng.choice(("256Mi", "4Gi"))}}}]},
           "status": {"phase": "Pending"}}
    spec = pod["spec"]
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"zone": rng.choice(ZONES)}
    if rng.random() < 0.3:
        op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": rng.choice(("zone", "pool")), "operator": op,
                                   **({"values": rng.sample(ZONES + POOLS, 2)} if op in ("In", "NotIn") else {})}]},
            *([{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["p1"]}]}] if rng.random() < 0.3
              else [])]}}}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    return pod


@pytest.mark.parametrize("policy", ["model", "demand-aware"])
@pytest.mark.parametrize("seed", range(10))
def test_shadowed_rows_and_results_are_bitwise_the_plain_computation(tmp_path, monkeypatch, policy, seed):
    monkeypatch.setattr(time, "time", lambda: CLOCK)  # the recorder's clock and the plain one agree
    rng = random.Random(seed)
    cache = ClusterCache(assume_grace_s=0.0, clock=lambda: CLOCK)
    n = rng.randint(3, 40)
    for i in range(n):
        cache.upsert_node(node(rng, i))
    cache.apply_usage({f"n{i}": NodeUsage(rng.uniform(0, 6), rng.uniform(0, 20), rng.uniform(0, 500), 0.0,
                                          CLOCK - rng.choice((1.0, 5.0, 500.0)))
                       for i in range(n) if rng.random() < 0.8})
    settings = build_settings(shadow=True, policy=policy, decision_log_input_nodes=rng.choice((0, 4)),
                              decision_log_nodes=rng.choice((0, 5)))
    served = model_policy(load_model("policy/models/default.npz")) if policy == "model" else \
        heuristic_policy(make_scorer(policy))
    telemetry = Telemetry()
    rec = Recording(settings, cache=cache, policy=served, telemetry=telemetry, thresholds=Thresholds())
    queued, expected = [], []
    rec.shadow.submit = lambda build, *args: queued.append(orjson.dumps(build(*args),
                                                                        option=orjson.OPT_SERIALIZE_NUMPY))

    def observe(event_type, pod, prior):
        if rec.shadow.is_binding(event_type, pod, prior):
            expected.append(plain(rec.shadow, pod, prior, CLOCK))
        rec.observe_pod(event_type, pod, prior)

    watcher = IndexingWatcher(None, cache, settings, store=None, telemetry=telemetry,
                              index=PodIndex(selector={}, port=1), observer=observe)
    results = []
    for i in range(25):
        if rng.random() < 0.15:  # a node's labels or taints change (a new label view), or it is replaced
            cache.upsert_node(node(rng, rng.randrange(n)))
        if rng.random() < 0.2:  # new usage samples on a few nodes (some stale), between bindings
            cache.apply_usage({f"n{j}": NodeUsage(rng.uniform(0, 6), rng.uniform(0, 20), rng.uniform(0, 500), 0.0,
                                                  CLOCK - rng.choice((1.0, 500.0)))
                               for j in rng.sample(range(n), rng.randint(1, 3))})
        pod = pending(rng, i)
        watcher._apply("pods", "ADDED", pod)
        bound = {**pod, "spec": {**pod["spec"], "nodeName": f"n{rng.randrange(n)}"}, "status": {"phase": "Running"}}
        before = len(rec.shadow._recent)
        watcher._apply("pods", "MODIFIED", bound)
        if len(rec.shadow._recent) > before:
            results.append(rec.shadow._recent[-1])
    assert len(expected) == 25 and all(e is not None for e in expected)
    assert queued == [e[1] for e in expected]  # the rows, byte for byte
    assert results == [e[0] for e in expected]  # /debug/shadow's recent comparisons
    if n >= 16:  # the recorder's row cache kept rows across bindings (under 16 nodes one changed row is 1/8)
        assert rec.shadow.rows.reencoded < 25 * n
