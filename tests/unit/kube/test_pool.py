"""``kube.pool``: a pod's pool is every node but those whose keep-off taints (a cordon among them) it does not
tolerate, the same object for every pod in the same pool; the cache shares the grouping across views until a node
or a taint changes, and a pool's snapshot of one view shares its arrays."""

from __future__ import annotations

import numpy as np

from kube.cache import ClusterCache, NodeUsage
from kube.objects import UNSCHEDULABLE_TAINT, NodeInfo, tolerates
from kube.pool import EVERY, PoolIndex

SYSTEM = ("node-role.kubernetes.io/control-plane", "", "NoSchedule")
GPU = ("gpu", "a100", "NoExecute")
NAMES = ("a", "sys", "b", "gpu1", "cordoned", "gpu2")
TAINTS = {"sys": (SYSTEM,), "gpu1": (GPU,), "gpu2": (GPU,), "cordoned": (UNSCHEDULABLE_TAINT,)}


def pod(*tolerations) -> dict:
    return {"spec": {"tolerations": list(tolerations)}}


def index() -> PoolIndex:
    return PoolIndex(NAMES, {n: i for i, n in enumerate(NAMES)}, TAINTS)


def test_the_pool_is_the_nodes_whose_taints_the_pod_tolerates():
    idx = index()
    cases = [
        (pod(), ["a", "b"]),
        (pod({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}), ["a", "b"]),
        (pod({"key": "gpu", "operator": "Exists"}), ["a", "b", "gpu1", "gpu2"]),
        (pod({"key": "gpu", "value": "h100"}), ["a", "b"]),  # Equal: the value too
        (pod({"key": UNSCHEDULABLE_TAINT[0], "operator": "Exists", "effect": "NoSchedule"}), ["a", "b", "cordoned"]),
        (pod({"operator": "Exists"}), list(NAMES)),
    ]
    for p, want in cases:
        pool = idx.of(p)
        plain = [n for n in NAMES if tolerates(p, TAINTS.get(n, ()))]
        assert plain == want
        got = list(NAMES) if pool.rows is None else list(pool.names)
        assert got == want, p
        if pool.rows is not None:
            assert [NAMES[i] for i in pool.rows.tolist()] == want
            assert pool.position[pool.rows].tolist() == list(range(len(want)))
            assert (pool.position >= 0).sum() == len(want)
    assert idx.of(pod({"operator": "Exists"})) is EVERY


def test_pods_in_one_pool_share_it_and_an_untainted_list_is_every_node():
    idx = index()
    common = idx.of({})
    assert common.key == () and idx.of(pod()) is common and idx.of({"spec": {}}) is common
    assert idx.of(pod({"key": "other", "operator": "Exists"})) is common  # tolerates a taint no node has
    gpu = idx.of(pod({"key": "gpu", "operator": "Exists"}))
    assert gpu is idx.of(pod({"key": "gpu", "operator": "Exists", "effect": "NoExecute"})) and gpu.key == ((GPU,),)
    assert PoolIndex(NAMES, {n: i for i, n in enumerate(NAMES)}, {}).of({}) is EVERY


def cache_with(taints: dict) -> ClusterCache:
    cache = ClusterCache(clock=lambda: 10.0)
    for i, name in enumerate(NAMES):
        cache.upsert_node(NodeInfo(name=name, capacity=(4.0 + i, 16.0, 125.0, 200.0), max_pods=110, ready=True,
                                   taints=taints.get(name, ())))
    return cache


def test_the_cache_shares_the_grouping_until_a_node_or_a_taint_changes():
    cache = cache_with(TAINTS)
    first = cache.view()
    cache.apply_usage({"a": NodeUsage(1.0, 1.0, 1.0, 1.0, timestamp=9.0)})  # a new view, same taints
    second = cache.view()
    assert second is not first and second.pools is first.pools and second.taints is first.taints
    assert second.pool_of({}) is first.pool_of({})
    cache.upsert_node(NodeInfo(name="sys", capacity=(5.0, 16.0, 125.0, 200.0), max_pods=110, ready=True))  # untainted
    third = cache.view()
    assert third.pools is not second.pools and list(third.pool_of({}).names) == ["a", "sys", "b"]
    cache.delete_node("a")  # the last node moves into its row
    fourth = cache.view()
    assert fourth.names[0] == "gpu2" and fourth.pool_of({}).names == ("sys", "b")
    assert [fourth.names[i] for i in fourth.pool_of({}).rows.tolist()] == list(fourth.pool_of({}).names)


def test_a_pools_snapshot_is_the_plain_one_and_shares_its_arrays_within_a_view():
    cache = cache_with(TAINTS)
    cache.apply_usage({n: NodeUsage(1.0, 2.0, 3.0, 4.0, timestamp=8.0) for n in NAMES})
    view = cache.view()
    pool = view.pool_of({})
    snap, again = view.pool_snapshot(10.0, pool), view.pool_snapshot(11.0, pool)
    plain = view.snapshot(10.0, pool.rows)
    for field in ("capacity", "requested", "usage", "usage_age", "assumed", "pods", "max_pods", "ready"):
        assert getattr(snap, field).tobytes() == getattr(plain, field).tobytes(), field
    assert snap.names == plain.names == ("a", "b")
    assert again.capacity is snap.capacity and again.usage is snap.usage and again.usage_age[0] == 3.0
    assert view.pool_snapshot(10.0, view.pool_of(pod({"operator": "Exists"}))).names == view.names
    assert np.array_equal(view.pool_snapshot(10.0, EVERY).capacity, view.capacity)
