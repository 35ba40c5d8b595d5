"""Pod requests (kube-scheduler accounting), node capacity and workload keys from Kubernetes JSON."""

from collections.abc import Mapping

import numpy as np
import pytest

from kube.errors import QuantityError
from kube.objects import (
    UNSCHEDULABLE_TAINT,
    as_pod,
    child_list,
    child_map,
    is_daemon_pod,
    node_info,
    node_taints,
    pod_requests,
    pod_terminated,
    pod_tolerations,
    tolerates,
    workload_key,
)


def c(cpu=None, mem=None, **extra):
    req = {}
    if cpu is not None:
        req["cpu"] = cpu
    if mem is not None:
        req["memory"] = mem
    return {"name": "c", "resources": {"requests": req}, **extra}


@pytest.mark.parametrize("spec, expected", [
    ({}, [0, 0]),
    ({"containers": [c("500m", "1Gi"), c("1", "512Mi")]}, [1.5, 1.5]),
    ({"containers": [c("1", "1Gi")], "initContainers": [c("2", "256Mi")]}, [2, 1]),
    ({"containers": [c("1")], "initContainers": [c("3"), c("2")]}, [3, 0]),
    # a restartable init container (sidecar) adds to the sum and runs beside later init containers
    ({"containers": [c("1")], "initContainers": [c("500m", restartPolicy="Always"), c("2")]}, [2.5, 0]),
    ({"containers": [c("1", "1Gi")], "overhead": {"cpu": "250m", "memory": "128Mi"}}, [1.25, 1.125]),
    ({"containers": [c("1", "1Gi")], "resources": {"requests": {"cpu": "4"}}}, [4, 1]),
    ({"containers": [{"name": "no-resources"}]}, [0, 0]),
    ({"containers": "garbage"}, [0, 0]),
])
def test_pod_requests(spec, expected):
    np.testing.assert_allclose(pod_requests({"spec": spec}), expected)


def test_bad_quantity_names_the_field():
    with pytest.raises(QuantityError, match=r"spec.containers\[1\].resources.requests"):
        pod_requests({"spec": {"containers": [c("1"), c("lots")]}})


def test_terminated():
    assert pod_terminated({"status": {"phase": "Succeeded"}})
    assert not pod_terminated({"status": {"phase": "Running"}})


@pytest.mark.parametrize("meta, expected", [
    ({"name": "x"}, None),
    ({"namespace": "a", "labels": {"drsched.io/workload": "etl"}}, "a/etl"),
    ({"namespace": "a", "labels": {"pod-template-hash": "h1"},
      "ownerReferences": [{"kind": "ReplicaSet", "name": "web-h1", "controller": True}]}, "a/Deployment/web"),
    ({"ownerReferences": [{"kind": "Job", "name": "j"}]}, "default/Job/j"),
])
def test_workload_key(meta, expected):
    assert workload_key({"metadata": meta}) == expected


NODE_KW = dict(net_annotation="drsched.io/net-mbps", disk_annotation="drsched.io/disk-mbps",
               default_net_mbps=1000.0, default_disk_mbps=500.0)


def test_node_info():
    node = {"metadata": {"name": "n1", "annotations": {"drsched.io/net-mbps": "2500"}},
            "spec": {}, "status": {"allocatable": {"cpu": "3920m", "memory": "16Gi", "pods": "110"},
                                   "conditions": [{"type": "Ready", "status": "True"}]}}
    info = node_info(node, **NODE_KW)
    assert info.capacity == pytest.approx((3.92, 16.0, 2500.0, 500.0))
    assert info.max_pods == 110 and info.ready


@pytest.mark.parametrize("node, ready", [
    ({"status": {"conditions": [{"type": "Ready", "status": "False"}]}}, False),
    ({"spec": {"unschedulable": True}}, False),
    ({}, True),
])
def test_node_ready(node, ready):
    assert node_info({"metadata": {"name": "n"}, **node}, **NODE_KW).ready is ready


def test_node_without_allocatable_gets_tiny_capacity():
    info = node_info({"metadata": {"name": "n"}}, **NODE_KW)
    assert 0 < info.capacity[0] < 1e-6


class _Frozen(Mapping):
    """A Mapping that is not a dict: the slow path must answer as the dict fast path does."""

    def __init__(self, data):
        self._data = dict(data)

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


@pytest.mark.parametrize("wrap", [dict, _Frozen])
def test_child_map_and_list_read_fields_of_any_mapping(wrap):
    inner = {"cpu": "1"}
    obj = wrap({"spec": wrap(inner), "items": [1, 2], "bad": "text", "none": None})
    assert dict(child_map(obj, "spec")) == inner
    assert child_map(obj, "bad") == {} and child_map(obj, "none") == {} and child_map(obj, "missing") == {}
    assert child_map("not a mapping", "spec") == {} and child_map(None, "spec") == {}
    assert child_list(obj, "items") == [1, 2]
    assert child_list(obj, "bad") == [] and child_list(["spec"], "spec") == []


