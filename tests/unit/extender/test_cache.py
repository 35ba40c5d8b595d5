"""Cache bookkeeping: allocations, assumed pods, usage samples, watch events as plain dicts."""

import dataclasses

import numpy as np
import pytest

from extender.kube import apply_node_event, apply_pod_event
from extender.profile_store import InMemoryProfileStore
from extender.settings import build_settings
from kube.cache import CacheView, ClusterCache, NodeUsage, PodRecord, names_at
from kube.objects import NodeInfo
from policy.state import ClusterSnapshot, SnapshotError


class Clock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t


def node(name, cpu=8.0):
    return NodeInfo(name=name, capacity=(cpu, 32.0, 1000.0, 500.0), max_pods=110, ready=True)


def pod(uid, node_name, cpu=1.0, *, bound_at=0.0, terminated=False, demand=None):
    return PodRecord(namespace="ns", name=uid, uid=uid, node=node_name, requests=np.array([cpu, 1.0]),
                     demand=np.array(demand if demand is not None else [cpu, 1.0, 10.0, 0.0]),
                     terminated=terminated, bound_at=bound_at)


@pytest.fixture
def cache():
    c = ClusterCache(assume_grace_s=0.0, clock=Clock())
    c.upsert_node(node("a"))
    c.upsert_node(node("b"))
    return c


def test_requested_sums_non_terminated(cache):
    cache.upsert_pod(pod("p1", "a", 1.0))
    cache.upsert_pod(pod("p2", "a", 2.0))
    cache.upsert_pod(pod("p3", "a", 4.0, terminated=True))
    v = cache.view()
    assert v.requested[v.index["a"]].tolist() == [3.0, 2.0] and v.pods[v.index["a"]] == 2


def test_pod_moves_and_deletes(cache):
    cache.upsert_pod(pod("p1", None))
    assert cache.view().requested.sum() == 0
    cache.upsert_pod(pod("p1", "b", bound_at=5.0))
    v = cache.view()
    assert v.requested[v.index["b"], 0] == 1.0
    cache.delete_pod("p1")
    assert cache.view().requested.sum() == 0 and cache.n_pods == 0


def test_assumed_until_newer_sample(cache):
    cache.apply_usage({"a": NodeUsage(1, 1, 1, 1, timestamp=100.0)})
    cache.upsert_pod(pod("p1", "a", 2.0, bound_at=150.0, demand=[2, 1, 50, 5]))
    v = cache.view()
    assert v.assumed[v.index["a"]].tolist() == [2, 1, 50, 5]
    cache.apply_usage({"a": NodeUsage(3, 2, 60, 6, timestamp=100.0)})  # same time: not newer, still assumed
    assert cache.view().assumed[v.index["a"]].tolist() == [2, 1, 50, 5]
    cache.apply_usage({"a": NodeUsage(3, 2, 60, 6, timestamp=200.0)})
    assert cache.view().assumed[v.index["a"]].tolist() == [0, 0, 0, 0]
    assert cache.apply_usage({"a": NodeUsage(0, 0, 0, 0, timestamp=50.0)}) == 0, "older samples are ignored"


@pytest.mark.parametrize(("capacity", "cpu_used"), [
    (None, 1.0),   # not reported: as measured
    (2.0, 7.0),    # a node of 8 allocatable cores cut to 2: the 6 lost ones are busy
    (8.0, 1.0),    # the full allocatable
    (64.0, 1.0),   # the host view reports the machine's CPUs, above allocatable: nothing changes
])
def test_cpu_capacity_lost_below_allocatable_counts_as_used(cache, capacity, cpu_used):
    cache.apply_usage({"a": NodeUsage(1, 2, 3, 4, timestamp=100.0, cpu_capacity=capacity)})
    v = cache.view()
    assert v.usage[v.index["a"]].tolist() == [cpu_used, 2, 3, 4]
    assert v.capacity[v.index["a"], 0] == 8.0, "allocatable itself is the API's, untouched"


