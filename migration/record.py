"""The migration record: the whole state of one migration, one immutable value in one annotation.

Why it exists: a controller can be killed between any two API calls. Every step is written *before* it is
acted on (write-ahead), so a restarted controller reads the record and resumes or rolls back. The progression
follows kopf's ``_core/actions/progression.py``: ``MigrationRecord.from_storage(annotations)`` reads it,
``record.with_outcome(step, now=..., ...)`` returns the next record (refusing a transition the state machine
does not allow), ``record.for_storage()`` returns the annotation patch. The module does no I/O.

Where the record lives (``migration/README.md``): on the per-job *window* Lease ``drsched-migration-<job>``
from ``reserved`` until it is released (the source pod is deleted mid-way, so it cannot hold it), and a copy,
written at create time, on the successor pod as its lineage (``attempt`` = migrations so far, ``started_at``
= when the last one began: what the budget's max-per-job and cooldown read).

State machine (``TRANSITIONS``)::

    reserved ──► evicting ──► source-gone ──► placing ──► running ──► released
       │            │                          │  ▲  │                  ▲
       │            │                          └──┘  └──────────────────┤ (successor failed / gone)
       └────────────┴───────────────────────────────────────────────────┘ (rolled back, pod gone, finished)

Outcomes (only on ``released``): see ``Outcome``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, fields, replace
from enum import StrEnum
from typing import Any

from migration.errors import RecordError

ANNOTATION = "drsched.io/migration"
"""The one annotation that holds a record (on the window Lease and on the successor pod)."""
FORMAT = 1


class Step(StrEnum):
    RESERVED = "reserved"        # target chosen and counted as in flight; the pod template is saved
    EVICTING = "evicting"        # eviction requested (SIGTERM: the job writes its final checkpoint)
    SOURCE_GONE = "source-gone"  # the old pod object is gone; the checkpoint is as confirmed as it gets
    PLACING = "placing"          # the successor exists (or is about to), with affinity to candidates[candidate]
    RUNNING = "running"          # the successor is bound and Running; waiting for it to report its resume
    RELEASED = "released"        # done; ``outcome`` says how. The window Lease is deleted next.


class Resume(StrEnum):
    """How a successor starts (setting ``resume``)."""

    CHECKPOINT = "checkpoint"    # from the source's newest checkpoint (its state volumes are handed over)
    SCRATCH = "scratch"          # the baseline: from zero (state volumes replaced by empty ones)


class Outcome(StrEnum):
    COMPLETED = "completed"                # the successor runs and resumed as asked (the confirmed checkpoint, or 0)
    UNCONFIRMED = "unconfirmed"            # the successor runs, but its resume was not confirmed in time
    ROLLED_BACK = "rolled-back"            # nothing was stopped (eviction refused until the deadline)
    POD_GONE = "pod-gone"                  # the job's pod was deleted by someone else mid-migration
    FINISHED = "finished"                  # the job completed on the source before it was stopped
    SUCCESSOR_FAILED = "successor-failed"  # the successor ended Failed


TRANSITIONS: Mapping[Step, frozenset[Step]] = {
    Step.RESERVED: frozenset({Step.EVICTING, Step.RELEASED}),
    Step.EVICTING: frozenset({Step.EVICTING, Step.SOURCE_GONE, Step.RELEASED}),
    Step.SOURCE_GONE: frozenset({Step.PLACING}),
    Step.PLACING: frozenset({Step.PLACING, Step.RUNNING, Step.RELEASED}),
    Step.RUNNING: frozenset({Step.RELEASED}),
    Step.RELEASED: frozenset(),
}
"""Allowed next steps. A self-transition updates fields within a step (a newer checkpoint, the next candidate)."""

OUTCOMES_FROM: Mapping[Step, frozenset[Outcome]] = {
    Step.RESERVED: frozenset({Outcome.ROLLED_BACK, Outcome.POD_GONE, Outcome.FINISHED}),
    Step.EVICTING: frozenset({Outcome.ROLLED_BACK, Outcome.POD_GONE, Outcome.FINISHED}),
    Step.PLACING: frozenset({Outcome.POD_GONE, Outcome.SUCCESSOR_FAILED}),
    Step.RUNNING: frozenset({Outcome.COMPLETED, Outcome.UNCONFIRMED, Outcome.POD_GONE, Outcome.SUCCESSOR_FAILED}),
}
"""Which outcomes a release from each step may carry: once the source is gone, never 'rolled back'."""

ANY_NODE = ""
"""The last placement candidate: any node but the source, wherever the scheduler finds room (never lost)."""


@dataclass(frozen=True, slots=True)
class MigrationRecord:
    """One migration (module docstring). Times are unix seconds; ``step_since`` feeds the step timeouts."""

    job: str                          # job id: namespace/base name
    namespace: str
    base: str                         # the job's original pod name; successors are <base>-m<attempt>
    attempt: int                      # 1 for the first migration of the job
    source_pod: str
    source_uid: str
    source_node: str
    candidates: tuple[str, ...]       # target, fallbacks, ANY_NODE; never the source
    step: Step
    started_at: float
    step_since: float
    reason: str = ""                  # the rule's reason, for Events and the log
    resume: Resume = Resume.CHECKPOINT    # how the successor starts (a record without it: from the checkpoint)
    candidate: int = 0                # index into candidates of the current placement attempt
    units_total: int = 0
    checkpoint_units: int | None = None   # newest checkpoint seen on the source (None: none seen)
    checkpoint_final: bool = False        # the source reported 'checkpointing' (its final checkpoint) while stopping
    successor_uid: str | None = None
    retiring_uid: str | None = None       # a failed placement attempt being deleted before the next one
    node: str | None = None               # where the successor runs
    resumed_from: int | None = None
    outcome: Outcome | None = None
    detail: str = ""

    def __post_init__(self) -> None:
        if self.attempt < 1:
            raise RecordError(f"record of {self.job!r}: attempt must be >= 1, got {self.attempt}")
        if not self.candidates:
            raise RecordError(f"record of {self.job!r}: no placement candidates")
        if not 0 <= self.candidate < len(self.candidates):
            raise RecordError(f"record of {self.job!r}: candidate {self.candidate} outside {len(self.candidates)}")
        if (self.step is Step.RELEASED) != (self.outcome is not None):
            raise RecordError(f"record of {self.job!r}: an outcome is set exactly when released")

    # -- derived -----------------------------------------------------------------------------------
    @property
    def successor(self) -> str:
        return f"{self.base}-m{self.attempt}"

    @property
    def target(self) -> str:
        return self.candidates[0]

    @property
    def placement(self) -> str:
        """The node of the current placement attempt (``ANY_NODE``: anywhere)."""
        return self.candidates[self.candidate]

    def next_candidate(self, after: int = -1) -> int | None:
        """Index of the first candidate after ``after`` that is not the source node (a record written before
        the source was dropped from the list may still name it), or None when there is none."""
        return next((i for i in range(after + 1, len(self.candidates)) if self.candidates[i] != self.source_node),
                    None)

    @property
    def window(self) -> str:
        """Name of the per-job Lease that holds the record while the migration is in flight."""
        return window_name(self.base)

    # -- progression -------------------------------------------------------------------------------
    def with_outcome(self, step: Step, *, now: float, outcome: Outcome | None = None,
                     **changes: Any) -> MigrationRecord:
        """The next record. Raises ``RecordError`` for a transition or outcome the state machine refuses."""
        if step not in TRANSITIONS[self.step]:
            raise RecordError(f"record of {self.job!r}: transition {self.step} -> {step} is not allowed")
        if step is Step.RELEASED:
            if outcome is None or outcome not in OUTCOMES_FROM.get(self.step, frozenset()):
                raise RecordError(f"record of {self.job!r}: outcome {outcome} cannot end step {self.step}")
        elif outcome is not None:
            raise RecordError(f"record of {self.job!r}: outcome {outcome} given without releasing")
        unknown = set(changes) - _MUTABLE
        if unknown:
            raise RecordError(f"record of {self.job!r}: fields {sorted(unknown)} cannot change after creation")
        # A new step, or the next placement candidate, starts its own timeout.
        fresh = step is not self.step or changes.get("candidate", self.candidate) != self.candidate
        since = now if fresh else self.step_since
        return replace(self, step=step, outcome=outcome, step_since=since, **changes)

    def for_storage(self) -> dict[str, str]:
        """The annotation patch that stores this record."""
        doc = asdict(self)
        doc["candidates"] = list(self.candidates)
        return {ANNOTATION: json.dumps({"format": FORMAT, **doc}, sort_keys=True, separators=(",", ":"))}

    @classmethod
    def from_storage(cls, annotations: Mapping[str, str] | None) -> MigrationRecord | None:
        """The record in ``annotations`` (None when there is none); ``RecordError`` when it does not parse."""
        raw = (annotations or {}).get(ANNOTATION)
        if raw is None:
            return None
        try:
            doc = json.loads(raw)
        except (TypeError, ValueError) as exc:
            raise RecordError(f"annotation {ANNOTATION} is not JSON: {exc}") from None
        if not isinstance(doc, dict) or doc.pop("format", None) != FORMAT:
            raise RecordError(f"annotation {ANNOTATION} is not a format-{FORMAT} record")
        names = {f.name for f in fields(cls)}
        missing = {f.name for f in fields(cls) if f.name not in doc and f.default is MISSING}
        if missing or not set(doc) <= names:
            raise RecordError(f"annotation {ANNOTATION}: missing {sorted(missing)}, unknown {sorted(set(doc) - names)}")
        try:
            doc["step"] = Step(doc["step"])
            doc["outcome"] = Outcome(doc["outcome"]) if doc.get("outcome") is not None else None
            doc["resume"] = Resume(doc.get("resume", Resume.CHECKPOINT))
            doc["candidates"] = tuple(str(c) for c in doc["candidates"])
            for key in ("attempt", "candidate", "units_total"):
                if key in doc and (isinstance(doc[key], bool) or not isinstance(doc[key], int)):
                    raise TypeError(f"{key} must be an integer")
            for key in ("started_at", "step_since"):
                doc[key] = float(doc[key])
            return cls(**doc)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, RecordError):
                raise
            raise RecordError(f"annotation {ANNOTATION}: {exc}") from None


_MUTABLE = frozenset({"candidate", "units_total", "checkpoint_units", "checkpoint_final", "successor_uid",
                      "retiring_uid", "node", "resumed_from", "detail"})


def window_name(base: str) -> str:
    """The per-job Lease name (a DNS subdomain: Lease names may be 253 characters)."""
    return f"drsched-migration-{base}"[:253]


def new_record(*, namespace: str, base: str, attempt: int, source_pod: str, source_uid: str, source_node: str,
               target: str, fallbacks: tuple[str, ...], now: float, reason: str, units_total: int,
               checkpoint_units: int | None, resume: Resume = Resume.CHECKPOINT) -> MigrationRecord:
    """The first record of a migration: target, then the fallbacks, then any node but the source.

    A candidate equal to the source is dropped: a move never lands the job back on the node it left (the
    successor's affinity also says ``NotIn [source]``, ``migration.podspec``). With none left but ``ANY_NODE``
    the successor waits Pending for room elsewhere rather than restart in place."""
    candidates: list[str] = []
    for node in (target, *fallbacks, ANY_NODE):
        if node != source_node and node not in candidates:
            candidates.append(node)
    return MigrationRecord(job=f"{namespace}/{base}", namespace=namespace, base=base, attempt=attempt,
                           source_pod=source_pod, source_uid=source_uid, source_node=source_node,
                           candidates=tuple(candidates), step=Step.RESERVED, started_at=now, step_since=now,
                           reason=reason, units_total=units_total, checkpoint_units=checkpoint_units,
                           resume=resume)
