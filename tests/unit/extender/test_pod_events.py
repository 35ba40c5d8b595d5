"""Pod watch events: every reader holds, from the pruned pod, exactly what it holds from the whole one -- for every
single change of every member of a KWOK-shaped pod at each of its events, and random sequences of them; ERRORs,
BOOKMARKs and shapes the schema refuses are decoded whole."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extender.kube import dict_watch_class, pod_record
from extender.kube_index import IndexingWatcher
from extender.outcomes import OutcomeTracker
from extender.pod_events import decode_pod_event
from extender.pod_index import PodIndex
from extender.profile_store import LearnedProfileStore
from extender.selection import PodSelector
from extender.settings import build_settings
from extender.telemetry import Telemetry
from kube.affinity import node_requirement
from kube.cache import ClusterCache, PodRecord
from kube.objects import UNSCHEDULABLE_TAINT, pod_key, tolerates
from kube.profiles import pod_view_for
from tests.unit.extender.test_node_events import leaves as all_paths
from tests.unit.extender.test_node_events import mutated, with_value

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from bench_watch import kwok_node, pod_steps  # noqa: E402  -- the pod's events as kube-apiserver sends them

SETTINGS = build_settings(None, log_level="WARNING", workload_labels=["app", "tier"])
MONITOR = {"app": "drsched-monitor"}
STEPS = pod_steps(7, "bench-0007")


def _rich(pod: dict) -> dict:
    """The bound pod with every member some reader reads only when present: a profile annotation, workload labels and
    an owner, a sidecar and an init container, overhead and pod-level requests, a node selector and affinity."""
    pod = copy.deepcopy(pod)
    meta, spec = pod["metadata"], pod["spec"]
    meta["labels"] = {"app": "web", "tier": "front", "pod-template-hash": "5d8f"}
    meta["annotations"] = {SETTINGS.profile_annotation: "cpu=1,mem=2,net=30", "other": "x"}
    meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f", "uid": "u1",
                                "controller": True, "blockOwnerDeletion": True}]
    spec["initContainers"] = [{"name": "proxy", "image": "fake", "restartPolicy": "Always",
                               "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}}},
                              {"name": "init", "image": "fake", "resources": {"requests": {"cpu": "1"}}}]
    spec["overhead"] = {"cpu": "10m"}
    spec["resources"] = {"requests": {"memory": "1Gi"}}
    spec["nodeSelector"] = {"type": "kwok"}
    spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}}
    return pod


def _agent(pod: dict) -> dict:
    """The Running pod as a node agent the pod index keeps (the monitor selector's labels, Ready, with an IP)."""
    pod = copy.deepcopy(pod)
    pod["metadata"]["labels"] = dict(MONITOR)
    return pod


def _terminated(pod: dict) -> dict:
    """The Running pod once its container ended: what outcomes reads (phase, the container's times)."""
    pod = copy.deepcopy(pod)
    pod["status"]["phase"] = "Succeeded"
    pod["status"]["containerStatuses"][0]["state"] = {"terminated": {
        "startedAt": "2026-12-04T17:00:02Z", "finishedAt": "2026-12-04T17:00:40Z", "exitCode": 0}}
    return pod


def _deleting(pod: dict) -> dict:
    """The pod once its deletion began (an agent being deleted is no longer one)."""
    pod = copy.deepcopy(pod)
    pod["metadata"]["deletionTimestamp"] = "2026-12-04T17:01:00Z"
    return pod


START_LIST = [(t, o) for t, o in STEPS] + [("MODIFIED", _rich(STEPS[1][1])), ("MODIFIED", _agent(STEPS[2][1])),
                                           ("MODIFIED", _deleting(_agent(STEPS[2][1]))),
                                           ("MODIFIED", _terminated(STEPS[2][1]))]
"""Each event of a scheduled pod, and the pods whose other members a reader reads."""


def leaves(pod: dict) -> list[tuple]:
    """Every member; of managedFields the whole and the first entry (the rest is more of the same)."""
    return [p for p in all_paths(pod) if p and not (p[:2] == ("metadata", "managedFields") and len(p) > 2 and p[2])]


VALUE_LIST = ["0", "1", "100m", "2Gi", "True", "False", "", "Running", "Succeeded", "Failed", "Pending", "Ready",
              "PodScheduled", "Always", "DaemonSet", "drsched-monitor", "2026-12-04T17:00:05Z", "cpu=2", 7, 2.5, -1,
              None, True, [], {}, {"cpu": "1"}, {"requests": {"cpu": "2"}}, [{"resources": {"requests": {"cpu": "1"}}}],
              [{"type": "Ready", "status": "True"}], {"running": {"startedAt": "2026-12-04T17:00:03Z"}},
              {"terminated": {"startedAt": "2026-12-04T17:00:03Z", "finishedAt": "2026-12-04T17:00:09Z"}},
              [{"kind": "DaemonSet", "name": "d", "controller": True}], {"app": "drsched-monitor"},
              [{"key": "k", "operator": "Exists"}], "not an object"]
VALUES = st.sampled_from(VALUE_LIST)


def _attempt(fn, *args):
    """What a reader gives, or the error it raises on a shape the apiserver never sends (read alike, whole or not)."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 -- any error: the two reads must fail alike
        return f"raised {exc!r}"


def _record(rec: PodRecord | None):
    if rec is None:
        return None
    return (rec.namespace, rec.name, rec.uid, rec.node, rec.requests.tolist(), rec.demand.tolist(),
            rec.demand_source, rec.terminated, rec.bound_at, rec.daemon, rec.tolerations)


STORE = LearnedProfileStore(workload_labels=SETTINGS.workload_labels)
STORE.put("bench/Labels/app=web,tier=front", np.array([0.5, 1.0, 20.0, 0.0]))
PENDING = PodRecord(namespace="bench", name="p-00007", uid=STEPS[0][1]["metadata"]["uid"], node=None,
                    requests=np.array([0.1, 0.125]), demand=np.array([0.1, 0.125, 0.0, 0.0]))
SHADOWED = PodSelector.of(namespaces=["bench"], selector="app=web", scheduler_names=["drsched"])


def _read(event_type: str, pod) -> tuple:
    """Everything a reader of a watched pod holds after this event: the cache's record (and the profile problem it
    reports), the pod index's workload and agent, the outcome of a tracked pod, shadow mode's binding test and the
    members it reads on a binding, and the watch's resourceVersion."""
    def cache():
        view, problem = pod_view_for(pod, requests=np.zeros(2), annotation_key=SETTINGS.profile_annotation,
                                     store=STORE)
        rec = pod_record(pod, settings=SETTINGS, store=STORE, telemetry=None, now=1e9)
        return _record(rec), str(problem), view.workload

    def index():
        idx = PodIndex(selector=MONITOR, port=9100, workload_of=STORE.workload_of)
        idx.apply_pod(event_type, pod)
        return idx._workloads, idx.agents()

    def outcome():
        tracker = OutcomeTracker()
        tracker.track(pod_key(pod)[2])
        return tracker.observe(event_type, pod)

    def shadow():
        from extender.shadow import ShadowRecorder

        binding = ShadowRecorder.is_binding(type("S", (), {"selector": SHADOWED})(), event_type, pod, PENDING)
        taints = [UNSCHEDULABLE_TAINT, ("kwok.x-k8s.io/node", "fake", "NoSchedule")]
        return (binding, SHADOWED.matches(pod), node_requirement(pod), tolerates(pod, taints[1:]),
                tolerates(pod, taints), STORE.workload_of(pod), (pod.get("spec") or {}).get("schedulerName"))

    def version():
        meta = pod.get("metadata")
        return meta.get("resourceVersion") if isinstance(meta, dict) else None

    return tuple(_attempt(f) for f in (cache, index, outcome, shadow, version))


