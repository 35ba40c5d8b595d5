"""The event-driven cluster simulator: arrivals, decisions, completions, monitor samples and injected events.

Why it exists: the RL env, the evaluator and the benchmark drive one loop — ask for the next pod, look at a
``ClusterSnapshot``, place or defer — and this module is that loop. It owns the clock, the event heap, the
pod queues (pods awaiting a decision, deferred pods) and the monitor's view (usage sampled every
``sample_interval`` seconds, plus the "assumed" expected demand of pods placed since that sample); the nodes
and running jobs live in ``policy.sim.fleet``.

Queueing follows kube-scheduler: a pod is offered (``next_decision``) only when at least one node can take
it; otherwise, or when the policy calls ``defer``, it waits and is retried after the next event that frees
resources (a completion, a node coming back). When nothing is running and nothing more can happen, deferred
pods that fit somewhere are retried every ``RETRY_BACKOFF`` s (kube's max backoff; the monitor keeps
sampling meanwhile) and the rest are reported unschedulable; a pod whose requests exceed every node's
capacity is unschedulable on arrival.

``excess_integral`` is ∫ Σ_j (1 − rate_j)/work_j dt over every job present (queued pods and jobs restoring
after a restart have rate 0), integrated exactly between events, plus lost_work/work at each restart
(migration or node failure); at the end of a run it equals Σ_j (slowdown_j − 1) over finished jobs, because
a job's JCT is the time it progressed, redid lost work, restored and waited. ``queue_integral`` is the
waiting part of it (pods queued or restoring); the rest is contention and lost work. Each pod offered to the
policy counts as a decision, and those with two or more feasible nodes as real choices.

Tenants (``SimConfig.tenants``, the lab's ``tenants`` scenario): drawn after everything else in the episode
(``policy.tenants.draw_tenants``) and pinned on their nodes at time 0, before the first monitor sample and
outside the policy (``Fleet.pin``); each changes its cpu use at its cycle's edges, which are timed like monitor
ticks (not in the heap), so they never keep a run going: the run ends when the jobs are done, as without them.

Migration (optional): given a ``controller`` (``policy.sim.migration``), every ``migration_interval``
seconds the engine shows it the running jobs as a progress reporter would and carries out the moves the
migrator returns: the job stops on its source and rewinds to its newest checkpoint (``checkpoint_interval``), then
restores on the target for ``restore_cost`` seconds (holding its requests, at rate 0) before progressing.
A job restarted after a node failure also resumes from its checkpoint and pays ``restore_cost`` once placed.
A controller's ``tainted`` nodes (the taint baseline, ``policy.migrate.taint.Tainter``) are closed after each check
as a NoSchedule taint closes them: no new pod and no move goes there, the jobs on them stay, and snapshots show
them not ready, so a policy never scores them.
"""

from __future__ import annotations

import heapq
import logging
import math
from collections import deque
from collections.abc import Sequence

import numpy as np

from policy.profiles import Profile, served_demand, update
from policy.sim.calibration import default_params
from policy.sim.cluster import Nodes
from policy.sim.config import SimConfig, build_episode
from policy.sim.errors import ConfigError, InfeasiblePlacement, NoPendingPod
from policy.sim.events import NodeFailure, Straggler
from policy.sim.fleet import COMPLETE, Fleet
from policy.sim.jobs import JobSpec
from policy.sim.metrics import RunResult, imbalance
from policy.sim.migration import Controller, Migrator
from policy.sim.progress import DurationLearner, running_progress
from policy.state import ClusterSnapshot, PodView, RunningProgress
from policy.tenants import EDGE_S, Tenant, draw_tenants

log = logging.getLogger(__name__)

RETRY_BACKOFF = 10.0
_NODE_EVENT = 1  # heap priority after completions
_QUEUED, _RUNNING, _DONE, _UNSCHEDULABLE, _FUTURE = range(5)


def _use(tenant: Tenant, t: float) -> tuple[float, float, float, float]:
    """A tenant's demand from time ``t`` on, in ``policy.state`` units, read just after ``t`` (``EDGE_S``): at a
    change's own time the cycle's float arithmetic may still be on the old side of the edge."""
    return (tenant.use_m(t + EDGE_S) / 1000, tenant.mem_mi / 1024, 0.0, 0.0)


