"""The migration record: round trip, every allowed transition, and refusals."""

from __future__ import annotations

import itertools
import json

import pytest

from migration.errors import RecordError
from migration.record import (
    ANNOTATION,
    ANY_NODE,
    OUTCOMES_FROM,
    TRANSITIONS,
    MigrationRecord,
    Outcome,
    Resume,
    Step,
    new_record,
    window_name,
)


def rec(**kw) -> MigrationRecord:
    base = dict(namespace="ns", base="job", attempt=1, source_pod="job", source_uid="u1", source_node="a",
                target="b", fallbacks=("c",), now=100.0, reason="slow", units_total=1000, checkpoint_units=200)
    base.update(kw)
    return new_record(**base)


def at(step: Step) -> MigrationRecord:
    """A record that reached ``step`` along the happy path."""
    r = rec()
    path = [Step.EVICTING, Step.SOURCE_GONE, Step.PLACING, Step.RUNNING]
    for s in path[: path.index(step) + 1] if step in path else []:
        r = r.with_outcome(s, now=r.step_since + 1)
    return r


def test_new_record_candidates_are_target_fallbacks_then_anywhere_never_the_source():
    r = rec(fallbacks=("c", "b", "a"))
    assert r.candidates == ("b", "c", ANY_NODE), "the source 'a' is dropped"
    assert rec(target="a", fallbacks=()).candidates == (ANY_NODE,)
    assert r.next_candidate() == 0 and r.next_candidate(1) == 2 and r.next_candidate(2) is None
    assert (r.step, r.successor, r.target, r.placement, r.window) == (Step.RESERVED, "job-m1", "b", "b",
                                                                      "drsched-migration-job")
    assert rec(attempt=3).successor == "job-m3"
    assert window_name("x" * 300) == ("drsched-migration-" + "x" * 300)[:253]


@pytest.mark.parametrize("step", list(Step))
def test_round_trip_at_every_step(step):
    r = at(step) if step is not Step.RELEASED else rec().with_outcome(Step.RELEASED, now=5, outcome=Outcome.POD_GONE)
    stored = r.for_storage()
    assert list(stored) == [ANNOTATION]
    assert MigrationRecord.from_storage({**stored, "other": "x"}) == r


def test_no_annotation_is_no_record():
    assert MigrationRecord.from_storage({}) is None
    assert MigrationRecord.from_storage(None) is None


@pytest.mark.parametrize("src,dst", [(s, d) for s in Step for d in TRANSITIONS[s] if d is not Step.RELEASED])
def test_every_allowed_transition(src, dst):
    r = at(src)
    nxt = r.with_outcome(dst, now=r.step_since + 10)
    assert nxt.step is dst and nxt.outcome is None
    assert nxt.step_since == (r.step_since if dst is src else r.step_since + 10)
    assert r.step is src, "records are immutable: with_outcome returns a new one"


@pytest.mark.parametrize("src,outcome", [(s, o) for s, outs in OUTCOMES_FROM.items() for o in outs])
def test_every_allowed_release(src, outcome):
    r = at(src).with_outcome(Step.RELEASED, now=500.0, outcome=outcome, detail="why")
    assert (r.step, r.outcome, r.detail) == (Step.RELEASED, outcome, "why")


@pytest.mark.parametrize("src,dst", [(s, d) for s, d in itertools.product(Step, Step) if d not in TRANSITIONS[s]])
def test_invalid_transitions_are_refused(src, dst):
    r = at(src) if src is not Step.RELEASED else rec().with_outcome(Step.RELEASED, now=1, outcome=Outcome.POD_GONE)
    with pytest.raises(RecordError, match="not allowed"):
        r.with_outcome(dst, now=1.0, outcome=Outcome.POD_GONE if dst is Step.RELEASED else None)


@pytest.mark.parametrize("src,outcome", [(Step.SOURCE_GONE, Outcome.ROLLED_BACK), (Step.PLACING, Outcome.ROLLED_BACK),
                                         (Step.RUNNING, Outcome.ROLLED_BACK), (Step.RESERVED, Outcome.COMPLETED)])
def test_outcomes_that_cannot_end_a_step_are_refused(src, outcome):
    with pytest.raises(RecordError):
        at(src).with_outcome(Step.RELEASED, now=1.0, outcome=outcome)


def test_release_needs_an_outcome_and_only_release_has_one():
    with pytest.raises(RecordError):
        rec().with_outcome(Step.RELEASED, now=1.0)
    with pytest.raises(RecordError):
        rec().with_outcome(Step.EVICTING, now=1.0, outcome=Outcome.COMPLETED)


def test_identity_fields_cannot_change():
    with pytest.raises(RecordError, match="cannot change"):
        rec().with_outcome(Step.EVICTING, now=1.0, source_node="elsewhere")


def test_next_candidate_restarts_the_step_timer():
    r = at(Step.PLACING)
    same = r.with_outcome(Step.PLACING, now=r.step_since + 30, successor_uid="u")
    nxt = r.with_outcome(Step.PLACING, now=r.step_since + 30, candidate=1)
    assert same.step_since == r.step_since and nxt.step_since == r.step_since + 30


@pytest.mark.parametrize("raw", ["{", "[]", json.dumps({"format": 2}), json.dumps({"format": 1, "job": "x"}),
                                 None])
def test_garbled_storage_is_a_record_error(raw):
    good = json.loads(rec().for_storage()[ANNOTATION])
    if raw is None:
        raw = json.dumps({**good, "step": "flying"})
    with pytest.raises(RecordError):
        MigrationRecord.from_storage({ANNOTATION: raw})


def test_unknown_fields_and_bad_types_are_refused():
    good = json.loads(rec().for_storage()[ANNOTATION])
    for bad in ({**good, "extra": 1}, {**good, "attempt": "1"}, {**good, "candidate": 9}, {**good, "attempt": 0}):
        with pytest.raises(RecordError):
            MigrationRecord.from_storage({ANNOTATION: json.dumps(bad)})


def test_resume_round_trips_and_an_older_record_without_it_resumes_from_the_checkpoint():
    scratch = rec(resume=Resume.SCRATCH)
    assert MigrationRecord.from_storage(scratch.for_storage()) == scratch
    doc = json.loads(rec().for_storage()[ANNOTATION])
    del doc["resume"]
    assert MigrationRecord.from_storage({ANNOTATION: json.dumps(doc)}).resume is Resume.CHECKPOINT
    with pytest.raises(RecordError, match="resume|sideways"):
        MigrationRecord.from_storage({ANNOTATION: json.dumps({**doc, "resume": "sideways"})})
