"""The migration protocol as a pure step function: (record, what the API shows) -> (next record, one effect).

Why it exists: the executor must survive a kill between any two calls, so every decision about *what to do
next* is a function of the stored record and a fresh observation of the two pods, and is table-tested
without an API server (``tests/unit/migration/test_protocol.py``). The executor stores the new record
first (write-ahead), then performs the effect, then observes again.

Safety (``migration/README.md``): the successor is created only once the source pod *object* is gone
(a Terminating pod may still be writing its checkpoint), and a failed placement attempt is deleted and
confirmed gone before the next one is created, so a job never has two pods; the record stays on the window
Lease until a successor exists, so a job is never left with none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from kube.objects import TERMINAL_PHASES
from migration.errors import RecordError
from migration.record import MigrationRecord, Outcome, Resume, Step
from workloads.progress import Progress


@dataclass(frozen=True)
class PodState:
    """What the protocol needs of one pod, read fresh from the API server."""

    uid: str
    phase: str
    node: str | None = None
    deleting: bool = False
    unschedulable: bool = False
    lineage: MigrationRecord | None = None   # the record annotation on a successor
    progress: Progress | None = None

    @classmethod
    def of(cls, pod: Mapping, progress: Progress | None = None) -> PodState:
        meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
        unschedulable = any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                            and c.get("reason") == "Unschedulable" for c in status.get("conditions") or [])
        try:
            lineage = MigrationRecord.from_storage(meta.get("annotations"))
        except RecordError:
            lineage = None
        return cls(uid=str(meta.get("uid") or ""), phase=str(status.get("phase") or "Pending"),
                   node=spec.get("nodeName") or None, deleting=bool(meta.get("deletionTimestamp")),
                   unschedulable=unschedulable, lineage=lineage, progress=progress)


@dataclass(frozen=True)
class Timeouts:
    evict_s: float = 300.0
    """How long an eviction may be refused (a PodDisruptionBudget) before the migration is rolled back."""
    place_s: float = 60.0
    """How long a successor may stay unbound on one candidate before the next candidate is tried."""
    resume_s: float = 300.0
    """How long a running successor has to report that it resumed before the outcome is 'unconfirmed'."""


class Effect(StrEnum):
    NONE = "none"                            # wait and observe again later
    EVICT = "evict"                          # Eviction API on the source (SIGTERM; a PDB may refuse: retry)
    CREATE = "create"                        # create the successor for record.placement
    DELETE_SUCCESSOR = "delete-successor"    # delete the unplaceable attempt record.retiring_uid
    RELEASE = "release"                      # delete the window Lease


@dataclass(frozen=True)
class Plan:
    record: MigrationRecord
    effect: Effect


def _ours(record: MigrationRecord, pod: PodState) -> bool:
    lin = pod.lineage
    return lin is not None and (lin.job, lin.attempt, lin.started_at) == (record.job, record.attempt, record.started_at)


def _checkpoint_seen(record: MigrationRecord, progress: Progress | None) -> MigrationRecord | None:
    """The record with a newer checkpoint / the final-checkpoint flag from the source's progress, or None."""
    if progress is None:
        return None
    units = progress.checkpoint.units_done if progress.checkpoint is not None else None
    newer = units is not None and (record.checkpoint_units is None or units > record.checkpoint_units)
    final = progress.state == "checkpointing" and not record.checkpoint_final
    if not (newer or final):
        return None
    return record.with_outcome(Step.EVICTING, now=record.step_since,
                               checkpoint_units=units if newer else record.checkpoint_units,
                               checkpoint_final=record.checkpoint_final or progress.state == "checkpointing")


_NO_ROOM = "no node but the source fits it now: not moved, it keeps running where it is"