def _check(event_type: str, pod: dict) -> None:
    line = orjson.dumps({"type": event_type, "object": pod})
    event = decode_pod_event(line)
    assert event["type"] == event_type
    assert _read(event_type, event["object"]) == _read(event_type, pod)


@pytest.mark.parametrize("start", range(len(START_LIST)))
def test_every_single_change_of_every_member_reads_as_the_whole_pod(start):
    event_type, pod = START_LIST[start]
    _check(event_type, pod)
    for path in leaves(pod):
        _check(event_type, with_value(pod, path, None, delete=True))
        for value in VALUE_LIST:
            _check(event_type, with_value(pod, path, value, delete=False))


MUTATION = st.tuples(st.sampled_from(sorted({p for _, o in START_LIST for p in leaves(o)}, key=repr)), VALUES,
                     st.booleans())


@settings(max_examples=400, deadline=None)
@given(start=st.sampled_from(range(len(START_LIST))), mutations=st.lists(MUTATION, max_size=4))
def test_random_changes_read_as_the_whole_pod(start, mutations):
    event_type, pod = START_LIST[start]
    _check(event_type, mutated(pod, mutations))


def test_the_pruned_pod_leaves_out_what_no_reader_reads():
    event = decode_pod_event(orjson.dumps({"type": "MODIFIED", "object": STEPS[2][1]}))
    pod = event["object"]
    assert set(pod) == {"metadata", "spec", "status"} and "managedFields" not in pod["metadata"]
    assert "volumes" not in pod["spec"] and pod["spec"]["containers"] == [
        {"resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]
    assert pod["status"]["containerStatuses"] == [{"state": {"running": {"startedAt": "2026-12-04T17:00:02Z"}}}]
    assert all(set(c) == {"type", "status", "lastTransitionTime"} for c in pod["status"]["conditions"])


def _whole(line: bytes):
    return orjson.loads(line)


@pytest.mark.parametrize("event", [
    {"type": "ERROR", "object": {"kind": "Status", "status": "Failure", "code": 410, "message": "too old"}},
    {"type": "ERROR", "object": {"kind": "Status", "code": 500}},  # a Status the schema would take: whole anyway
    {"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "9", "annotations": {
        "k8s.io/initial-events-end": "true"}}, "spec": {"containers": None}}},
    {"type": "MODIFIED", "object": with_value(STEPS[2][1], ("spec", "containers", 0), "not an object", delete=False)},
    {"type": "MODIFIED", "object": with_value(STEPS[2][1], ("status", "conditions", 1), 7, delete=False)},
    {"type": "ADDED", "object": with_value(STEPS[0][1], ("spec",), None, delete=False)},
    {"type": "ADDED", "object": None},
    {"type": "ADDED"},
    {"type": 7, "object": STEPS[0][1]},
    {"type": ["ADDED"], "object": STEPS[0][1]},
    {"object": STEPS[0][1]},
    [1, 2],
])
def test_errors_bookmarks_and_shapes_the_schema_refuses_are_decoded_whole(event):
    line = orjson.dumps(event)
    assert decode_pod_event(line) == _whole(line)