def test_cpu_capacity_of_a_sample_that_came_before_its_node():
    c = ClusterCache(assume_grace_s=0.0, clock=Clock())
    c.apply_usage({"late": NodeUsage(0.1, 1, 0, 0, timestamp=100.0, cpu_capacity=0.25)})
    c.upsert_node(node("late", cpu=1.0))
    assert c.view().usage[0].tolist() == [0.85, 1, 0, 0]


def test_assume_grace_keeps_pods_bound_just_before_a_sample():
    c = ClusterCache(assume_grace_s=10.0)
    c.upsert_node(node("a"))
    c.upsert_pod(pod("p1", "a", bound_at=195.0))
    c.apply_usage({"a": NodeUsage(0, 0, 0, 0, timestamp=200.0)})
    assert c.view().assumed[0, 0] == 1.0


def test_pods_before_their_node(cache):
    cache.upsert_pod(pod("p1", "c", 2.0))
    cache.upsert_node(node("c"))
    v = cache.view()
    assert v.requested[v.index["c"], 0] == 2.0


def test_delete_node_keeps_other_rows(cache):
    cache.upsert_node(node("c", cpu=16))
    cache.apply_usage({"c": NodeUsage(5, 0, 0, 0, timestamp=1.0)})
    cache.delete_node("a")
    v = cache.view()
    assert set(v.names) == {"b", "c"}
    assert v.capacity[v.index["c"], 0] == 16 and v.usage[v.index["c"], 0] == 5


def test_grows_past_initial_rows():
    c = ClusterCache()
    c.replace_nodes(node(f"n{i}") for i in range(300))
    assert len(c.view().names) == 300 and np.all(np.isnan(c.view().usage))
    c.replace_nodes(node(f"n{i}") for i in range(10))
    assert sorted(c.view().names) == sorted(f"n{i}" for i in range(10))


def test_view_cached_until_change(cache):
    v1 = cache.view()
    assert cache.view() is v1
    cache.upsert_pod(pod("p1", "a"))
    assert cache.view() is not v1


def test_rows_of_names_outlive_a_view_until_a_node_comes_or_goes(cache):
    cache.upsert_node(node('c"q'))
    v1 = cache.view()
    names = ["b", "zz", 'c"q']
    assert v1.lookup(names).tolist() == [1, -1, 2]
    cache.upsert_pod(pod("p1", "a"))  # a bind: new rows, same names
    v2 = cache.view()
    assert v2 is not v1 and v2.names_memo is v1.names_memo and v2.lookup(names) is v1.lookup(names)
    cache.delete_node("a")  # "c\"q" moves into a's row
    v3 = cache.view()
    assert v3.names_memo is not v1.names_memo
    assert v3.lookup(names).tolist() == [1, -1, 0] and v3.index == {'c"q': 0, "b": 1}
    assert v1.lookup(names).tolist() == [1, -1, 2], "an older view keeps its own rows"
    cache.upsert_node(node("zz"))
    assert cache.view().lookup(names).tolist() == [1, 2, 0]


def test_filter_and_prioritize_lists_do_not_evict_each_other(cache):
    """One pod's cycle asks about two lists (filter: every node; prioritize: those that passed), pod after pod."""
    every, passed = ["a", "b"], ["b"]
    rows = [cache.view().lookup(names) for names in (every, passed)]
    for i in range(3):
        cache.upsert_pod(pod(f"p{i}", "a"))  # a bind between pods: a new view, the same memo
        assert cache.view().lookup(list(every)) is rows[0] and cache.view().lookup(list(passed)) is rows[1]
    assert rows[0].tolist() == [0, 1] and rows[1].tolist() == [1]


def test_snapshot_ages_and_subset(cache):
    cache.apply_usage({"b": NodeUsage(1, 2, 3, 4, timestamp=990.0)})
    v = cache.view()
    idx = v.lookup(["b", "zz", "a"])
    assert idx.tolist() == [v.index["b"], -1, v.index["a"]]
    s = v.snapshot(1000.0, idx[idx >= 0], ("b", "a"))
    assert s.names == ("b", "a") and s.usage_age[0] == 10.0 and np.isinf(s.usage_age[1])


