"""Table tests of the profile learning rule (EWMA with a cumulative-mean start, min samples, pod means)."""

import math

import numpy as np
import pytest

from extender.profile_learning import PodSample, Profile, aggregate, served_demand, trusted, update
from extender.profile_store import LearnedProfileStore

NAN = math.nan


def sample(uid, cpu, mem, net=NAN, disk=NAN, t=0.0):
    return PodSample(uid=uid, node="n", usage=np.array([cpu, mem, net, disk]), timestamp=t)


def test_aggregate_means_over_pods_ignoring_unmeasured_fields_and_unknown_pods():
    workloads = {"a1": "ns/Deployment/a", "a2": "ns/Deployment/a", "b1": "ns/Job/b"}
    got = aggregate([sample("a1", 1.0, 2.0, 10.0, t=5), sample("a2", 3.0, 4.0, t=7), sample("b1", 0.5, 1.0),
                     sample("stray", 9.0, 9.0)], workloads.get)
    mean, pods, at = got["ns/Deployment/a"]
    np.testing.assert_allclose(mean[:3], [2.0, 3.0, 10.0])   # net: only a1 measured it
    assert math.isnan(mean[3]) and pods == 2 and at == 7
    assert set(got) == {"ns/Deployment/a", "ns/Job/b"}       # the pod with no workload is left out


@pytest.mark.parametrize(("readings", "half_life", "expected"), [
    # (value, time) pairs -> cpu demand after them
    ([(4.0, 0)], 600, 4.0),                                    # first sample initialises
    ([(4.0, 0), (2.0, 10)], 600, 3.0),                         # 1/n start: plain mean of two
    ([(4.0, 0), (2.0, 10), (6.0, 20)], 600, 4.0),              # ... and of three
    ([(0.0, 0), (10.0, 600)], 600, 5.0),                       # time alpha 0.5 == 1/n 0.5
    ([(0.0, 0), (10.0, 1200)], 600, 7.5),                      # two half-lives: alpha 0.75 beats 1/n
])
def test_update_ewma_table(readings, half_life, expected):
    p = None
    for value, t in readings:
        p = update(p, np.array([value, 1.0, NAN, NAN]), pods=1, at=t, half_life_s=half_life)
    assert p.demand[0] == pytest.approx(expected)
    assert p.samples == (len(readings), len(readings), 0, 0)


def test_update_is_an_ewma_once_past_the_start():
    p = None
    for t in range(200):  # 10 s polls of 1.0 for 2000 s, then 3.0 for one half-life
        p = update(p, np.array([1.0, 1.0, 0.0, 0.0]), pods=1, at=10.0 * t, half_life_s=600)
    for t in range(200, 260):
        p = update(p, np.array([3.0, 1.0, 0.0, 0.0]), pods=1, at=10.0 * t, half_life_s=600)
    assert p.demand[0] == pytest.approx(2.0, abs=0.02)   # half way after one half-life


def test_unmeasured_and_negative_values_leave_a_resource_alone():
    p = update(None, np.array([1.0, 2.0, 3.0, 4.0]), pods=1, at=0, half_life_s=60)
    q = update(p, np.array([NAN, -1.0, 5.0, NAN]), pods=1, at=10, half_life_s=60)
    assert q.demand[0] == 1.0 and q.demand[1] == 2.0 and q.demand[3] == 4.0
    assert q.samples == (1, 1, 2, 1)


def test_trust_needs_min_samples_of_cpu_and_mem_and_net_disk_default_to_zero():
    p = None
    for t in range(3):
        p = update(p, np.array([1.0, 2.0, NAN, 5.0 if t == 0 else NAN]), pods=1, at=t, half_life_s=60)
    assert not trusted(p, 4) and served_demand(p, 4) is None
    p = update(p, np.array([1.0, 2.0, NAN, NAN]), pods=1, at=4, half_life_s=60)
    assert trusted(p, 4)
    np.testing.assert_allclose(served_demand(p, 4), [1.0, 2.0, 0.0, 0.0])   # disk had 1 sample < 4: 0


@pytest.mark.parametrize(("pod", "labels", "expected"), [
    ({"metadata": {"namespace": "ns", "ownerReferences": [{"kind": "ReplicaSet", "name": "web-5d8f9",
                                                           "controller": True}],
                   "labels": {"pod-template-hash": "5d8f9"}}}, (), "ns/Deployment/web"),
    ({"metadata": {"namespace": "ns", "ownerReferences": [{"kind": "Job", "name": "etl", "controller": True}]}},
     (), "ns/Job/etl"),
    ({"metadata": {"namespace": "ns", "ownerReferences": [{"kind": "StatefulSet", "name": "db",
                                                           "controller": True}]}}, (), "ns/StatefulSet/db"),
    ({"metadata": {"namespace": "ns", "labels": {"app": "api", "tier": "be"},
                   "ownerReferences": [{"kind": "Job", "name": "x", "controller": True}]}},
     ("app", "tier"), "ns/Labels/app=api,tier=be"),
    ({"metadata": {"namespace": "ns", "labels": {"app": "api"},                    # one label missing: owner
                   "ownerReferences": [{"kind": "Job", "name": "x", "controller": True}]}},
     ("app", "tier"), "ns/Job/x"),
    ({"metadata": {"namespace": "ns", "labels": {"app": "api", "tier": "be", "drsched.io/workload": "w"}}},
     ("app", "tier"), "ns/w"),                                                      # the explicit label wins
    ({"metadata": {"namespace": "ns", "name": "bare"}}, (), None),
])
def test_workload_keys(pod, labels, expected):
    assert LearnedProfileStore(workload_labels=labels).workload_of(pod) == expected


def test_store_serves_learned_over_static_only_once_trusted():
    store = LearnedProfileStore(min_samples=2)
    store.put("ns/Deployment/web", np.array([9.0, 9.0, 9.0, 9.0]))
    uid_map = {"u1": "ns/Deployment/web"}.get
    store.observe([sample("u1", 1.0, 2.0, 3.0, 4.0, t=0)], uid_map)
    np.testing.assert_allclose(store.get("ns/Deployment/web"), [9, 9, 9, 9])     # learning: the seed
    store.observe([sample("u1", 3.0, 2.0, 3.0, 4.0, t=10)], uid_map)
    np.testing.assert_allclose(store.get("ns/Deployment/web"), [2, 2, 3, 4])
    info = store.describe()["ns/Deployment/web"]
    assert info["source"] == "learned" and info["learned"]["trusted"] and info["learned"]["samples"] == [2] * 4


def test_profile_round_trips_through_its_dict():
    p = Profile(demand=(1.0, 2.0, NAN, 0.5), samples=(3, 3, 0, 3), first_seen=1.0, updated_at=2.0, pods=2)
    d = p.as_dict()
    assert d["demand"] == [1.0, 2.0, None, 0.5]