def test_taints_that_keep_pods_off_and_the_tolerations_that_match_them():
    node = {"spec": {"taints": [{"key": "role", "value": "system", "effect": "NoSchedule"},
                                {"key": "soft", "effect": "PreferNoSchedule"},
                                {"key": "gone", "effect": "NoExecute"}]}}
    taints = node_taints(node)
    assert taints == (("role", "system", "NoSchedule"), ("gone", "", "NoExecute"))  # PreferNoSchedule only steers

    def pod(*tolerations):
        return {"spec": {"tolerations": list(tolerations)}}

    both = ({"key": "role", "value": "system"}, {"key": "gone", "operator": "Exists"})
    assert tolerates(pod(*both), taints)
    assert not tolerates(pod(both[0]), taints)                                  # every taint needs one
    assert not tolerates(pod({"key": "role", "value": "other"}, both[1]), taints)  # Equal: the value too
    assert tolerates(pod({"operator": "Exists"}), taints)                        # empty key + Exists: all
    assert not tolerates(pod({"operator": "Exists", "effect": "NoSchedule"}), taints)  # ... of that effect only
    assert not tolerates(pod(), taints) and tolerates(pod(), ()) and tolerates({}, ())


TOLERATIONS = [{"key": "role", "value": "system"}, {"key": "gone", "operator": "Exists"}, {"operator": "Exists"},
               {"operator": "Exists", "effect": "NoSchedule"},
               {"key": "role", "value": "other", "effect": "NoSchedule"},
               {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": 300}]
TAINTS = [("role", "system", "NoSchedule"), ("gone", "", "NoExecute"), ("role", "other", "NoSchedule"),
          ("node.kubernetes.io/not-ready", "", "NoExecute")]


@pytest.mark.parametrize("keep", range(1 << len(TOLERATIONS)))
def test_kept_tolerations_tolerate_what_the_pod_s_own_do(keep):
    pod = {"spec": {"tolerations": [t for i, t in enumerate(TOLERATIONS) if keep >> i & 1]}}
    kept = pod_tolerations(pod)
    for taint in TAINTS:
        assert tolerates(as_pod(kept), [taint]) == tolerates(pod, [taint])
    assert pod_tolerations({"spec": {"tolerations": [dict(t) for t in pod["spec"]["tolerations"]]}}) is kept


@pytest.mark.parametrize("pod, kept", [
    ({}, ()),
    ({"spec": {"tolerations": None}}, ()),
    ({"spec": {"tolerations": [{"key": "a", "operator": "Equal", "value": "b", "effect": "NoSchedule"}]}},
     (("a", "Equal", "b", "NoSchedule"),)),
    ({"spec": {"tolerations": ["not an object"]}}, None),  # unknown: the explainer falls back to every node
    ({"spec": {"tolerations": [{"key": 7}]}}, None),
])
def test_pod_tolerations_table(pod, kept):
    assert pod_tolerations(pod) == kept


@pytest.mark.parametrize("owners, daemon", [
    ([{"kind": "DaemonSet", "name": "monitor", "controller": True}], True),
    ([{"kind": "ReplicaSet", "name": "web-5d9f"}, {"kind": "DaemonSet", "name": "odd"}], True),
    ([{"kind": "ReplicaSet", "name": "web-5d9f", "controller": True}], False),
    ([{"kind": "Job", "name": "j"}], False),
    ([], False),
    ("garbage", False),
    (None, False),
])
def test_a_pod_a_daemonset_owns(owners, daemon):
    assert is_daemon_pod({"metadata": {"ownerReferences": owners}}) is daemon


def test_a_cordon_is_the_unschedulable_taint_once():
    cordoned = {"spec": {"unschedulable": True, "taints": [{"key": "role", "value": "system", "effect": "NoSchedule"}]}}
    assert node_taints(cordoned) == (("role", "system", "NoSchedule"), UNSCHEDULABLE_TAINT)
    marked = {"spec": {"unschedulable": True, "taints": [  # the node lifecycle controller's taint already there
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-12-07T10:00:00Z"}]}}
    assert node_taints(marked) == (UNSCHEDULABLE_TAINT,)
    assert node_taints({"spec": {"unschedulable": False}}) == ()
    daemon = {"spec": {"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                        "effect": "NoSchedule"}]}}  # what DaemonSet pods carry
    assert tolerates(daemon, node_taints(marked)) and not tolerates({}, node_taints(marked))
