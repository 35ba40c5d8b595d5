"""The one executor: applies the budget and dry-run to the rule's intents, then carries out the protocol.

Why it exists: deciding and enforcing are separate (descheduler's evictor). The rule proposes; this class is
the only code that stops a pod or creates one. Per allowed intent it opens a *window* (a Lease holding the
``MigrationRecord`` and the pod template), then ``advance`` drives the window through ``protocol.plan``:
store the next record first (write-ahead), then perform the one effect, then observe again, until the plan
says wait. A restarted controller finds the windows and calls ``advance`` on each: resume, or roll back.

State owned: none between cycles beyond what the Leases hold (the controller passes windows in).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kube.errors import Conflict, PermanentError, TemporaryError
from kube.logs import kv
from migration.errors import RecordError
from migration.kube import TEMPLATE_ANNOTATION, Kube
from migration.podspec import successor_body, template_of
from migration.progress import ProgressSource, ProgressUnavailable
from migration.protocol import Effect, PodState, Timeouts, plan
from migration.record import MigrationRecord, Outcome, Resume, Step, new_record
from migration.telemetry import Kind, PodRef, Telemetry
from policy.migrate import Budget, BudgetState, MigrationIntent, apply_budget
from workloads.progress import Progress, ProgressError

log = logging.getLogger(__name__)
_MAX_STEPS = 12
AFTER_EFFECT = ":after-effect"
"""Suffix of a test pause point that stops once the step's effect is done (``Executor`` ``test_pause_at``)."""


@dataclass(frozen=True)
class Window:
    """One in-flight migration: its Lease (as last written) and what it holds."""

    lease: Mapping[str, Any]
    record: MigrationRecord
    template: Mapping[str, Any]


@dataclass(frozen=True)
class Candidate:
    """What the executor needs of a job the rule may propose: its live pod and its last progress."""

    pod: Mapping[str, Any]
    base: str
    progress: Progress
    history: MigrationRecord | None      # the lineage record on the pod (None: never migrated)


def parse_window(lease: Mapping[str, Any]) -> Window:
    """A window Lease as a ``Window``; ``RecordError`` when its annotations do not parse."""
    annotations = (lease.get("metadata") or {}).get("annotations") or {}
    record = MigrationRecord.from_storage(annotations)
    if record is None:
        raise RecordError("window Lease without a migration record")
    try:
        template = json.loads(annotations.get(TEMPLATE_ANNOTATION, ""))
    except ValueError as exc:
        raise RecordError(f"window Lease: pod template is not JSON: {exc}") from None
    return Window(lease=lease, record=record, template=template)


def budget_state(*, now: float, running: int, windows: Sequence[Window],
                 histories: Mapping[str, MigrationRecord]) -> BudgetState:
    """The budget's view: windows are in flight; each job's lineage record gives its count and last move."""
    return BudgetState(now=now, running=running,
                       in_flight={w.record.job: (w.record.source_node, w.record.target) for w in windows},
                       last_migrated={job: rec.started_at for job, rec in histories.items()},
                       migrations={job: rec.attempt for job, rec in histories.items()})


