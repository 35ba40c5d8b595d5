"""A pod is encoded over its context: the cached nodes no taint or cordon keeps it off, and its candidates.

The lab's case: four workload nodes and a control-plane node with a NoSchedule taint and a 1250 MB/s link. The
system node (or a cordoned one) must not move what prioritize serves on the other nodes: bitwise what a cache
without it serves. A pod that tolerates the taint is encoded with the node; a candidate outside the pool is
answered, encoded with the pool.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import extender.runtime as runtime_mod
from extender.context import EVERY_GROUP, context_of
from extender.decide import score, whole
from extender.runtime import Runtime, load_policy
from extender.settings import build_settings
from extender.telemetry import Telemetry
from extender.wire import ExtenderArgs
from kube.cache import ClusterCache, NodeUsage, PodRecord, record_for
from kube.objects import UNSCHEDULABLE_TAINT, NodeInfo, node_info
from policy.baselines import SCORERS

NOW = 80_000.0
WORKERS = {"rn-a": (4.0, 16.0, 60.0, 200.0), "rn-b": (4.0, 16.0, 125.0, 200.0), "rn-c": (8.0, 32.0, 500.0, 500.0),
           "rn-d": (2.0, 8.0, 250.0, 200.0)}
CONTROL_PLANE = ("node-role.kubernetes.io/control-plane", "", "NoSchedule")
TOLERATES = [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]
DEFAULTS = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300}]  # what admission adds to every pod: it matches no NoSchedule taint


def system_node(kind: str) -> NodeInfo:
    """The lab's control-plane node (``tainted``), or a worker-like node cordoned (``cordoned``: read from its
    v1.Node as the watch reads it)."""
    if kind == "tainted":
        return NodeInfo(name="rn-system", capacity=(4.0, 16.0, 1250.0, 500.0), max_pods=110, ready=True,
                        taints=(CONTROL_PLANE,))
    node = {"metadata": {"name": "rn-system", "annotations": {"drsched.io/net-mbps": "1250"}},
            "spec": {"unschedulable": True},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    return node_info(node, net_annotation="drsched.io/net-mbps", disk_annotation="drsched.io/disk-mbps",
                     default_net_mbps=1250.0, default_disk_mbps=500.0)


def runtime(policy: str, extra: NodeInfo | None, *, first: bool = False) -> Runtime:
    """The lab's workers (and ``extra``, listed first or last) with pods and fresh samples."""
    settings = build_settings(None, policy=policy, log_level="WARNING")
    cache = ClusterCache(clock=lambda: NOW)
    infos = [NodeInfo(name=n, capacity=c, max_pods=110, ready=True) for n, c in WORKERS.items()]
    if extra is not None:
        infos = [extra, *infos] if first else [*infos, extra]
    for info in infos:
        cache.upsert_node(info)
    for i, name in enumerate(WORKERS):
        cache.upsert_pod(PodRecord(namespace="ns", name=f"b{i}", uid=f"b{i}", node=name,
                                   requests=np.array([0.5 * i, 1.0]), demand=np.array([0.4 * i, 1.0, 20.0 * i, 5.0]),
                                   bound_at=NOW - 100))
        cache.apply_usage({name: NodeUsage(0.3 * i, 2.0, 15.0 * i, 10.0, timestamp=NOW - 2)})
    cache.apply_usage({"rn-system": NodeUsage(0.5, 4.0, 3.0, 1.0, timestamp=NOW - 2)})
    telemetry = Telemetry()
    return Runtime(settings=settings, cache=cache, telemetry=telemetry, policy=load_policy(settings, telemetry)[0])


def pod(tolerations=None) -> dict:
    return {"metadata": {"name": "p", "namespace": "ns", "uid": "u-p",
                         "annotations": {"drsched.io/profile": "cpu=1,mem=2,net=40,disk=10"}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}],
                     **({"tolerations": tolerations} if tolerations is not None else {})}}