FIELDS = ("names", "capacity", "requested", "usage", "usage_age", "assumed", "pods", "max_pods", "ready", "now",
          "progress")


def test_snapshots_of_the_cache_s_own_view_skip_validation_and_equal_the_validated_ones(cache):
    cache.apply_usage({"b": NodeUsage(1, 2, 3, 4, timestamp=990.0)})
    cache.upsert_pod(pod("p", "a", bound_at=995.0))
    v = cache.view()
    assert v.trusted
    for s in (v.snapshot(1000.0), v.snapshot(1000.0, np.array([1, 0])), v.snapshot(1000.0, np.array([1]), ("b",))):
        checked = ClusterSnapshot(**{f: getattr(s, f) for f in FIELDS})
        for f in FIELDS:
            got, want = getattr(s, f), getattr(checked, f)
            if isinstance(want, np.ndarray):
                assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes(), f
            else:
                assert got == want, f


@pytest.mark.parametrize("rows", [[], [1], [1, 0], [0, 1, 1]])
def test_names_at(rows):
    assert names_at(("a", "b"), rows) == tuple(("a", "b")[i] for i in rows)


def test_a_view_the_validation_would_refuse_still_refuses():
    c = ClusterCache(assume_grace_s=0.0, clock=Clock())
    c.upsert_node(node("a"))
    c.upsert_node(node("z", cpu=0.0))  # no NodeInfo from the watch has it (kube.objects floors capacity at 1e-9)
    v = c.view()
    assert not v.trusted
    with pytest.raises(SnapshotError, match="capacity must be > 0"):
        v.snapshot(1000.0)
    good = ClusterCache(assume_grace_s=0.0, clock=Clock())
    good.upsert_node(node("a"))
    with pytest.raises(SnapshotError, match="shape"):  # the caller's names are checked against the rows
        good.view().snapshot(1000.0, np.array([0]), ("a", "b"))
    # a view built elsewhere validates: the flag is the cache's to give
    view = good.view()
    assert not CacheView(**{f.name: getattr(view, f.name) for f in dataclasses.fields(CacheView)
                            if f.name != "trusted"}).trusted


SETTINGS = build_settings(usage_provider="none")


def kpod(name, node_name=None, cpu="1", phase="Running", annotations=None):
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "annotations": annotations or {}},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": phase, "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}


def knode(name, cpu="4"):
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}}}


def test_watch_events_as_dicts():
    c = ClusterCache()
    apply_node_event(c, SETTINGS, "ADDED", knode("n1"))
    apply_node_event(c, SETTINGS, "BOOKMARK", {"metadata": {"resourceVersion": "9"}})
    apply_pod_event(c, SETTINGS, "ADDED", kpod("p1"))
    apply_pod_event(c, SETTINGS, "MODIFIED", kpod("p1", "n1"))
    apply_pod_event(c, SETTINGS, "ADDED", kpod("p2", "n1", cpu="500m"))
    v = c.view()
    assert v.requested[0, 0] == 1.5 and v.pods[0] == 2
    assert c.pod("ns", "p1").bound_at == pytest.approx(1767225600.0)
    apply_pod_event(c, SETTINGS, "MODIFIED", kpod("p2", "n1", cpu="500m", phase="Succeeded"))
    assert c.view().requested[0, 0] == 1.0
    apply_pod_event(c, SETTINGS, "DELETED", kpod("p1", "n1"))
    assert c.view().requested[0, 0] == 0.0
    apply_node_event(c, SETTINGS, "MODIFIED", knode("n1", cpu="8"))
    assert c.view().capacity[0, 0] == 8
    apply_node_event(c, SETTINGS, "DELETED", knode("n1"))
    assert c.view().names == ()


def test_watch_event_with_bad_quantities_is_skipped():
    c = ClusterCache()
    apply_node_event(c, SETTINGS, "ADDED", knode("n1", cpu="many"))
    apply_pod_event(c, SETTINGS, "ADDED", kpod("p1", cpu="lots"))
    assert c.view().names == () and c.n_pods == 0