def _with_net(capacity: np.ndarray, net: float) -> np.ndarray:
    """``capacity`` with every node's net capacity ``net``, read-only (``SimConfig.net_shown``)."""
    shown = capacity.copy()
    shown[:, 2] = net
    shown.setflags(write=False)
    return shown


class PendingPod:
    """The pod awaiting a decision: its job id and what the scheduler may know of it (``pod``, a
    ``PodView`` built on first access so loops that only need the mask do not pay for it). ``demand`` and
    ``source`` are the profile served now (the job's drawn ``expected`` unless a learned profile replaces it)."""

    __slots__ = ("job_id", "_spec", "_pod", "demand", "source", "duration")

    def __init__(self, job_id: int, spec: JobSpec, demand=None, source: str | None = None,
                 duration: float = math.nan) -> None:
        self.job_id = job_id
        self._spec = spec
        self._pod: PodView | None = None
        self.demand = spec.expected if demand is None else demand
        self.source = spec.demand_source if source is None else source
        self.duration = duration

    @property
    def pod(self) -> PodView:
        if self._pod is None:
            s = self._spec
            self._pod = PodView(s.requests, self.demand, self.source, f"{s.kind}-{self.job_id}",
                                expected_duration=self.duration)
        return self._pod

    def __repr__(self) -> str:
        return f"PendingPod(job_id={self.job_id}, kind={self._spec.kind!r})"


