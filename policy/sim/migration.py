"""The simulator's side of migration: what a controller sees of the running jobs, and carrying out its moves.

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
   in-flight = migrated jobs still restoring), and carries each out on its target or, if that filled up
   meanwhile, on the first fallback that fits; if none fits the move is rolled back (the job stays).

State owned: per job the last observation, smoothed and peak rates, migration count and time; counters.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from policy.migrate.budget import BudgetState
from policy.migrate.records import MigrationIntent, RunningJob
from policy.sim.checkpoint import checkpointed
from policy.sim.jobs import JobSpec
from policy.state import ClusterSnapshot, PodView

if TYPE_CHECKING:
    from policy.sim.engine import Simulator

SMOOTHING = 0.5


class Controller(Protocol):
    """What the engine calls: ``policy.migrate.MigrationController`` is one."""

    def reset(self) -> None: ...

    def check(self, snap: ClusterSnapshot, jobs: Sequence[RunningJob],
              budget_state: BudgetState) -> Sequence[MigrationIntent]: ...


class Migrator:
    """Feeds ``controller`` from one simulator run and executes what it allows."""

    def __init__(self, controller: Controller, jobs: Sequence[JobSpec]) -> None:
        self.controller = controller
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

    def observe(self, sim: Simulator) -> list[RunningJob]:
        """The running (not restoring) jobs as a progress reporter shows them now."""
        f, now, cfg = sim.fleet, sim.now, sim.config
        out = []
        for i, js in enumerate(f.on_node):
            for j in js:
                spec = sim.jobs[j]
                done = f.done(j, now)
                started = sim.started[j]
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
                    job_id=self._names[j], node=sim.nodes.names[i], progress=progress, rate=rate,
                    expected_rate=max(self._class_rate[spec.kind], self._peak.get(j, 0.0)),
                    running_for=now - started,
                    checkpoint_progress=min(checkpointed(done, cfg.checkpoint_interval) / spec.work, progress),
                    restore_cost=cfg.restore_cost, pod=pod))
        return out

    def check(self, sim: Simulator) -> None:
        f = sim.fleet
        index = {name: i for i, name in enumerate(sim.nodes.names)}
        self.in_flight = {k: v for k, v in self.in_flight.items()
                          if f.node[self._ids[k]] >= 0 and self._ids[k] in f.restoring[f.node[self._ids[k]]]}
        jobs = self.observe(sim)
        state = BudgetState(now=sim.now, running=len(jobs), in_flight=dict(self.in_flight),
                            last_migrated=dict(self.last), migrations=dict(self.count))
        for it in self.controller.check(sim.snapshot(), jobs, state):
            j = self._ids[it.job_id]
            src = f.node[j]
            if src < 0 or j not in f.on_node[src]:
                continue  # no longer running there (cannot happen within one check, kept for safety)
            target = next((index[t] for t in (it.target, *it.fallbacks) if index[t] != src and f.fits(j, index[t])),
                          None)
            if target is None:
                self.rollbacks += 1
                continue
            sim.move(j, target)
            self.migrations += 1
            self.count[it.job_id] = self.count.get(it.job_id, 0) + 1
            self.last[it.job_id] = sim.now
            if j in f.restoring[target]:
                self.in_flight[it.job_id] = (it.source, sim.nodes.names[target])