def served(monkeypatch, rt: Runtime, names: list[str], tolerations=None):
    """(the reply's JSON, what ``score`` returned) for one prioritize in names mode at ``NOW``."""
    seen = []

    def capture(*args, **kwargs):
        seen.append(real(*args, **kwargs))
        return seen[-1]

    real = runtime_mod.score
    monkeypatch.setattr(runtime_mod, "score", capture)
    monkeypatch.setattr(runtime_mod.time, "time", lambda: NOW)
    body = rt.prioritize(ExtenderArgs(Pod=pod(tolerations), NodeNames=names))
    (scored,) = seen
    return json.loads(bytes(body.body) if hasattr(body, "body") else bytes(body)), scored


def assert_bitwise(a, b) -> None:
    for field in ("nodes", "pod", "cluster", "mask"):
        x, y = getattr(a.enc, field), getattr(b.enc, field)
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), field
    assert a.raw.tobytes() == b.raw.tobytes() and a.scores.tolist() == b.scores.tolist()


@pytest.mark.parametrize("policy", ["model", *sorted(set(SCORERS) - {"round-robin"})])  # round-robin: not served
@pytest.mark.parametrize("kind", ["tainted", "cordoned"])
@pytest.mark.parametrize("first", [False, True])
@pytest.mark.parametrize("tolerations", [None, DEFAULTS])
def test_a_node_the_pod_can_never_go_to_leaves_the_others_encoding_bitwise_as_without_it(
        monkeypatch, policy, kind, first, tolerations):
    names = list(WORKERS)[::-1]
    with_it, scored = served(monkeypatch, runtime(policy, system_node(kind), first=first), names, tolerations)
    without, alone = served(monkeypatch, runtime(policy, None), names, tolerations)
    assert with_it == without
    assert_bitwise(scored, alone)


def test_the_whole_cache_would_have_encoded_the_pod_otherwise():
    """What this guards against: over every cached node the pod's net demand over the mean capacity shrinks."""
    rt = runtime("model", system_node("tainted"))
    view = rt.cache.view()
    pv = rt.pod_view(pod())[0]
    ctx = context_of(view, pod(), view.lookup(list(WORKERS)), NOW)
    assert ctx.snap.names == tuple(WORKERS) and ctx.group == ()
    pool_pod = whole(ctx.snap, pv, rt.policy, max_usage_age=60)[0].pod
    all_pod = whole(view.snapshot(NOW), pv, rt.policy, max_usage_age=60)[0].pod
    assert pool_pod[2] > 1.5 * all_pod[2]  # pod_demand_net: 40 / 233.75 against 40 / 437


@pytest.mark.parametrize("kind", ["tainted", "cordoned"])
def test_a_pod_that_tolerates_it_is_encoded_with_it(monkeypatch, kind):
    tolerations = TOLERATES if kind == "tainted" else [{"key": UNSCHEDULABLE_TAINT[0], "operator": "Exists"}]
    rt = runtime("model", system_node(kind))
    names = [*WORKERS, "rn-system"]
    reply, scored = served(monkeypatch, rt, names, tolerations)
    view = rt.cache.view()
    ctx = context_of(view, pod(tolerations), view.lookup(names), NOW)
    assert ctx.view_rows is None and ctx.group == EVERY_GROUP  # its pool is every node
    plain = score(None, rt.pod_view(pod())[0], rt.policy, max_usage_age=60, context=view.snapshot(NOW),
                  rows=view.lookup(names))
    assert_bitwise(scored, plain)
    assert [h["Host"] for h in reply] == names


@pytest.mark.parametrize("policy", ["model", "demand-aware"])
def test_a_candidate_outside_the_pool_is_answered_encoded_with_the_pool(monkeypatch, policy):
    rt = runtime(policy, system_node("tainted"))
    names = ["rn-b", "ghost", "rn-system", "rn-a"]
    reply, scored = served(monkeypatch, rt, names)
    assert [h["Host"] for h in reply] == names and reply[1]["Score"] == 0
    view = rt.cache.view()
    known = view.lookup(names)[[0, 2, 3]]
    ctx = context_of(view, pod(), known, NOW)
    assert ctx.group is None and ctx.snap.names == tuple(view.names)  # pool (4 workers) and rn-system: all
    plain = score(None, rt.pod_view(pod())[0], rt.policy, max_usage_age=60, context=view.snapshot(NOW), rows=known)
    assert_bitwise(scored, plain)