def test_watched_pod_profile_sources():
    store = InMemoryProfileStore()
    c = ClusterCache()
    apply_pod_event(c, SETTINGS, "ADDED", kpod("p1", annotations={"drsched.io/profile": "net=70"}), store=store)
    assert c.pod("ns", "p1").demand_source == "annotation" and c.pod("ns", "p1").demand[2] == 70


def test_a_node_s_taints_reach_the_view_and_a_taint_change_is_no_heartbeat():
    cache = ClusterCache()
    cache.upsert_node(node("a"))
    before = cache.view()
    assert before.taints == {}
    tainted = NodeInfo(name="a", capacity=(8.0, 32.0, 1000.0, 500.0), max_pods=110, ready=True,
                       taints=(("k", "", "NoSchedule"),))
    cache.upsert_node(tainted)
    assert cache.view().version != before.version and cache.view().taints == {"a": (("k", "", "NoSchedule"),)}
    cache.upsert_node(node("a"))
    assert cache.view().taints == {}
    cache.upsert_node(tainted)
    cache.delete_node("a")
    assert cache.view().taints == {}


def test_a_node_s_daemonset_pods_are_counted_apart_from_its_pods():
    c = ClusterCache()
    apply_node_event(c, SETTINGS, "ADDED", knode("n1"))
    apply_node_event(c, SETTINGS, "ADDED", knode("n2"))
    monitor = kpod("monitor-x", "n1", cpu="20m")
    monitor["metadata"]["ownerReferences"] = [{"kind": "DaemonSet", "name": "monitor", "controller": True}]
    apply_pod_event(c, SETTINGS, "ADDED", monitor)
    apply_pod_event(c, SETTINGS, "ADDED", kpod("job", "n1"))
    v = c.view()
    assert v.pods.tolist() == [2, 0] and v.daemon_pods.tolist() == [1, 0]  # still a pod: its requests count
    apply_node_event(c, SETTINGS, "ADDED", knode("n0"))
    apply_node_event(c, SETTINGS, "DELETED", knode("n2"))  # rows move: the count moves with its node
    assert c.view().daemon_pods[c.view().index["n1"]] == 1
    apply_pod_event(c, SETTINGS, "MODIFIED", {**monitor, "status": {"phase": "Failed"}})
    assert c.view().daemon_pods[c.view().index["n1"]] == 0 and c.view().pods[c.view().index["n1"]] == 1


def test_a_node_s_labels_reach_the_view_shared_until_one_changes_and_a_label_change_is_no_heartbeat():
    cache = ClusterCache()
    cache.upsert_node(node("a"))
    cache.upsert_node(NodeInfo(name="b", capacity=(8.0, 32.0, 1000.0, 500.0), max_pods=110, ready=True,
                               labels={"zone": "x"}))
    first = cache.view()
    assert first.labels == {"b": {"zone": "x"}}
    cache.upsert_pod(pod("p", "a"))
    assert cache.view() is not first and cache.view().labels is first.labels  # no label changed: one object
    cache.upsert_node(NodeInfo(name="b", capacity=(8.0, 32.0, 1000.0, 500.0), max_pods=110, ready=True,
                               labels={"zone": "y"}))
    assert cache.view().labels == {"b": {"zone": "y"}} and first.labels == {"b": {"zone": "x"}}
    cache.upsert_node(node("b"))
    assert cache.view().labels == {}
    cache.upsert_node(NodeInfo(name="a", capacity=(8.0, 32.0, 1000.0, 500.0), max_pods=110, ready=True,
                               labels={"zone": "z"}))
    cache.delete_node("a")
    assert cache.view().labels == {}


def test_watched_node_labels():
    c = ClusterCache()
    labelled = knode("n1")
    labelled["metadata"]["labels"] = {"zone": "a", "kubernetes.io/hostname": "n1"}
    apply_node_event(c, SETTINGS, "ADDED", labelled)
    assert c.view().labels == {"n1": {"zone": "a", "kubernetes.io/hostname": "n1"}}
