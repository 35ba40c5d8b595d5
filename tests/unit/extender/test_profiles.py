"""The drsched.io/profile annotation formats and the demand-source order."""

import numpy as np
import pytest

from extender.profile_store import InMemoryProfileStore
from kube.errors import ProfileError
from kube.profiles import parse_profile, pod_view, pod_view_for

REQ = np.array([0.5, 1.0])


@pytest.mark.parametrize("text, expected", [
    ('{"cpu":"2","memory":"1Gi","net":"60M","disk":"80M"}', [2, 1, 60, 80]),
    ('{"cpu": 2, "memory": "512Mi"}', [2, 0.5, 0, 0]),
    ('{"net": "1Gi"}', [0.5, 1.0, 1073.741824, 0]),
    ("cpu=2,mem=1,net=60,disk=80", [2, 1, 60, 80]),
    ("cpu=2, memory=4 , network=10", [2, 4, 10, 0]),
    ("disk=7.5", [0.5, 1.0, 0, 7.5]),
    ("CPU=1,", [1, 1, 0, 0]),
])
def test_parse(text, expected):
    np.testing.assert_allclose(parse_profile(text, REQ), expected)


@pytest.mark.parametrize("text, match", [
    ("", "empty"), ("{", "not valid JSON"), ("[1]", "not valid JSON|object"), ('{"gpu":"1"}', "unknown"),
    ("cpu", "key=value"), ("cpu=abc", "not a number"), ("cpu=-1", "not a number"), ("cpu=1,cpu=2", "twice"),
    ('{"memory":"1GB"}', "Kubernetes quantity"), ("mem=inf", "not a number"), ("cpu=nan", "not a number"),
])
def test_refused(text, match):
    with pytest.raises(ProfileError, match=match):
        parse_profile(text, REQ)


def test_order_annotation_then_learned_then_requests():
    store = InMemoryProfileStore({"ns/Deployment/web": np.array([1.0, 2.0, 3.0, 4.0])})
    v, err = pod_view(name="p", requests=REQ, annotation="cpu=9", workload="ns/Deployment/web", store=store)
    assert v.demand_source == "annotation" and err is None and v.demand[0] == 9
    v, err = pod_view(name="p", requests=REQ, annotation=None, workload="ns/Deployment/web", store=store)
    assert v.demand_source == "learned" and v.demand.tolist() == [1, 2, 3, 4]
    v, err = pod_view(name="p", requests=REQ, annotation="bogus", workload="ns/Deployment/web", store=store)
    assert v.demand_source == "learned" and isinstance(err, ProfileError)
    v, err = pod_view(name="p", requests=REQ, annotation=None, workload="other", store=store)
    assert v.demand_source == "requests" and v.demand.tolist() == [0.5, 1.0, 0, 0]


def test_pod_view_for_reads_workload_from_owner():
    store = InMemoryProfileStore()
    store.put("ns/Deployment/web", [1, 1, 1, 1])
    pod = {"metadata": {"name": "web-abc-x", "namespace": "ns", "labels": {"pod-template-hash": "abc"},
                        "ownerReferences": [{"kind": "ReplicaSet", "name": "web-abc", "controller": True}]}}
    v, _ = pod_view_for(pod, requests=REQ, annotation_key="drsched.io/profile", store=store)
    assert v.demand_source == "learned" and v.name == "ns/web-abc-x"


def test_store_refuses_bad_profile():
    with pytest.raises(ProfileError):
        InMemoryProfileStore().put("w", [1, 2, 3])