def test_the_pod_watch_decodes_what_is_read_and_skips_what_is_not_json():
    w = dict_watch_class("pods")()
    running = STEPS[2][1]
    event = w.unmarshal_event(orjson.dumps({"type": "MODIFIED", "object": running}).decode(), None)
    assert "managedFields" not in event["object"]["metadata"] and event["raw_object"] is event["object"]
    assert w.resource_version == running["metadata"]["resourceVersion"]
    error = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old resource version"}}
    assert w.unmarshal_event(orjson.dumps(error).decode(), None)["raw_object"] == error["object"]
    assert w.resource_version == running["metadata"]["resourceVersion"]
    assert w.unmarshal_event("{not json", None) is None
    assert w.unmarshal_event('{"type": "ADDED", "object": {"metadata": {"name": "\\ud800"}}}', None) is None


def _served(shadow: bool):
    from extender.recording import Recording
    from extender.runtime import load_policy, thresholds_of

    s = build_settings(None, policy="demand-aware", log_level="WARNING", shadow=shadow,
                       shadow_scheduler_names=["default-scheduler", "drsched"], workload_labels=["app", "tier"])
    telemetry, cache = Telemetry(), ClusterCache(assume_grace_s=s.assume_grace_s)
    policy, _ = load_policy(s, telemetry)
    recording = Recording(s, cache=cache, policy=policy, telemetry=telemetry, thresholds=thresholds_of(s))
    index = PodIndex(selector=MONITOR, port=9100, workload_of=STORE.workload_of)
    watcher = IndexingWatcher(None, cache, s, store=STORE, telemetry=telemetry, index=index,
                              observer=recording.observe_pod)
    for i in range(20):
        watcher._apply("nodes", "ADDED", kwok_node(f"bench-{i:04d}", 0))
    return watcher, recording


def _held(watcher, recording) -> tuple:
    cache = watcher.cache
    pods = sorted((uid, _record(rec)) for uid, rec in cache._pods.items())
    view = cache.view()
    recent = [{k: v for k, v in r.items() if k != "at"} for r in recording.summary()["recent"]]
    summary = {k: v for k, v in recording.summary().items() if k != "recent"}
    return (pods, view.requested.tolist(), view.pods.tolist(), view.assumed.tolist(), watcher.index._workloads,
            watcher.index.agents(), summary, recent)


def test_a_served_watch_holds_the_same_after_scheduled_pods_shadowed_and_ended():
    """The same events through the service's wiring (cache, pod index, shadow mode and outcomes), decoded pruned
    and whole: the same records, node sums, index and shadow comparisons."""
    lines = []
    for i in range(12):
        steps = pod_steps(i, f"bench-{i % 20:04d}")
        if i % 3 == 0:
            steps = [(t, _rich(o) if t != "ADDED" else o) for t, o in steps]
        if i % 4 == 1:
            steps[2] = ("MODIFIED", _terminated(steps[2][1]))
        if i % 5 == 2:
            steps[2] = ("MODIFIED", _agent(steps[2][1]))
        lines += [orjson.dumps({"type": t, "object": o}).decode() for t, o in (steps if i % 2 else steps[:3])]
    held = []
    for decode in (decode_pod_event, orjson.loads):
        watcher, recording = _served(shadow=True)
        for line in lines:
            event = decode(line)
            watcher._apply("pods", event["type"], event["object"])
        held.append(_held(watcher, recording))
    assert held[0] == held[1]
    assert held[0][6]["bindings"]["recorded"] > 0  # shadow mode compared bindings
