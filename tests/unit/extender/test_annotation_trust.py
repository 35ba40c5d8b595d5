"""Annotation trust: which claims are understated (table), what is served, what is counted and logged."""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest
from prometheus_client import CollectorRegistry

from extender.annotation_trust import AnnotationTrust, understated
from extender.profile_learning import Profile
from extender.profile_store import LearnedProfileStore
from extender.telemetry import Telemetry
from kube.profiles import pod_view_for


class Events:
    def __init__(self) -> None:
        self.posted: list[dict] = []

    def event(self, **kwargs) -> None:  # the EventSink protocol the shared recorder posts through
        self.posted.append(kwargs)


EVENTS = Events()

LEARNED = np.array([2.0, 4.0, 100.0, 0.0])
REQ = np.array([1.0, 2.0])


@pytest.mark.parametrize("claim, fraction, expected", [
    ([2.0, 4.0, 100.0, 0.0], 0.5, []),                 # the truth
    ([1.0, 2.0, 50.0, 0.0], 0.5, []),                  # exactly half: believed
    ([0.9, 4.0, 100.0, 0.0], 0.5, ["cpu"]),            # under half the learned cpu
    ([0.01, 0.01, 100.0, 0.0], 0.5, ["cpu", "mem"]),   # the tiny claim
    ([2.0, 4.0, 10.0, 0.0], 0.5, ["net"]),             # net learned 100, claims 10
    ([2.0, 4.0, 100.0, 0.0], 0.5, []),                 # disk learned 0: nothing to compare
    ([9.0, 9.0, 900.0, 9.0], 0.5, []),                 # over-claiming only costs the claimant
    ([0.01, 0.01, 0.0, 0.0], 0.0, []),                 # fraction 0 believes everything
    ([1.5, 3.0, 100.0, 0.0], 0.8, ["cpu", "mem"]),     # a stricter threshold
])
def test_understated(claim, fraction, expected) -> None:
    assert understated(np.array(claim), learned=LEARNED, requests=REQ, fraction=fraction) == expected


def test_requests_are_a_floor_too() -> None:
    # learned cpu is tiny (the workload idles), but the pod requests 4 cores and claims 0.1
    assert understated(np.array([0.1, 4.0, 0, 0]), learned=np.array([0.1, 4.0, 0, 0]), requests=np.array([4.0, 1.0]),
                       fraction=0.5) == ["cpu"]


def _store(samples: int, registry: CollectorRegistry, fraction: float = 0.5) -> LearnedProfileStore:
    store = LearnedProfileStore(min_samples=6, half_life_s=600, trust=AnnotationTrust(
        fraction=fraction, registry=registry, telemetry=Telemetry(events=EVENTS)))
    now = time.time()
    store._profiles["team-a/Deployment/web"] = Profile(demand=tuple(LEARNED), samples=(samples,) * 4,
                                                       first_seen=now, updated_at=now, pods=2)
    return store


def _pod(name: str, annotation: str) -> dict:
    return {"metadata": {"name": name, "namespace": "team-a", "annotations": {"drsched.io/profile": annotation},
                         "labels": {"drsched.io/workload": "Deployment/web"}}}


def _counted(registry: CollectorRegistry) -> float:
    return registry.get_sample_value("drsched_extender_annotation_overridden_total") or 0.0


def test_a_lying_annotation_is_overridden_once_the_learned_profile_is_trusted(caplog) -> None:
    registry = CollectorRegistry()
    learning = _store(samples=3, registry=registry)  # not trusted yet: the annotation is all there is
    view, _ = pod_view_for(_pod("web-1", "cpu=0.01,mem=0.01"), requests=REQ, annotation_key="drsched.io/profile",
                           store=learning)
    assert view.demand_source == "annotation" and _counted(registry) == 0

    registry = CollectorRegistry()
    store = _store(samples=6, registry=registry)
    with caplog.at_level(logging.WARNING, logger="extender.annotation_trust"):
        for name in ("web-1", "web-1", "web-2"):  # one pod seen twice (filter, prioritize), a second replica
            view, problem = pod_view_for(_pod(name, "cpu=0.01,mem=0.01"), requests=REQ,
                                         annotation_key="drsched.io/profile", store=store)
            assert problem is None and view.demand_source == "learned"
            np.testing.assert_allclose(view.demand, LEARNED)
    assert _counted(registry) == 2  # once per pod, with one Event each
    posted = [(e["namespace"], e["name"], e["reason"]) for e in EVENTS.posted[-2:]]
    assert posted == [("team-a", "web-1", "ProfileAnnotationNotBelieved"), ("team-a", "web-2",
                                                                           "ProfileAnnotationNotBelieved")]
    lines = [r for r in caplog.records if "not believed" in r.getMessage()]
    assert len(lines) == 1 and lines[0].kv["workload"] == "team-a/Deployment/web"  # once per workload

    honest, _ = pod_view_for(_pod("web-3", "cpu=2.5,mem=4,net=120"), requests=REQ,
                             annotation_key="drsched.io/profile", store=store)
    assert honest.demand_source == "annotation" and honest.demand[0] == 2.5


def test_threshold_zero_and_seeds_never_overrule() -> None:
    registry = CollectorRegistry()
    believing = _store(samples=6, registry=registry, fraction=0.0)
    view, _ = pod_view_for(_pod("web-1", "cpu=0.01"), requests=REQ, annotation_key="drsched.io/profile",
                           store=believing)
    assert view.demand_source == "annotation"
    seeded = LearnedProfileStore(min_samples=6, half_life_s=600,
                                 trust=AnnotationTrust(fraction=0.5, registry=CollectorRegistry()))
    seeded.put("team-a/Deployment/web", LEARNED)  # a static seed is a claim too, not a measurement
    view, _ = pod_view_for(_pod("web-1", "cpu=0.01"), requests=REQ, annotation_key="drsched.io/profile",
                           store=seeded)
    assert view.demand_source == "annotation"
