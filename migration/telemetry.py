"""Metrics of the migration controller and the ONE helper that reports a decision, skip, step or outcome.

``Telemetry.report(kind, reason, message, pod=...)`` is the only way the controller tells the world what it
did: one log line (constant message + key=value fields, prefixed ``[namespace/name]``), one Kubernetes
Event on the pod (not for skips, which happen every cycle; a refused intent's at most once a minute per pod
and reason, through the shared ``kube.events.EventRecorder``) and one labelled counter -- never pasted per
call site (descheduler's ``EvictPod`` shows why).

Metrics (one registry per ``Metrics``, so tests build many):

| series | labels | counts |
|---|---|---|
| ``drsched_migration_started_total`` | | migrations begun (window Lease created) |
| ``drsched_migration_completed_total`` | | successors that run (outcome completed or unconfirmed) |
| ``drsched_migration_rolled_back_total`` | | migrations undone before anything was stopped |
| ``drsched_migration_released_total`` | outcome | every end of a migration, by ``record.Outcome`` |
| ``drsched_migration_decisions_total`` | verdict | rule intents: ``allowed`` or the budget ``Limit`` that refused it |
| ``drsched_migration_skipped_total`` | reason | jobs not offered or proposed: ``progress.SkipReason``, ``rule.Skip`` |
| ``drsched_migration_steps_total`` | step | protocol steps entered |
| ``drsched_migration_errors_total`` | kind | temporary / permanent API errors |
| ``drsched_migration_taints_total`` | action | ``mode=taint``: degraded taints ``added`` / ``removed`` |
| ``drsched_migration_tainted_nodes`` | | ``mode=taint``: nodes carrying the degraded taint after the last cycle |
| ``drsched_migration_in_flight`` | | window Leases at the end of the last cycle |
| ``drsched_migration_leader`` | | 1 while this replica holds the leader Lease |
| ``drsched_migration_cycle_seconds`` | | duration of one cycle |
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from kube.events import EventRecorder, EventSink
from kube.logs import kv
from migration.record import Outcome


class Metrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.started = Counter("drsched_migration_started_total", "Migrations begun", registry=r)
        self.completed = Counter("drsched_migration_completed_total", "Migrations whose successor runs", registry=r)
        self.rolled_back = Counter("drsched_migration_rolled_back_total", "Migrations undone before any stop",
                                   registry=r)
        self.released = Counter("drsched_migration_released_total", "Ended migrations by outcome", ["outcome"],
                                registry=r)
        self.decisions = Counter("drsched_migration_decisions_total", "Rule intents by verdict", ["verdict"],
                                 registry=r)
        self.skipped = Counter("drsched_migration_skipped_total", "Jobs skipped by reason", ["reason"], registry=r)
        self.steps = Counter("drsched_migration_steps_total", "Protocol steps entered", ["step"], registry=r)
        self.errors = Counter("drsched_migration_errors_total", "API errors by kind", ["kind"], registry=r)
        self.taints = Counter("drsched_migration_taints_total", "Degraded taints by action", ["action"], registry=r)
        self.tainted = Gauge("drsched_migration_tainted_nodes", "Nodes with the degraded taint", registry=r)
        self.in_flight = Gauge("drsched_migration_in_flight", "Migrations in flight", registry=r)
        self.leader = Gauge("drsched_migration_leader", "1 while this replica leads", registry=r)
        self.cycle = Histogram("drsched_migration_cycle_seconds", "Duration of one cycle", registry=r,
                               buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0))


class Kind(StrEnum):
    DECISION = "decision"   # reason: "allowed" or a budget Limit
    SKIP = "skip"           # reason: a SkipReason / rule Skip
    STARTED = "started"     # reason: "reserved"
    STEP = "step"           # reason: the step entered
    RELEASED = "released"   # reason: the Outcome
    ERROR = "error"         # reason: "temporary" / "permanent"
    TAINT = "taint"         # reason: "added" / "removed" (mode taint; a node, so no pod Event)


@dataclass(frozen=True)
class PodRef:
    namespace: str
    name: str
    uid: str = ""


_EVENT_REASON = {Kind.DECISION: "MigrationDecision", Kind.STARTED: "MigrationStarted", Kind.STEP: "MigrationStep",
                 Kind.ERROR: "MigrationError"}
_RELEASED_REASON = {Outcome.COMPLETED: "MigrationCompleted", Outcome.UNCONFIRMED: "MigrationUnconfirmed",
                    Outcome.ROLLED_BACK: "MigrationRolledBack"}


class Telemetry:
    """Metrics + Event recorder + the one reporting helper."""

    def __init__(self, metrics: Metrics | None = None, events: EventSink | None = None,
                 log: logging.Logger | None = None, *, event_interval_s: float = 60.0) -> None:
        self.metrics = metrics or Metrics()
        self.events = EventRecorder(events, interval_s=event_interval_s)
        self.log = log or logging.getLogger(__name__)

    def report(self, kind: Kind, reason: str, message: str, *, pod: PodRef | None = None,
               warning: bool = False, **fields: Any) -> None:
        """One log line + one Event (not for skips) + one counter for ``kind``/``reason`` (module docstring)."""
        m = self.metrics
        if kind is Kind.DECISION:
            m.decisions.labels(verdict=reason).inc()
        elif kind is Kind.SKIP:
            m.skipped.labels(reason=reason).inc()
        elif kind is Kind.STARTED:
            m.started.inc()
            m.steps.labels(step=reason).inc()
        elif kind is Kind.STEP:
            m.steps.labels(step=reason).inc()
        elif kind is Kind.RELEASED:
            m.released.labels(outcome=reason).inc()
            if reason in (Outcome.COMPLETED, Outcome.UNCONFIRMED):
                m.completed.inc()
            elif reason == Outcome.ROLLED_BACK:
                m.rolled_back.inc()
        elif kind is Kind.TAINT:
            m.taints.labels(action=reason).inc()
        else:
            m.errors.labels(kind=reason).inc()
        prefix = f"[{pod.namespace}/{pod.name}] " if pod is not None else ""
        level = logging.DEBUG if kind is Kind.SKIP else (logging.WARNING if warning else logging.INFO)
        self.log.log(level, f"{prefix}migration {kind}", extra=kv(kind=str(kind), reason=reason, detail=message,
                                                                   **fields))
        if pod is None or kind is Kind.SKIP:
            return
        event_reason = (_RELEASED_REASON.get(reason, "MigrationEnded") if kind is Kind.RELEASED  # type: ignore[call-overload]
                        else "MigrationDryRun" if kind is Kind.DECISION and reason == "dry-run"
                        else _EVENT_REASON[kind])
        # a refused intent repeats every cycle: its Event once a minute is enough; every step is posted
        self.events.post(namespace=pod.namespace, name=pod.name, uid=pod.uid, reason=event_reason,
                         message=f"{reason}: {message}", type_="Warning" if warning else "Normal", key=(reason,),
                         limit=kind is Kind.DECISION)
