"""Persistence of learned profiles: atomic JSON round trip, corrupt files, pruning, save failures."""

import json
import logging
import math

import numpy as np
import pytest
from prometheus_client import CollectorRegistry

from extender.profile_learning import PodSample
from extender.profile_store import (
    InMemoryProfileStore,
    JsonFileBackend,
    LearnedProfileStore,
    ProfileMetrics,
    ProfileStore,
    ProfileStoreError,
    decode,
)


def learn(store, key="ns/Job/a", n=3, t0=1000.0, net=float("nan")):
    for i in range(n):
        store.observe([PodSample("u", "n", np.array([1.0 + i, 2.0, net, 4.0]), t0 + 10 * i)], {"u": key}.get)


def test_round_trip_keeps_profiles_exactly(tmp_path):
    path = tmp_path / "sub" / "profiles.json"
    a = LearnedProfileStore(min_samples=3, backend=JsonFileBackend(path), clock=lambda: 1100.0)
    learn(a)
    assert a.save()
    assert not list(path.parent.glob(".profiles.json.*"))          # no temp file left behind
    body = json.loads(path.read_text())
    assert body["version"] == 1 and body["profiles"]["ns/Job/a"]["demand"][2] is None  # NaN stored as null
    b = LearnedProfileStore(min_samples=3, backend=JsonFileBackend(path), clock=lambda: 1100.0)
    assert b.load() == 1
    np.testing.assert_allclose(b.get("ns/Job/a"), a.get("ns/Job/a"))
    assert b.describe() == a.describe()


@pytest.mark.parametrize("content", [
    "{not json", "[]", '{"version": 2, "profiles": {}}', '{"version": 1, "profiles": []}',
    '{"version": 1, "profiles": {"w": {"demand": [1, 2, 3], "samples": [1, 1, 1, 1], "first_seen": 0, '
    '"updated_at": 0}}}',
    '{"version": 1, "profiles": {"w": {"demand": [1, 2, 3, -4], "samples": [1, 1, 1, 1], "first_seen": 0, '
    '"updated_at": 0}}}',
    '{"version": 1, "profiles": {"w": {"demand": [1, 2, 3, 4]}}}',
    b"\xff\xfe\x00garbage",
])
def test_corrupt_file_is_logged_counted_moved_aside_and_the_store_starts_empty(tmp_path, caplog, content):
    path = tmp_path / "profiles.json"
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    metrics = ProfileMetrics(CollectorRegistry())
    store = LearnedProfileStore(backend=JsonFileBackend(path), metrics=metrics, clock=lambda: 1234.0)
    with caplog.at_level(logging.ERROR):
        assert store.load() == 0
    assert len(store) == 0
    assert "learned profiles unreadable" in caplog.text
    assert metrics.errors.labels(op="load")._value.get() == 1
    assert not path.exists() and (tmp_path / "profiles.json.corrupt-1234").exists()
    learn(store)
    assert store.save(force=True) and path.exists()                 # learning and saving go on


def test_missing_file_is_an_empty_store(tmp_path):
    assert LearnedProfileStore(backend=JsonFileBackend(tmp_path / "none.json")).load() == 0


def test_decode_errors_name_the_problem():
    with pytest.raises(ProfileStoreError, match="profile 'w'"):
        decode('{"version": 1, "profiles": {"w": {"demand": "x"}}}')


def test_failed_save_is_counted_and_retried(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    metrics = ProfileMetrics(CollectorRegistry())
    store = LearnedProfileStore(backend=JsonFileBackend(blocker / "profiles.json"), metrics=metrics)
    learn(store)
    assert store.save() is False                                    # parent is a file: OSError
    assert metrics.errors.labels(op="save")._value.get() == 1
    store.backend = JsonFileBackend(tmp_path / "ok.json")
    assert store.save() is True and (tmp_path / "ok.json").exists()  # still dirty: saved now


def test_prune_drops_old_and_excess_profiles(tmp_path):
    store = LearnedProfileStore(backend=JsonFileBackend(tmp_path / "p.json"), ttl_s=100, max_profiles=2,
                                clock=lambda: 1000.0)
    learn(store, "ns/Job/old", n=1, t0=0.0)
    for i, key in enumerate(("ns/Job/x", "ns/Job/y", "ns/Job/z")):
        learn(store, key, n=1, t0=950.0 + i)
    store.save()
    assert set(json.loads((tmp_path / "p.json").read_text())["profiles"]) == {"ns/Job/y", "ns/Job/z"}


def test_gauges_count_trusted_and_learning():
    metrics = ProfileMetrics(CollectorRegistry())
    store = LearnedProfileStore(min_samples=3, metrics=metrics)
    learn(store, "ns/Job/a", n=3)
    learn(store, "ns/Job/b", n=1)
    assert metrics.profiles.labels(state="trusted")._value.get() == 1
    assert metrics.profiles.labels(state="learning")._value.get() == 1
    assert not math.isnan(store.get("ns/Job/a")[2])                 # unmeasured net served as 0
    assert store.get("ns/Job/b") is None


@pytest.mark.parametrize("make", [InMemoryProfileStore, LearnedProfileStore])
def test_every_store_is_a_complete_profile_store(make) -> None:
    """The request path, the watch and the debug routes call every ``ProfileStore`` method without probing."""
    store = make()
    assert isinstance(store, ProfileStore)
    pod = {"metadata": {"namespace": "ns", "name": "web-1", "labels": {"drsched.io/workload": "web"}}}
    assert store.workload_of(pod) == "ns/web"
    assert store.get("ns/web") is None and len(store) == 0 and store.describe() == {}
    store.put("ns/web", np.array([1.0, 2.0, 0.5, 0.25]))
    assert store.get("ns/web").tolist() == [1.0, 2.0, 0.5, 0.25] and len(store) == 1
    described = store.describe("ns/web")["ns/web"]
    assert described["served"] == [1.0, 2.0, 0.5, 0.25] and described["source"] == "static"
    assert store.describe("other") == {}
    # without a trust rule, an annotation's claim is believed (None: serve the claim)
    assert store.judge_annotation(pod="ns/web-1", workload="ns/web", claim=np.ones(4), requests=np.ones(2)) is None