class Executor:
    def __init__(self, kube: Kube, telemetry: Telemetry, *, budget: Budget, timeouts: Timeouts,
                 source: ProgressSource, grace_period_s: int | None, identity: str, test_pause_at: str = "",
                 pause: Callable[[], object] | None = None, clock: Callable[[], float] = time.time,
                 resume: Resume = Resume.CHECKPOINT) -> None:
        self.kube, self.telemetry, self.budget, self.timeouts = kube, telemetry, budget, timeouts
        self.resume = resume
        self.source, self.grace_period_s, self.identity = source, grace_period_s, identity
        self.clock = clock
        self.test_pause_at, self._pause = test_pause_at, pause or threading.Event().wait  # waits for good

    # -- intents -----------------------------------------------------------------------------------
    def submit(self, intents: Sequence[MigrationIntent], *, candidates: Mapping[str, Candidate],
               state: BudgetState) -> list[Window]:
        """Apply the budget (and dry-run); start the allowed migrations; report every verdict."""
        verdict = apply_budget(intents, self.budget, state)
        for refusal in verdict.refused:
            it = refusal.intent
            self.telemetry.report(Kind.DECISION, refusal.limit.value, f"{it.reason}; not carried out: {refusal.detail}",
                                  pod=_ref(candidates[it.job_id].pod), source=it.source, target=it.target,
                                  saving=round(it.saving, 1))
        started = []
        for it in verdict.allowed:
            self.telemetry.report(Kind.DECISION, "allowed", it.reason, pod=_ref(candidates[it.job_id].pod),
                                  source=it.source, target=it.target, fallbacks=",".join(it.fallbacks),
                                  saving=round(it.saving, 1))
            window = self.start(it, candidates[it.job_id])
            if window is not None:
                started.append(window)
        return started

    def start(self, intent: MigrationIntent, cand: Candidate) -> Window | None:
        """Open the window (write the first record and the template), then advance it."""
        meta = cand.pod["metadata"]
        ckpt = cand.progress.checkpoint
        record = new_record(namespace=meta.get("namespace", "default"), base=cand.base,
                            attempt=(cand.history.attempt if cand.history else 0) + 1, source_pod=meta["name"],
                            source_uid=meta.get("uid", ""), source_node=intent.source, target=intent.target,
                            fallbacks=intent.fallbacks, now=self.clock(), reason=intent.reason,
                            units_total=cand.progress.units_total,
                            checkpoint_units=ckpt.units_done if ckpt is not None else None, resume=self.resume)
        template = template_of(cand.pod, resume=self.resume)
        annotations = {**record.for_storage(), TEMPLATE_ANNOTATION: json.dumps(template)}
        try:
            lease = self.kube.create_window(namespace=record.namespace, name=record.window, annotations=annotations,
                                            holder=self.identity)
        except Conflict:
            return None  # a window exists: the migration is already in flight (seen next cycle)
        self.telemetry.report(Kind.STARTED, Step.RESERVED.value, f"moving to {record.target}: {record.reason}",
                              pod=_ref(cand.pod), job=record.job, attempt=record.attempt,
                              candidates=",".join(c or "*" for c in record.candidates))
        self._test_pause(record, record.step.value)
        return self.advance(Window(lease=lease, record=record, template=template))

    # -- the protocol ------------------------------------------------------------------------------
    def _observe(self, record: MigrationRecord) -> tuple[PodState | None, PodState | None]:
        source = successor = None
        if record.step in (Step.RESERVED, Step.EVICTING):
            pod = self.kube.read_pod(namespace=record.namespace, name=record.source_pod)
            if pod is not None:
                source = PodState.of(pod, self._progress(pod))
        if record.step in (Step.PLACING, Step.RUNNING):
            pod = self.kube.read_pod(namespace=record.namespace, name=record.successor)
            if pod is not None:
                progress = self._progress(pod) if record.step is Step.RUNNING else None
                successor = PodState.of(pod, progress)
        return source, successor

    def _progress(self, pod: Mapping[str, Any]) -> Progress | None:
        """Any parseable document counts here (a stopping job reports 'checkpointing'); else no information."""
        try:
            return self.source.read(pod)
        except (ProgressError, ProgressUnavailable):
            return None

    def advance(self, window: Window, *, room: bool = True) -> Window | None:
        """Drive one window as far as it goes now; None once released (its Lease deleted). ``room``: some node
        but the source fits the job now (``protocol.plan``; the caller's snapshot says)."""
        for _ in range(_MAX_STEPS):
            record = window.record
            source, successor = self._observe(record)
            step = plan(record, source=source, successor=successor, now=self.clock(), timeouts=self.timeouts,
                        room=room)
            if step.record != record:
                window = self._store(window, step.record)
                self._test_pause(window.record, window.record.step.value)
            if step.effect is Effect.RELEASE:
                self.kube.delete_window(namespace=record.namespace, name=record.window)
                self._test_pause(window.record, window.record.step.value + AFTER_EFFECT)
                return None
            if step.effect is Effect.NONE:
                if step.record == record:
                    return window
                continue
            if not self._perform(step.effect, window.record, window.template, source, successor):
                return window
            self._test_pause(window.record, window.record.step.value + AFTER_EFFECT)
        return window

    def _test_pause(self, record: MigrationRecord, point: str) -> None:
        """Fault point for the kill tests only, off unless ``test_pause_at`` names ``point``: stop here for good.

        ``<step>`` is reached once a record at that step is stored, before its effect; ``<step>:after-effect``
        once the effect is done. A test kills the process while it waits, so every kill lands exactly there.
        """
        if point == self.test_pause_at:
            log.warning("paused for a test", extra=kv(at=point, job=record.job))
            self._pause()

    def _perform(self, effect: Effect, record: MigrationRecord, template: Mapping[str, Any],
                 source: PodState | None, successor: PodState | None) -> bool:
        """Carry out one effect; False when it cannot progress now (a PDB refused, a permanent error)."""
        ns = record.namespace
        try:
            if effect is Effect.EVICT:
                return self.kube.evict_pod(namespace=ns, name=record.source_pod, uid=record.source_uid,
                                           grace_period_s=self.grace_period_s)
            if effect is Effect.CREATE:
                try:
                    self.kube.create_pod(namespace=ns, body=successor_body(template, record))
                except Conflict:
                    pass  # created by an earlier attempt (or not yet gone): the next observation decides
                return True
            if effect is Effect.DELETE_SUCCESSOR and record.retiring_uid:
                self.kube.delete_pod(namespace=ns, name=record.successor, uid=record.retiring_uid, grace_period_s=0)
                return True
        except PermanentError as exc:
            self.telemetry.report(Kind.ERROR, "permanent", str(exc), pod=_record_ref(record), warning=True,
                                  step=record.step.value, effect=effect.value)
            return False
        return True

    def _store(self, window: Window, record: MigrationRecord) -> Window:
        """Write-ahead: the record is stored before the effect it announces is performed."""
        try:
            lease = self.kube.update_window(lease=window.lease, annotations=record.for_storage())
        except Conflict as exc:
            raise TemporaryError(f"window {record.window} changed under us: {exc}") from None
        old = window.record
        if record.step is Step.RELEASED:
            warning = record.outcome not in (Outcome.COMPLETED, Outcome.ROLLED_BACK, Outcome.FINISHED)
            self.telemetry.report(Kind.RELEASED, record.outcome.value, record.detail, pod=_record_ref(record),
                                  warning=warning, job=record.job, node=record.node, source=record.source_node,
                                  seconds=round(self.clock() - record.started_at, 1))
        elif record.step is not old.step or record.candidate != old.candidate:
            self.telemetry.report(Kind.STEP, record.step.value, record.detail or f"{old.step} -> {record.step}",
                                  pod=_record_ref(record), job=record.job, placement=record.placement or "*",
                                  checkpoint=record.checkpoint_units)
        return Window(lease=lease, record=record, template=window.template)


def _ref(pod: Mapping[str, Any]) -> PodRef:
    meta = pod.get("metadata") or {}
    return PodRef(namespace=meta.get("namespace", "default"), name=meta.get("name", ""), uid=meta.get("uid", ""))


def _record_ref(record: MigrationRecord) -> PodRef:
    """Events go to the source until it is gone, then to the successor."""
    if record.step in (Step.RESERVED, Step.EVICTING) or (record.step is Step.RELEASED and record.node is None
                                                          and record.successor_uid is None):
        return PodRef(record.namespace, record.source_pod, record.source_uid)
    return PodRef(record.namespace, record.successor, record.successor_uid or "")