def test_explain_reads_the_context_and_names_the_nodes_outside_it(monkeypatch):
    monkeypatch.setattr(runtime_mod.time, "time", lambda: NOW)
    rt = runtime("model", system_node("tainted"))
    names = list(WORKERS)
    asked = rt.explain(ExtenderArgs(Pod=pod(), NodeNames=names))
    assert asked["outside_context"] == ["rn-system"]
    alone = runtime("model", None).explain(ExtenderArgs(Pod=pod(), NodeNames=names))
    assert asked["nodes"] == alone["nodes"] and asked["pod_features"] == alone["pod_features"]
    assert asked["cluster_features"] == alone["cluster_features"]
    rt.cache.upsert_pod(PodRecord(namespace="ns", name="q", uid="u-q", node=None, requests=np.array([1.0, 2.0]),
                                  demand=np.array([1.0, 2.0, 40.0, 10.0])))
    cached = rt.explain(pod=rt.cache.pod_view("ns", "q"), key=("ns", "q", "u-q"))
    assert sorted(n["name"] for n in cached["nodes"]) == sorted(WORKERS)
    assert cached["outside_context"] == ["rn-system"]


def cached(rt: Runtime, name: str, tolerations) -> dict:
    """``/debug/explain`` of pod ``ns/name`` with ``tolerations``, known to the cache as the watch records it."""
    obj = pod(tolerations)
    obj["metadata"].update(name=name, uid=f"u-{name}")
    rt.cache.upsert_pod(record_for(obj, rt.pod_view(obj)[0]))
    return rt.explain(pod=rt.cache.pod_view("ns", name), key=("ns", name, f"u-{name}"))


def test_explain_of_a_cached_pod_where_every_node_is_tainted_reads_its_pool_or_every_node(monkeypatch):
    """A KWOK cluster taints every node and its pods tolerate it: a cached pod that does is explained against its
    pool, every node; one that tolerates no taint (only admission's defaults), against every node rather than
    none, each then saying why it fails."""
    monkeypatch.setattr(runtime_mod.time, "time", lambda: NOW)
    rt = runtime("model", None)
    kwok = ("kwok.x-k8s.io/node", "fake", "NoSchedule")
    for name, cap in WORKERS.items():
        rt.cache.upsert_node(NodeInfo(name=name, capacity=cap, max_pods=110, ready=True, taints=(kwok,)))
    for name, tolerations in (("q", [{"key": kwok[0], "operator": "Exists", "effect": "NoSchedule"}, *DEFAULTS]),
                              ("r", DEFAULTS)):
        explained = cached(rt, name, tolerations)
        assert sorted(n["name"] for n in explained["nodes"]) == sorted(WORKERS)
        assert explained["outside_context"] == []


@pytest.mark.parametrize(("tolerations", "pool"), [
    (TOLERATES + DEFAULTS, [*WORKERS, "rn-system"]),  # its pool holds the tainted node
    (DEFAULTS, list(WORKERS)),  # admission's defaults tolerate no NoSchedule taint
    ([{"key": CONTROL_PLANE[0], "operator": "Exists", "effect": "NoExecute"}], list(WORKERS)),  # another effect
    ([{"operator": "Exists"}], [*WORKERS, "rn-system"]),  # tolerates everything
])
def test_explain_of_a_cached_pod_reads_the_pool_of_its_own_tolerations(monkeypatch, tolerations, pool):
    """As a request for it naming the workers reads it: the nodes of its pool, the others outside."""
    monkeypatch.setattr(runtime_mod.time, "time", lambda: NOW)
    rt = runtime("model", system_node("tainted"))
    explained = cached(rt, "q", tolerations)
    assert sorted(n["name"] for n in explained["nodes"]) == sorted(pool)
    asked = rt.explain(ExtenderArgs(Pod=pod(tolerations), NodeNames=list(WORKERS)))
    assert explained["outside_context"] == asked["outside_context"] == sorted({*WORKERS, "rn-system"} - set(pool))

