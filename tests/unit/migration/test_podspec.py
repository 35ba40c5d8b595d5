"""The successor pod body: same spec and volumes, renamed, with lineage and required node affinity: pinned to
its placement, never back on the node it left (also on a second move), and without state for ``scratch``."""

from __future__ import annotations

import copy

import pytest

from migration.podspec import is_successor_name, job_base, successor_body, template_of
from migration.record import ANY_NODE, MigrationRecord, Resume, Step, new_record

from .fakes import pod

NAME = "metadata.name"


def _record(placement_index: int = 0, *, source_node: str = "a", target: str = "b", fallbacks=("c",),
            attempt: int = 2) -> MigrationRecord:
    r = new_record(namespace="default", base="job", attempt=attempt, source_pod="job-m1", source_uid="u",
                   source_node=source_node, target=target, fallbacks=fallbacks, now=1.0, reason="slow",
                   units_total=10, checkpoint_units=5)
    for step in (Step.EVICTING, Step.SOURCE_GONE, Step.PLACING):
        r = r.with_outcome(step, now=2.0)
    return r.with_outcome(Step.PLACING, now=3.0, candidate=placement_index) if placement_index else r


def _source() -> dict:
    p = pod("job-m1", node="a", progress="{}", labels={"drsched.io/job": "job"})
    p["spec"]["volumes"] = [{"name": "state", "persistentVolumeClaim": {"claimName": "job-state"}},
                            {"name": "kube-api-access-x1y2z", "projected": {}}]
    p["spec"]["containers"][0]["volumeMounts"] = [{"name": "state", "mountPath": "/state"},
                                                  {"name": "kube-api-access-x1y2z", "mountPath": "/var/run/secrets"}]
    p["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]},
                              {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["spare"]}]}]}}}
    return p


def _terms(body: dict) -> list[dict]:
    return body["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]


def _in(node: str) -> dict:
    return {"key": NAME, "operator": "In", "values": [node]}


def _not_in(node: str) -> dict:
    return {"key": NAME, "operator": "NotIn", "values": [node]}


def test_successor_keeps_spec_and_volumes_and_pins_the_placement_away_from_the_source():
    body = successor_body(template_of(_source()), _record())
    meta, spec = body["metadata"], body["spec"]
    assert meta["name"] == "job-m2" and meta["labels"]["drsched.io/job"] == "job"
    assert meta["annotations"]["drsched.io/migrated-from"] == "job-m1"
    assert MigrationRecord.from_storage(meta["annotations"]).attempt == 2
    assert "drsched.io/progress" not in meta["annotations"]
    assert "nodeName" not in spec
    assert spec["volumes"] == [{"name": "state", "persistentVolumeClaim": {"claimName": "job-state"}}]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "state", "mountPath": "/state"}]
    terms = _terms(body)
    assert len(terms) == 2 and all(t["matchFields"] == [_in("b"), _not_in("a")] for t in terms), terms
    assert all(t["matchExpressions"] for t in terms), "the pod's own constraints still hold"


@pytest.mark.parametrize("own", [None, [{"key": NAME, "operator": "NotIn", "values": ["z"]}]],
                         ids=["no-own-fields", "own-fields-kept"])
def test_last_candidate_still_excludes_the_source(own):
    r = _record()
    last = r.with_outcome(Step.PLACING, now=5.0, candidate=len(r.candidates) - 1)
    assert last.placement == ANY_NODE
    plain = pod("job", node="a")
    if own:
        plain["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": copy.deepcopy(own)}]}}}
    (term,) = _terms(successor_body(template_of(plain), last))
    assert term["matchFields"] == [*(own or []), _not_in("a")]


def test_every_candidate_of_a_record_excludes_the_source():
    r = _record(fallbacks=("c", "a"))
    for i in range(len(r.candidates)):
        fields = _terms(successor_body(template_of(pod("job", node="a")), r.with_outcome(
            Step.PLACING, now=5.0, candidate=i)))[0]["matchFields"]
        assert _not_in("a") in fields and _in("a") not in fields


def _moved_pod(first: MigrationRecord, own_spec: dict) -> dict:
    """The first move's successor as the API server returns it: its body, bound to its placement."""
    body = successor_body(template_of({"metadata": {"name": "job", "namespace": "default", "labels": {},
                                                    "annotations": {}}, "spec": own_spec}), first)
    body["spec"]["nodeName"] = first.placement or "x"
    return body


@pytest.mark.parametrize("own_spec", [
    {"containers": [{"name": "main"}]},
    {"containers": [{"name": "main"}], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}]}}}},
], ids=["no-own-affinity", "own-affinity"])
def test_a_second_move_drops_the_first_moves_affinity(own_spec):
    """Without this the second successor required In [b] and In [c] at once: unschedulable everywhere but
    back on its source b by the old fallback chain, the restart in place the lab saw."""
    first = _record(source_node="a", target="b", fallbacks=(), attempt=1)
    moved = _moved_pod(first, copy.deepcopy(own_spec))
    template = template_of(moved)
    assert template["spec"].get("affinity") == own_spec.get("affinity"), "back to the job's own constraints"
    second = _record(source_node="b", target="c", fallbacks=(), attempt=2)
    (term,) = _terms(successor_body(template, second))
    assert term["matchFields"] == [_in("c"), _not_in("b")], "pinned to c, away from b only (a may take it back)"
    if "affinity" in own_spec:
        assert term["matchExpressions"] == [{"key": "pool", "operator": "In", "values": ["batch"]}]


def test_scratch_replaces_state_volumes_with_empty_ones_and_keeps_config():
    src = _source()
    src["spec"]["volumes"] += [{"name": "cfg", "configMap": {"name": "c"}},
                               {"name": "host", "hostPath": {"path": "/srv/job", "type": "Directory"}},
                               {"name": "tmp", "emptyDir": {}}]
    checkpoint = template_of(src)
    scratch = template_of(src, resume=Resume.SCRATCH)
    assert checkpoint["spec"]["volumes"][0] == {"name": "state", "persistentVolumeClaim": {"claimName": "job-state"}}
    assert scratch["spec"]["volumes"] == [{"name": "state", "emptyDir": {}},
                                          {"name": "cfg", "configMap": {"name": "c"}},
                                          {"name": "host", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}]
    assert scratch["spec"]["containers"] == checkpoint["spec"]["containers"], "mounts unchanged: same paths, empty"


def test_job_identity():
    assert job_base(pod("job", node="a")) == "job"
    assert job_base(pod("job-m3", node="a", labels={"drsched.io/job": "job"})) == "job"
    assert is_successor_name("job-m3", "job") and not is_successor_name("jobx-m3", "job")