class Simulator:
    """One simulated cluster run. ``Simulator(SimConfig(...), seed=1)``; ``reset(seed)`` starts another."""

    def __init__(self, config: SimConfig | None = None, *, seed: int | None = None, nodes: Nodes | None = None,
                 jobs: Sequence[JobSpec] | None = None, controller: Controller | None = None) -> None:
        self.config = config or SimConfig()
        self._given = (nodes, jobs)
        self._controller = controller
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Draw a new episode (nodes, jobs, arrivals, profiles) from ``seed``. Nodes or jobs given to the
        constructor replace ``config.cluster`` / the workload in every episode."""
        cfg = self.config
        rng = np.random.default_rng(seed)
        self.nodes, self.jobs, self._skipped = build_episode(cfg, rng, nodes=self._given[0], jobs=self._given[1])
        n_jobs = len(self.jobs)
        self.fleet = Fleet(self.nodes, self.jobs, cfg.checkpoint_interval,
                           default_params() if cfg.contention is None else cfg.contention)
        cap = self.nodes.capacity
        self._shown_capacity = cap if cfg.net_shown is None else _with_net(cap, cfg.net_shown)
        req = np.array([j.requests for j in self.jobs]).reshape(-1, 2)
        room = cap[:, :2] if self.nodes.reserved is None else cap[:, :2] - self.nodes.reserved  # less the DaemonSets'
        self._never = ~((req[:, None, :] <= room[None, :, :] + 1e-9).all(axis=2).any(axis=1)) if n_jobs else []
        self.now = 0.0
        self.excess_integral = 0.0
        self._pending_excess = 0.0
        self.queue_integral = 0.0
        self._decisions = self._choices = 0
        self._heap: list = []
        self._seq = 0
        self.tenants = self._pin_tenants(rng)
        self._next_arrival = 0
        self._queue: deque[int] = deque()
        self._deferred: list[int] = []
        self._retry = False
        self._current: PendingPod | None = None
        self._state = [_FUTURE] * n_jobs
        self._finish = [math.nan] * n_jobs
        self._finished: list[int] = []
        self._placed: list[tuple[str, str]] = []  # (job kind, node type) per scheduling decision
        self._restarts = 0
        self._restarted = [False] * n_jobs
        self.started = [math.nan] * n_jobs  # when each job's current process began progressing
        self.lost_work = 0.0
        self._learning = cfg.profile == "learned"
        self._profiles: dict[str, Profile] = {}
        self._durations = DurationLearner() if cfg.progress_shown == "reports" else None  # off the default path
        self._kinds = [spec.kind for spec in self.jobs]
        self.migrator = None if self._controller is None else Migrator(
            self._controller, self.jobs, self.fleet, self.nodes.names, checkpoint_interval=cfg.checkpoint_interval,
            restore_cost=cfg.restore_cost)
        self._next_check = cfg.migration_interval if self._controller is not None else math.inf
        self._mask_now = np.zeros(0, dtype=bool)
        self._snap: ClusterSnapshot | None = None
        self.done = False
        for ev in cfg.events:
            self.inject(ev)
        self._ticks: list[float] = []
        self._util: list[np.ndarray] = []
        self._imb: list[float] = []
        self._sample()
        self._next_tick = cfg.sample_interval

    def _pin_tenants(self, rng: np.random.Generator) -> tuple[Tenant, ...]:
        """The episode's tenants (module doc), pinned now; their next level changes in ``_tenant_next``."""
        count = self.config.tenants
        self._tenant_next: list[float] = []
        self._next_tenant = math.inf
        if count == 0:
            return ()
        if count > self.nodes.n:
            raise ConfigError("tenants", f"{count} tenants need as many nodes, the cluster has {self.nodes.n}")
        tenants = draw_tenants(int(rng.integers(2**31)), [1000 * c for c in self.nodes.capacity[:, 0]], count)
        self._tenant_slot = [self.fleet.pin(t.node, (t.request_m / 1000, t.mem_mi / 1024), _use(t, 0.0), 0.0,
                                            self._heap) for t in tenants]
        self._tenant_next = [t.next_change(0.0) for t in tenants]
        self._next_tenant = min(self._tenant_next)
        return tenants

    def _shift_tenants(self) -> None:
        """The tenants whose level changes now take their new one."""
        for k, t in enumerate(self.tenants):
            if self._tenant_next[k] <= self.now:
                self.fleet.repin(t.node, self._tenant_slot[k], _use(t, self.now), self.now, self._heap)
                self._tenant_next[k] = t.next_change(self.now)
        self._next_tenant = min(self._tenant_next)
        self._snap = None

    def _tenants_until(self, t: float) -> None:
        """Apply every tenant change up to ``t`` (time stands still otherwise: ``_quiesce``)."""
        while self._next_tenant <= t:
            self._advance_to(self._next_tenant)
            self._shift_tenants()

    # -- time -------------------------------------------------------------------------------------------
    def _advance_to(self, t: float) -> None:
        if t > self.now:
            self.excess_integral += (self.fleet.excess_rate + self._pending_excess) * (t - self.now)
            self.queue_integral += self._pending_excess * (t - self.now)
            self.now = t
            self._snap = None

    def _push(self, t: float, kind: str, ev) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, _NODE_EVENT, self._seq, kind, ev))

    def inject(self, event: Straggler | NodeFailure) -> None:
        """Schedule a straggler or node failure (its times are absolute simulated seconds)."""
        if isinstance(event, Straggler):
            self._push(max(event.start, self.now), "slow", event)
        else:
            self._push(max(event.at, self.now), "fail", event)

    def _sample(self, *, record: bool = False) -> None:
        """A monitor tick: usage becomes the true usage now, assumed resets; ``record`` adds a metrics row."""
        f = self.fleet
        self._usage = f.usage.copy()
        self._usage.setflags(write=False)
        self._sampled_at = self.now
        self._assumed = np.zeros((self.nodes.n, 4))
        up = f.ready
        if record and up.any():
            cap = self.nodes.capacity[up]
            self._ticks.append(self.now)
            self._util.append(f.usage[up].sum(axis=0) / cap.sum(axis=0))
            self._imb.append(imbalance(f.usage[up], cap))
        f.recompute_excess()
        if self._learning:
            self._learn()
        self._snap = None

    def _learn(self) -> None:
        """A usage poll for the profile learner: one sample per class, the mean reading of its running pods
        (pods without a profile of their own are standalone and teach nothing)."""
        f, jobs = self.fleet, self.jobs
        readings: dict[str, list] = {}
        for js in f.on_node:
            for j in js:
                if jobs[j].demand_source == "learned":
                    readings.setdefault(jobs[j].kind, []).append(f.pod_usage(j))
        for kind, rows in readings.items():
            self._profiles[kind] = update(self._profiles.get(kind), np.mean(rows, axis=0), at=self.now)

    # -- the decision loop ------------------------------------------------------------------------------
    def next_decision(self) -> PendingPod | None:
        """Advance time until a pod needs placing and return it; ``None`` once the run is over."""
        if self._current is not None:
            return self._current
        while not self.done:
            if self._queue:
                j = self._queue.popleft()
                mask = self.fleet.mask(j)
                if mask.any():
                    self._decisions += 1
                    self._choices += np.count_nonzero(mask) >= 2
                    self._mask_now = mask
                    self._current = self._pending_pod(j)
                    return self._current
                self._deferred.append(j)
                continue
            if self._retry and self._deferred:
                self._queue.extend(self._deferred)
                self._deferred = []
                self._retry = False
                continue
            self._retry = False
            self._step()
        return None

    def _pending_pod(self, j: int) -> PendingPod:
        spec = self.jobs[j]
        shown = self.config.progress_shown
        duration = (math.nan if shown == "none" else spec.work if shown == "oracle"
                    else self._durations.expected(spec.kind))
        if spec.demand_source != "learned":
            return PendingPod(j, spec, duration=duration)
        served = served_demand(self._profiles.get(spec.kind))
        if served is None:  # not trusted yet: the pod is scored from its requests, as the extender does
            return PendingPod(j, spec, source="requests", duration=duration)
        return PendingPod(j, spec, tuple(served.tolist()), "learned", duration=duration)

    def _step(self) -> None:
        """Process the earliest of: heap event, monitor tick, arrival; or end the run."""
        heap, f, state = self._heap, self.fleet, self._state
        while heap and heap[0][1] == COMPLETE and (
                f.version[heap[0][3]] != heap[0][4] or state[heap[0][3]] != _RUNNING):
            heapq.heappop(heap)  # a completion superseded by a rate change
        t_heap = heap[0][0] if heap else math.inf
        t_arr = self.jobs[self._next_arrival].submit if self._next_arrival < len(self.jobs) else math.inf
        if f.running == 0 and t_arr == math.inf and not self._queue and (not self._deferred or t_heap == math.inf):
            return self._quiesce()
        t = min(t_heap, t_arr, self._next_tick, self._next_check, self._next_tenant)
        if t > self.config.time_limit:
            self._advance_to(self.config.time_limit)
            self.done = True
        elif t == self._next_tick and t < t_heap:
            self._advance_to(t)
            self._sample(record=True)
            self._next_tick = t + self.config.sample_interval
        elif t == self._next_check and t < t_heap and t < t_arr:
            self._advance_to(t)
            self._migrate()
            self._next_check = t + self.config.migration_interval
        elif t == self._next_tenant and t < t_heap and t < t_arr:
            self._advance_to(t)
            self._shift_tenants()
        elif t_heap <= t_arr:
            _, _, _, a, b = heapq.heappop(heap)
            self._advance_to(t_heap)
            self._handle(a, b)
        else:
            self._advance_to(t_arr)
            self._arrive()

    def _arrive(self) -> None:
        t = self.jobs[self._next_arrival].submit
        while self._next_arrival < len(self.jobs) and self.jobs[self._next_arrival].submit <= t:
            j = self._next_arrival
            self._next_arrival += 1
            if self._never[j]:
                self._state[j] = _UNSCHEDULABLE
                log.debug("pod unschedulable on arrival job=%d requests=%s", j, self.jobs[j].requests)
                continue
            self._state[j] = _QUEUED
            self._pending_excess += self.fleet.inv_work[j]
            self._queue.append(j)

    def _handle(self, a, b) -> None:
        f = self.fleet
        if isinstance(a, int):  # a completion: (job, version), already checked current
            f.complete(a, self.now, self._heap)
            if self._durations is not None:
                self._durations.completed(self.jobs[a].kind, self.now - self.started[a])
            self._state[a] = _DONE
            self._finish[a] = self.now
            self._finished.append(a)
            self._retry = True
        elif a == "slow":
            if self.now < b.start + b.duration:  # injected late but still in force: apply the remainder
                f.slow(b.node, b.factor, self.now, self._heap)
                self._push(b.start + b.duration, "unslow", b)
        elif a == "unslow":
            f.slow(b.node, b.factor, self.now, self._heap, end=True)
        elif a == "restored":
            j, ver = b
            if f.version[j] == ver and j in f.restoring[f.node[j]]:
                f.activate(j, self.now, self._heap)
                self._pending_excess -= f.inv_work[j]
                self.started[j] = self.now
        elif a == "fail":
            if not f.ready[b.node]:
                return
            restoring = set(f.restoring[b.node])
            for j, lost in f.fail(b.node, self.now):
                self._restarts += 1
                self.lost_work += lost
                self.excess_integral += lost * f.inv_work[j]
                if j not in restoring:  # a restoring job already counts at rate 0
                    self._pending_excess += f.inv_work[j]
                self._restarted[j] = True
                self._state[j] = _QUEUED
                self._queue.append(j)
            log.debug("node failed node=%s t=%.1f", self.nodes.names[b.node], self.now)
            if math.isfinite(b.duration):
                self._push(b.at + b.duration, "up", b)
        elif a == "up":
            f.recover(b.node, self.now)
            self._retry = True
        self._snap = None

    def _migrate(self) -> None:
        """Carry out the migrator's moves, each on its first target (or fallback) that still fits."""
        f = self.fleet
        for mv in self.migrator.check(self.now, self.snapshot(), self.started):
            src = f.node[mv.job]
            if src < 0 or mv.job not in f.on_node[src]:
                continue  # no longer running there (cannot happen within one check, kept for safety)
            target = next((i for i in mv.targets if i != src and f.fits(mv.job, i)), None)
            if target is not None:
                self.move(mv.job, target)
            self.migrator.applied(mv, target, self.now)
        closed = np.isin(self.nodes.names, list(getattr(self._controller, "tainted", ())))
        if (closed != f.closed).any():  # a taint added or lifted: the scheduler's view changes, deferred pods retry
            f.closed = closed
            self._snap = None
            self._retry = True

    def _quiesce(self) -> None:
        """Nothing is running or coming: retry deferred pods that fit after a backoff, else end the run.

        The monitor keeps sampling meanwhile: a policy that refused every node on a stale reading or on the
        demand assumed for pods that have since finished sees the idle cluster at the next tick. Without those
        ticks such a policy refuses the same frozen view at every retry until the time limit."""
        fits = [j for j in self._deferred if self._feasible_any(j)]
        if fits and self.now + RETRY_BACKOFF <= self.config.time_limit:
            until = self.now + RETRY_BACKOFF
            while self._next_tick <= until:
                self._tenants_until(self._next_tick)
                self._advance_to(self._next_tick)
                self._sample(record=True)
                self._next_tick += self.config.sample_interval
            self._tenants_until(until)
            self._advance_to(until)
            self._retry = True
            return
        for j in self._deferred:
            if j not in fits:  # nothing left to happen can make room for it
                self._state[j] = _UNSCHEDULABLE
                self._pending_excess -= self.fleet.inv_work[j]
                log.debug("pod unschedulable job=%d requests=%s", j, self.jobs[j].requests)
        self._deferred = fits  # still feasible at the time limit: reported unfinished
        self.done = True

    # -- the scheduler's view ---------------------------------------------------------------------------
    def _feasible_any(self, j: int) -> bool:
        return bool(self.fleet.mask(j).any())

    def feasible_mask(self) -> np.ndarray:
        """(N,) bool: the pending pod's requests fit allocatable, a pod slot is free and the node is up."""
        if self._current is None:
            raise NoPendingPod("feasible_mask needs a pending pod; call next_decision first")
        return self._mask_now

    def snapshot(self) -> ClusterSnapshot:
        """What a scheduler can know now (cached until the state changes)."""
        if self._snap is None:
            f, n = self.fleet, self.nodes
            self._snap = ClusterSnapshot.trusted(  # arrays are float64/bool of the right shapes by construction
                names=tuple(n.names), capacity=self._shown_capacity, requested=f.requested.copy(), usage=self._usage,
                usage_age=np.full(n.n, self.now - self._sampled_at), assumed=self._assumed.copy(),
                pods=f.pods.copy(), max_pods=n.max_pods, ready=f.ready & ~f.closed, now=self.now,
                progress=None if self.config.progress_shown == "none" else self._running_progress())
        return self._snap

    def _running_progress(self) -> RunningProgress:
        f, now = self.fleet, self.now
        return running_progress(self.config.progress_shown, f.on_node, now=now, done=lambda j: f.done(j, now),
                                work=f.work, rate=f.rate, started=self.started, kinds=self._kinds,
                                durations=self._durations)

    # -- actions ----------------------------------------------------------------------------------------
    def place(self, node: int) -> None:
        """Start the pending pod on ``node``; ``InfeasiblePlacement`` if it cannot go there."""
        cur = self._current
        if cur is None:
            raise NoPendingPod("place needs a pending pod; call next_decision first")
        j, f = cur.job_id, self.fleet
        if not 0 <= node < self.nodes.n:
            raise InfeasiblePlacement(node, f"no such node (cluster has {self.nodes.n})")
        if not f.fits(j, node):
            raise InfeasiblePlacement(node, "node down, pod limit reached or requests do not fit allocatable")
        self._current = None
        self._state[j] = _RUNNING
        self._placed.append((self.jobs[j].kind, self.nodes.types[node]))
        if self._restarted[j] and self.config.restore_cost > 0:
            self._restore(j, node)  # stays at rate 0, counted in _pending_excess, until restored
        else:
            self._pending_excess -= f.inv_work[j]
            f.add(j, node, self.now, self._heap)
            self.started[j] = self.now
        exp = cur.demand
        row = self._assumed[node]
        row += exp
        self._snap = None

    def _restore(self, j: int, node: int) -> None:
        ver = self.fleet.reserve(j, node)
        self._push(self.now + self.config.restore_cost, "restored", (j, ver))

    def move(self, j: int, node: int) -> float:
        """Migrate running job ``j`` to ``node`` now (the caller checked it fits and differs from its node):
        it rewinds to its checkpoint, then restores there for ``restore_cost`` s. Returns the work lost."""
        f = self.fleet
        lost = f.evict(j, self.now, self._heap)
        self.lost_work += lost
        self.excess_integral += lost * f.inv_work[j]
        if self.config.restore_cost > 0:
            self._pending_excess += f.inv_work[j]
            self._restore(j, node)
        else:
            f.add(j, node, self.now, self._heap)
            self.started[j] = self.now
        row = self._assumed[node]
        row += self.jobs[j].expected
        self._retry = True  # the source has room now
        self._snap = None
        return lost

    def defer(self) -> None:
        """Leave the pending pod unplaced; it is retried after the next event that frees resources."""
        if self._current is None:
            raise NoPendingPod("defer needs a pending pod; call next_decision first")
        self._deferred.append(self._current.job_id)
        self._current = None

    # -- results ----------------------------------------------------------------------------------------
    def result(self) -> RunResult:
        """Metrics of the run so far (final once ``done``)."""
        fin = self._finished
        submit = np.array([self.jobs[j].submit for j in fin])
        jct = np.array([self._finish[j] for j in fin]) - submit
        work = np.array([self.jobs[j].work for j in fin])
        unsched = sum(1 for s in self._state if s == _UNSCHEDULABLE)
        first = self.jobs[0].submit if self.jobs else 0.0
        m = self.migrator
        return RunResult(
            n_jobs=len(self.jobs), finished=len(fin), unschedulable=unsched,
            unfinished=len(self.jobs) - len(fin) - unsched, restarts=self._restarts, skipped_rows=self._skipped,
            jct=jct, slowdown=jct / work if len(fin) else np.zeros(0), kinds=tuple(self.jobs[j].kind for j in fin),
            makespan=(max(self._finish[j] for j in fin) - first) if fin else 0.0,
            tick_times=np.array(self._ticks), utilisation=np.array(self._util).reshape(-1, 4),
            imbalance_series=np.array(self._imb), excess_integral=self.excess_integral,
            migrations=m.migrations if m else 0, migration_rollbacks=m.rollbacks if m else 0,
            lost_work=self.lost_work, decisions=self._decisions, choices=int(self._choices),
            queue_integral=self.queue_integral, placements=tuple(self._placed))
