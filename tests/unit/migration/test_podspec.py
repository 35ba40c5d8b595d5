"""The successor pod body: same spec and volumes, renamed, with lineage and a required node affinity."""

from __future__ import annotations

from migration.podspec import is_successor_name, job_base, successor_body, template_of
from migration.record import MigrationRecord, Step, new_record

from .fakes import pod


def _record(placement_index: int = 0) -> MigrationRecord:
    r = new_record(namespace="default", base="job", attempt=2, source_pod="job-m1", source_uid="u", source_node="a",
                   target="b", fallbacks=(), now=1.0, reason="slow", units_total=10, checkpoint_units=5)
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


def test_successor_keeps_spec_and_volumes_and_pins_the_placement():
    body = successor_body(template_of(_source()), _record())
    meta, spec = body["metadata"], body["spec"]
    assert meta["name"] == "job-m2" and meta["labels"]["drsched.io/job"] == "job"
    assert meta["annotations"]["drsched.io/migrated-from"] == "job-m1"
    assert MigrationRecord.from_storage(meta["annotations"]).attempt == 2
    assert "drsched.io/progress" not in meta["annotations"]
    assert "nodeName" not in spec
    assert spec["volumes"] == [{"name": "state", "persistentVolumeClaim": {"claimName": "job-state"}}]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "state", "mountPath": "/state"}]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert len(terms) == 2 and all(t["matchFields"] == [{"key": "metadata.name", "operator": "In",
                                                         "values": ["b"]}] for t in terms)
    assert all(t["matchExpressions"] for t in terms), "the pod's own constraints still hold"


def test_last_candidate_adds_no_affinity():
    r = _record()
    last = r.with_outcome(Step.PLACING, now=5.0, candidate=len(r.candidates) - 1)
    plain = pod("job", node="a")
    assert "affinity" not in successor_body(template_of(plain), last)["spec"]


def test_job_identity():
    assert job_base(pod("job", node="a")) == "job"
    assert job_base(pod("job-m3", node="a", labels={"drsched.io/job": "job"})) == "job"
    assert is_successor_name("job-m3", "job") and not is_successor_name("jobx-m3", "job")
