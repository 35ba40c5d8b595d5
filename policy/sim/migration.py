"""The simulator's side of migration: what a controller sees of the running jobs, and the moves it asks for.

Why it exists: the migration rule (``policy.migrate``) must be judged on what a real controller could know,
not on the simulator's truth. Every ``SimConfig.migration_interval`` seconds the engine calls
``Migrator.check``, which

1. reports each running job as its progress reporter would (``workloads/README.md``): progress = work done /
   work, and a rate **smoothed** over the checks (EWMA, weight ``SMOOTHING`` on the newest interval) that
   starts unknown in every new process (after a migration or a restart);
2. gives the expected rate a real controller could have: 1 / the median work of the job's class in this
   episode (a per-class estimate, like ``profile="class"``), or the highest smoothed rate the job has shown if
   that is higher — never the job's true work;
3. asks the controller for the moves allowed now (``BudgetState`` is built from the simulator's ground truth:
   in-flight = migrated jobs still restoring) and returns them as ``Move``s. The engine carries each out on
   its target or, if that filled up meanwhile, on the first fallback that fits, and reports back through
   ``Migrator.applied``; if none fits the move is rolled back (the job stays).

It reads the fleet and never changes it. State owned: per job the last observation, smoothed and peak
rates, migration count and time; counters.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from policy.migrate.budget import BudgetState
from policy.migrate.records import MigrationIntent, RunningJob
from policy.sim.checkpoint import checkpointed
from policy.sim.fleet import Fleet
from policy.sim.jobs import JobSpec
from policy.state import ClusterSnapshot, PodView

SMOOTHING = 0.5


class Controller(Protocol):
    """What the engine calls: ``policy.migrate.MigrationController`` is one, ``policy.migrate.taint.Tainter``
    another. A controller with a ``tainted`` attribute (node names) has those nodes closed to new pods after each
    check, as a NoSchedule taint closes them; one without taints nothing."""

    def reset(self) -> None: ...

    def check(self, snap: ClusterSnapshot, jobs: Sequence[RunningJob],
              budget_state: BudgetState) -> Sequence[MigrationIntent]: ...


@dataclass(frozen=True, slots=True)
class Move:
    """Stop running job ``job`` and restart it on the first of ``targets`` (node indices) that fits."""

    job: int
    job_id: str
    source: str
    targets: tuple[int, ...]


class Migrator:
    """Feeds ``controller`` from one simulator run and turns what it allows into ``Move``s."""

    def __init__(self, controller: Controller, jobs: Sequence[JobSpec], fleet: Fleet, node_names: Sequence[str], *,
                 checkpoint_interval: float | None, restore_cost: float) -> None:
        self.controller = controller
        self._jobs = jobs
        self._fleet = fleet
        self._node_names = tuple(node_names)
        self._node_index = {name: i for i, name in enumerate(self._node_names)}
        self._checkpoint_interval = checkpoint_interval
        self._restore_cost = restore_cost
        by_kind: dict[str, list[float]] = {}
        for spec in jobs:
            by_kind.setdefault(spec.kind, []).append(spec.work)
        self._class_rate = {k: 1.0 / statistics.median(w) for k, w in by_kind.items()}
        self._names = [f"{spec.kind}-{j}" for j, spec in enumerate(jobs)]
        self._ids = {name: j for j, name in enumerate(self._names)}
        self._pods: dict[int, PodView] = {}
        self._obs: dict[int, tuple[float, float, float, float | None]] = {}  # j -> (started, t, done, rate)
        self._peak: dict[int, float] = {}
        self.count: dict[str, int] = {}
        self.last: dict[str, float] = {}
        self.in_flight: dict[str, tuple[str, str]] = {}
        self.migrations = 0
        self.rollbacks = 0
        controller.reset()

    def observe(self, now: float, started_at: Sequence[float]) -> list[RunningJob]:
        """The running (not restoring) jobs as a progress reporter shows them now; ``started_at[j]`` is when
        job ``j``'s current process began progressing."""
        f = self._fleet
        out = []
        for i, js in enumerate(f.on_node):
            for j in js:
                spec = self._jobs[j]
                done = f.done(j, now)
                started = started_at[j]
                prev = self._obs.get(j)
                rate = None
                if prev is not None and prev[0] == started and now > prev[1]:
                    inst = (done - prev[2]) / spec.work / (now - prev[1])
                    rate = inst if prev[3] is None else SMOOTHING * inst + (1 - SMOOTHING) * prev[3]
                    self._peak[j] = max(self._peak.get(j, 0.0), rate)
                self._obs[j] = (started, now, done, rate)
                pod = self._pods.get(j)
                if pod is None:
                    pod = self._pods[j] = PodView(spec.requests, spec.expected, "sim", self._names[j])
                progress = min(max(done / spec.work, 0.0), 1.0)
                out.append(RunningJob(
                    job_id=self._names[j], node=self._node_names[i], progress=progress, rate=rate,
                    expected_rate=max(self._class_rate[spec.kind], self._peak.get(j, 0.0)),
                    running_for=now - started,
                    checkpoint_progress=min(checkpointed(done, self._checkpoint_interval) / spec.work, progress),
                    restore_cost=self._restore_cost, pod=pod))
        return out

    def check(self, now: float, snap: ClusterSnapshot, started_at: Sequence[float]) -> list[Move]:
        """The moves the controller allows now, given the scheduler's ``snap`` of the cluster."""
        f = self._fleet
        self.in_flight = {k: v for k, v in self.in_flight.items()
                          if f.node[self._ids[k]] >= 0 and self._ids[k] in f.restoring[f.node[self._ids[k]]]}
        jobs = self.observe(now, started_at)
        state = BudgetState(now=now, running=len(jobs), in_flight=dict(self.in_flight),
                            last_migrated=dict(self.last), migrations=dict(self.count))
        index = self._node_index
        return [Move(self._ids[it.job_id], it.job_id, it.source, tuple(index[t] for t in (it.target, *it.fallbacks)))
                for it in self.controller.check(snap, jobs, state)]

    def applied(self, move: Move, target: int | None, now: float) -> None:
        """Record how the engine carried ``move`` out: on node ``target``, or rolled back (``None``)."""
        if target is None:
            self.rollbacks += 1
            return
        self.migrations += 1
        self.count[move.job_id] = self.count.get(move.job_id, 0) + 1
        self.last[move.job_id] = now
        if move.job in self._fleet.restoring[target]:
            self.in_flight[move.job_id] = (move.source, self._node_names[target])
