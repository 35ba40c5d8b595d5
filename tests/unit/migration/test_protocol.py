"""The protocol's pure step function: one row per (step, observation)."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from migration.protocol import Effect, PodState, Timeouts, plan
from migration.record import MigrationRecord, Outcome, Resume, Step, new_record
from workloads.progress import CheckpointRef, Progress

T = Timeouts(evict_s=100, place_s=50, resume_s=200)


def rec(step: Step = Step.RESERVED, **changes):
    r = new_record(namespace="ns", base="job", attempt=1, source_pod="job", source_uid="src", source_node="a",
                   target="b", fallbacks=("c",), now=0.0, reason="slow", units_total=1000, checkpoint_units=200)
    path = [Step.EVICTING, Step.SOURCE_GONE, Step.PLACING, Step.RUNNING]
    for s in path[: path.index(step) + 1] if step in path else []:
        r = r.with_outcome(s, now=0.0, **(changes if s is step else {}))
    return r


def prog(*, ckpt: int | None = 200, state: str = "running", resumed_from: int = 0) -> Progress:
    ref = CheckpointRef(units_done=ckpt, path="p", sha256="a" * 64, at=1.0) if ckpt is not None else None
    return Progress(kind="cpu", units_done=max(ckpt or 0, 250), units_total=1000, progress=0.25, rate=1.0,
                    started_at=0.0, updated_at=1.0, checkpoint=ref, state=state, pid=1, resumed_from=resumed_from)


SRC = PodState(uid="src", phase="Running", node="a")
LINEAGE = rec(Step.PLACING)


def succ(**kw) -> PodState:
    return PodState(**{"uid": "s1", "phase": "Pending", "lineage": LINEAGE, **kw})


@pytest.mark.parametrize("record,source,successor,now,step,effect,outcome", [
    # reserved
    (rec(), SRC, None, 1, Step.EVICTING, Effect.EVICT, None),
    (rec(), None, None, 1, Step.RELEASED, Effect.NONE, Outcome.POD_GONE),
    (rec(), PodState(uid="other", phase="Running"), None, 1, Step.RELEASED, Effect.NONE, Outcome.POD_GONE),
    (rec(), PodState(uid="src", phase="Succeeded"), None, 1, Step.RELEASED, Effect.NONE, Outcome.FINISHED),
    # evicting
    (rec(Step.EVICTING), SRC, None, 1, Step.EVICTING, Effect.EVICT, None),                   # retry (PDB said 429)
    (rec(Step.EVICTING), SRC, None, 101, Step.RELEASED, Effect.NONE, Outcome.ROLLED_BACK),   # refused too long
    (rec(Step.EVICTING), PodState(uid="src", phase="Running", deleting=True), None, 500, Step.EVICTING, Effect.NONE,
     None),                                                                                  # stopping: wait
    (rec(Step.EVICTING), None, None, 1, Step.SOURCE_GONE, Effect.NONE, None),
    (rec(Step.EVICTING), PodState(uid="x", phase="Running"), None, 1, Step.RELEASED, Effect.NONE, Outcome.POD_GONE),
    (rec(Step.EVICTING), PodState(uid="src", phase="Succeeded"), None, 1, Step.RELEASED, Effect.NONE,
     Outcome.FINISHED),
    # source gone
    (rec(Step.SOURCE_GONE), None, None, 1, Step.PLACING, Effect.CREATE, None),
    # placing
    (rec(Step.PLACING), None, None, 1, Step.PLACING, Effect.CREATE, None),                   # create (again)
    (rec(Step.PLACING, successor_uid="s1"), None, None, 1, Step.RELEASED, Effect.NONE, Outcome.POD_GONE),
    (rec(Step.PLACING), None, succ(), 1, Step.PLACING, Effect.NONE, None),                   # adopt its uid
    (rec(Step.PLACING, successor_uid="s1"), None, succ(), 1, Step.PLACING, Effect.NONE, None),  # wait for the scheduler
    (rec(Step.PLACING, successor_uid="s1"), None, succ(unschedulable=True), 1, Step.PLACING, Effect.DELETE_SUCCESSOR,
     None),
    (rec(Step.PLACING, successor_uid="s1"), None, succ(), 51, Step.PLACING, Effect.DELETE_SUCCESSOR, None),
    (rec(Step.PLACING, successor_uid="s1"), None, succ(node="b", phase="Running"), 1, Step.RUNNING, Effect.NONE, None),
    (rec(Step.PLACING, successor_uid="s1"), None, succ(node="b"), 1, Step.PLACING, Effect.NONE, None),  # starting
    (rec(Step.PLACING, successor_uid="s1"), None, succ(phase="Failed"), 1, Step.RELEASED, Effect.NONE,
     Outcome.SUCCESSOR_FAILED),
    (rec(Step.PLACING, retiring_uid="s1"), None, succ(), 1, Step.PLACING, Effect.DELETE_SUCCESSOR, None),
    (rec(Step.PLACING, retiring_uid="s1"), None, succ(deleting=True), 1, Step.PLACING, Effect.NONE, None),
    (rec(Step.PLACING, retiring_uid="s1"), None, None, 1, Step.PLACING, Effect.CREATE, None),
    (rec(Step.PLACING), None, succ(lineage=None), 1, Step.PLACING, Effect.NONE, None),      # a foreign pod: wait
    # running
    (rec(Step.RUNNING, successor_uid="s1"), None, succ(phase="Running", progress=prog(resumed_from=200)), 1,
     Step.RELEASED, Effect.NONE, Outcome.COMPLETED),
    (rec(Step.RUNNING, successor_uid="s1"), None, succ(phase="Running", progress=prog(resumed_from=100)), 1,
     Step.RELEASED, Effect.NONE, Outcome.UNCONFIRMED),
    (rec(Step.RUNNING, successor_uid="s1"), None, succ(phase="Running"), 1, Step.RUNNING, Effect.NONE, None),
    (rec(Step.RUNNING, successor_uid="s1"), None, succ(phase="Running"), 201, Step.RELEASED, Effect.NONE,
     Outcome.UNCONFIRMED),
    (rec(Step.RUNNING, successor_uid="s1"), None, None, 1, Step.RELEASED, Effect.NONE, Outcome.POD_GONE),
    (rec(Step.RUNNING, successor_uid="s1"), None, succ(phase="Failed"), 1, Step.RELEASED, Effect.NONE,
     Outcome.SUCCESSOR_FAILED),
    (rec(Step.RUNNING, successor_uid="s1"), None, succ(phase="Succeeded"), 1, Step.RELEASED, Effect.NONE,
     Outcome.COMPLETED),
])
def test_plan(record, source, successor, now, step, effect, outcome):
    p = plan(record, source=source, successor=successor, now=now, timeouts=T)
    assert (p.record.step, p.effect, p.record.outcome) == (step, effect, outcome)


def test_released_record_asks_for_release():
    r = rec().with_outcome(Step.RELEASED, now=1, outcome=Outcome.POD_GONE)
    assert plan(r, source=None, successor=None, now=2).effect is Effect.RELEASE


def test_a_stopping_source_confirms_its_final_checkpoint():
    stopping = PodState(uid="src", phase="Running", deleting=True, progress=prog(ckpt=230, state="checkpointing"))
    p = plan(rec(Step.EVICTING), source=stopping, successor=None, now=1, timeouts=T)
    assert (p.record.checkpoint_units, p.record.checkpoint_final, p.effect) == (230, True, Effect.NONE)
    gone = plan(p.record, source=None, successor=None, now=2, timeouts=T).record
    assert gone.step is Step.SOURCE_GONE and "final checkpoint at units 230" in gone.detail


def test_unplaceable_successor_moves_to_the_next_candidate_then_anywhere_but_the_source():
    r = rec(Step.PLACING, successor_uid="s1")
    seen = [r.placement]
    for i in range(len(r.candidates) - 1):
        p = plan(r, source=None, successor=succ(uid=f"s{i + 1}", unschedulable=True), now=1, timeouts=T)
        assert p.effect is Effect.DELETE_SUCCESSOR and p.record.retiring_uid == f"s{i + 1}"
        p = plan(p.record, source=None, successor=None, now=1, timeouts=T)  # the attempt is gone
        assert p.effect is Effect.CREATE and p.record.retiring_uid is None
        r = p.record.with_outcome(Step.PLACING, now=1, successor_uid=f"s{i + 2}")
        seen.append(r.placement)
    assert seen == ["b", "c", ""], "the source 'a' is never tried"
    last = plan(r, source=None, successor=succ(uid=r.successor_uid, unschedulable=True), now=1000, timeouts=T)
    assert last.effect is Effect.NONE and last.record == r, "the last candidate waits Pending: never lost"


def test_a_record_that_still_names_the_source_skips_it():
    """A window written before the source was dropped from the candidates (an upgrade mid-flight)."""
    old = MigrationRecord(**{**asdict(rec(Step.SOURCE_GONE)), "candidates": ("a", "b", "a", "")})
    p = plan(old, source=None, successor=None, now=1, timeouts=T)
    assert (p.record.placement, p.effect) == ("b", Effect.CREATE)
    r = p.record.with_outcome(Step.PLACING, now=1, successor_uid="s1")
    p = plan(r, source=None, successor=succ(uid="s1", unschedulable=True), now=2, timeouts=T)
    assert p.record.placement == "" and p.record.candidate == 3, "index 2 names the source: dropped"


@pytest.mark.parametrize(("resumed_from", "outcome"), [(0, Outcome.COMPLETED), (200, Outcome.UNCONFIRMED)])
def test_scratch_resume_is_complete_only_from_zero(resumed_from, outcome):
    r = new_record(namespace="ns", base="job", attempt=1, source_pod="job", source_uid="src", source_node="a",
                   target="b", fallbacks=(), now=0.0, reason="slow", units_total=1000, checkpoint_units=200,
                   resume=Resume.SCRATCH)
    for s in (Step.EVICTING, Step.SOURCE_GONE, Step.PLACING, Step.RUNNING):
        r = r.with_outcome(s, now=0.0)
    p = plan(r, source=None, successor=succ(phase="Running", progress=prog(resumed_from=resumed_from)), now=1,
             timeouts=T)
    assert p.record.outcome is outcome and p.record.resumed_from == resumed_from


def test_scratch_says_so_when_the_source_is_gone():
    r = new_record(namespace="ns", base="job", attempt=1, source_pod="job", source_uid="src", source_node="a",
                   target="b", fallbacks=(), now=0.0, reason="slow", units_total=1000, checkpoint_units=200,
                   resume=Resume.SCRATCH).with_outcome(Step.EVICTING, now=0.0)
    assert "starts from 0" in plan(r, source=None, successor=None, now=1, timeouts=T).record.detail
    assert "starts from 0" not in plan(rec(Step.EVICTING), source=None, successor=None, now=1, timeouts=T).record.detail


def test_no_checkpoint_resume_from_zero_is_complete():
    r = rec(Step.RUNNING, successor_uid="s1", checkpoint_units=None)
    p = plan(r, source=None, successor=succ(phase="Running", progress=prog(ckpt=None)), now=1, timeouts=T)
    assert p.record.outcome is Outcome.COMPLETED


@pytest.mark.parametrize(("record", "source", "step", "effect", "outcome"), [
    (rec(), SRC, Step.RELEASED, Effect.NONE, Outcome.ROLLED_BACK),                    # before the first eviction
    (rec(Step.EVICTING), SRC, Step.RELEASED, Effect.NONE, Outcome.ROLLED_BACK),       # a PDB still holds it
    (rec(Step.EVICTING), PodState(uid="src", phase="Running", deleting=True), Step.EVICTING, Effect.NONE, None),
], ids=["reserved", "evicting", "already-stopping"])
def test_no_room_but_the_source_rolls_back_until_the_source_is_stopping(record, source, step, effect, outcome):
    p = plan(record, source=source, successor=None, now=1, timeouts=T, room=False)
    assert (p.record.step, p.effect, p.record.outcome) == (step, effect, outcome)
    if outcome is not None:
        assert "keeps running where it is" in p.record.detail