def plan(record: MigrationRecord, *, source: PodState | None, successor: PodState | None, now: float,
         timeouts: Timeouts = Timeouts(), room: bool = True) -> Plan:
    """The next record and effect (module docstring). ``source``/``successor``: None when the pod is absent.

    ``room``: whether some node other than the source fits the job now (the controller's snapshot). Until
    the source is stopping, no room means roll back: a move never restarts the job where it was."""
    step = record.step
    if step is Step.RELEASED:
        return Plan(record, Effect.RELEASE)

    if step is Step.RESERVED:
        if source is None or source.uid != record.source_uid:
            return _release(record, now, Outcome.POD_GONE, "the pod was deleted before it was stopped")
        if source.phase in TERMINAL_PHASES and not source.deleting:
            return _release(record, now, Outcome.FINISHED, f"the pod ended {source.phase} before it was stopped")
        if not room and not source.deleting:
            return _release(record, now, Outcome.ROLLED_BACK, _NO_ROOM)
        return Plan(record.with_outcome(Step.EVICTING, now=now), Effect.EVICT)

    if step is Step.EVICTING:
        if source is None:
            detail = ("final checkpoint at units " if record.checkpoint_final else "newest checkpoint seen at units ")
            detail += str(record.checkpoint_units) if record.checkpoint_units is not None else "none (restart from 0)"
            if record.resume is Resume.SCRATCH:
                detail += "; not handed over (resume: scratch), the successor starts from 0"
            return Plan(record.with_outcome(Step.SOURCE_GONE, now=now, detail=detail), Effect.NONE)
        if source.uid != record.source_uid:
            return _release(record, now, Outcome.POD_GONE, "the pod was replaced by someone else")
        updated = _checkpoint_seen(record, source.progress)
        if updated is not None:
            return Plan(updated, Effect.NONE)
        if source.deleting:
            return Plan(record, Effect.NONE)  # SIGTERM sent: the job is writing its final checkpoint
        if source.phase in TERMINAL_PHASES:
            return _release(record, now, Outcome.FINISHED, f"the pod ended {source.phase} before it was stopped")
        if now - record.step_since > timeouts.evict_s:
            return _release(record, now, Outcome.ROLLED_BACK,
                            f"eviction refused for {now - record.step_since:.0f}s (PodDisruptionBudget?)")
        if not room:  # e.g. the targets filled while a PDB held the eviction
            return _release(record, now, Outcome.ROLLED_BACK, _NO_ROOM)
        return Plan(record, Effect.EVICT)

    if step is Step.SOURCE_GONE:
        first = record.next_candidate()
        return Plan(record.with_outcome(Step.PLACING, now=now, candidate=first if first is not None else 0),
                    Effect.CREATE)

    if step is Step.PLACING:
        if successor is None:
            if record.retiring_uid is not None:
                return Plan(record.with_outcome(Step.PLACING, now=now, retiring_uid=None), Effect.CREATE)
            if record.successor_uid is not None:
                return _release(record, now, Outcome.POD_GONE, "the successor was deleted by someone else")
            return Plan(record, Effect.CREATE)
        if successor.uid == record.retiring_uid:
            return Plan(record, Effect.NONE if successor.deleting else Effect.DELETE_SUCCESSOR)
        if not _ours(record, successor):
            return Plan(record.with_outcome(Step.PLACING, now=now, detail=f"the name {record.successor} is taken "
                                            "by a pod that is not this migration's"), Effect.NONE)
        if successor.uid != record.successor_uid:
            return Plan(record.with_outcome(Step.PLACING, now=now, successor_uid=successor.uid), Effect.NONE)
        if successor.phase == "Failed":
            return _release(record, now, Outcome.SUCCESSOR_FAILED, "the successor failed before it ran")
        if successor.node and successor.phase in ("Running", "Succeeded"):
            return Plan(record.with_outcome(Step.RUNNING, now=now, node=successor.node), Effect.NONE)
        if successor.node or successor.deleting:
            return Plan(record, Effect.NONE)  # bound, starting
        stuck = successor.unschedulable or now - record.step_since > timeouts.place_s
        following = record.next_candidate(record.candidate)  # the source is never tried: no restart in place
        if stuck and following is not None:
            next_node = record.candidates[following]
            why = (f"{record.placement or 'any node but ' + record.source_node} cannot take it; "
                   f"trying {next_node or 'any node but ' + record.source_node}")
            return Plan(record.with_outcome(Step.PLACING, now=now, candidate=following,
                                            retiring_uid=successor.uid, successor_uid=None, detail=why),
                        Effect.DELETE_SUCCESSOR)
        return Plan(record, Effect.NONE)  # last candidate: it waits Pending for another node, never lost

    # Step.RUNNING
    if successor is None or (record.successor_uid is not None and successor.uid != record.successor_uid):
        return _release(record, now, Outcome.POD_GONE, "the successor was deleted by someone else")
    if successor.phase == "Failed":
        return _release(record, now, Outcome.SUCCESSOR_FAILED, "the successor failed")
    progress = successor.progress
    if progress is not None and record.resume is Resume.SCRATCH:  # the baseline: it must start from zero
        if progress.resumed_from == 0:
            return _release(record, now, Outcome.COMPLETED, "started from scratch as asked", resumed_from=0)
        return _release(record, now, Outcome.UNCONFIRMED,
                        f"resumed from units {progress.resumed_from}, not from scratch: its state reached it",
                        resumed_from=progress.resumed_from)
    wanted = record.checkpoint_units or 0
    if progress is not None:
        if progress.resumed_from >= wanted:
            return _release(record, now, Outcome.COMPLETED, f"resumed from units {progress.resumed_from}",
                            resumed_from=progress.resumed_from)
        return _release(record, now, Outcome.UNCONFIRMED,
                        f"resumed from units {progress.resumed_from} < checkpoint {wanted}",
                        resumed_from=progress.resumed_from)
    if successor.phase == "Succeeded":
        return _release(record, now, Outcome.COMPLETED, "the successor finished before reporting progress")
    if now - record.step_since > timeouts.resume_s:
        return _release(record, now, Outcome.UNCONFIRMED, f"no progress from the successor in {timeouts.resume_s:g}s")
    return Plan(record, Effect.NONE)


def _release(record: MigrationRecord, now: float, outcome: Outcome, detail: str, **changes) -> Plan:
    return Plan(record.with_outcome(Step.RELEASED, now=now, outcome=outcome, detail=detail, **changes), Effect.NONE)
