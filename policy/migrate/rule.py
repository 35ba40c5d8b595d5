"""The migration decision rule: which slow jobs to move, and where. Decides only; ``budget`` enforces.

Why it exists: the simulator and the Kubernetes controller must move jobs by the same rule, so it is a pure
function of one snapshot: ``decide(jobs, snapshot, scorer, params, state) -> RuleResult``. It owns no
state; the little memory it needs between checks (consecutive slow checks per job, blocklisted nodes) comes
in as an immutable ``RuleState`` and goes out as a new one.

Per check (after LATE, Mantri and Spark speculation):
1. Eligible: the job's node is in the snapshot, its rate is known and it has run ``min_running`` seconds in
   this process (LATE's one minute, Spark's ``minTaskRuntime``).
2. Slow: its smoothed rate is below ``slow_ratio`` × its expected rate × the share of full speed its node
   gives it alone (LATE's SlowTaskThreshold; the expected rate is the job's at full demand, so without that
   share every job on a node smaller than its demand would be "slow" from its first check). Contention
   counts as slowness: whether another node does better is step 4's question. The node of a slow job is
   blocklisted as a *target* for ``blocklist_for`` seconds (Flink's slow-node blocklist) when the job is also
   slow against the speed model's prediction for it there, next to the node's other load: slowness the
   model cannot explain is a straggler, whose measured usage looks idle, so a load-aware scorer would
   otherwise send jobs back onto it; a node merely busy stays a target for jobs it has room for.
3. Target: the best node by the *same scorer the extender uses* among nodes where the pod fits, that are
   not the source and not blocklisted. Candidates are taken longest time left first; each intent's demand
   is added to the target's assumed usage before the next job is considered, so two jobs in one check do
   not both count on the same free capacity.
4. Worth it (``policy.migrate.late``): time_left_here > restore + lost_work_time + time_left_target·(1+margin),
   with the target's rate = expected_rate × ``policy.migrate.speed.predicted_speed``.
5. Hysteresis: an intent only after ``slow_checks`` consecutive checks passing 2-4; any failing check resets
   the count. The count is kept while an intent waits on the budget, and restarts from 0 once the job moved
   (its new process is too young).

Every job not proposed gets a ``Skip`` reason, so a controller can log why nothing happened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

from policy.errors import ConfigError
from policy.features import estimated_usage, feasible_mask
from policy.migrate.late import move_cost, time_left, worth_moving
from policy.migrate.records import MigrationIntent, RunningJob
from policy.migrate.speed import predicted_speed
from policy.model import Scorer
from policy.state import ClusterSnapshot

if TYPE_CHECKING:  # a type only: importing policy.baselines here would be circular
    from policy.baselines import Scorer

MAX_FALLBACKS = 3


@dataclass(frozen=True)
class RuleParams:
    """Thresholds of the rule (module docstring); units are seconds and fractions."""

    margin: float = 0.25
    """Relative safety margin on the target's predicted time left (Spark's multiplier 1.5 is margin 0.5)."""
    slow_checks: int = 3
    """Consecutive slow checks before an intent (hysteresis; Koordinator's anomaly detector uses 5)."""
    slow_ratio: float = 0.5
    """A job is slow when its rate is below this fraction of its expected rate."""
    min_running: float = 30.0
    """Seconds the current process must have run before its rate is trusted."""
    blocklist_for: float = 120.0
    """Seconds a node that hosted a slow job is not a target."""

    def __post_init__(self) -> None:
        if not self.margin >= 0:
            raise ConfigError("margin", f"must be >= 0, got {self.margin}")
        if self.slow_checks < 1:
            raise ConfigError("slow_checks", f"must be >= 1, got {self.slow_checks}")
        if not 0 < self.slow_ratio <= 1:
            raise ConfigError("slow_ratio", f"must be in (0, 1], got {self.slow_ratio}")
        if not (self.min_running >= 0 and self.blocklist_for >= 0):
            raise ConfigError("min_running/blocklist_for", "must be >= 0")


@dataclass(frozen=True)
class RuleState:
    """What the rule remembers between checks: consecutive slow checks per job, blocklisted node → until."""

    slow: Mapping[str, int] = field(default_factory=dict)
    blocked: Mapping[str, float] = field(default_factory=dict)


class Skip(StrEnum):
    """Why a job got no intent this check."""

    UNKNOWN_NODE = "unknown-node"  # its node is not in the snapshot
    TOO_YOUNG = "too-young"        # rate unknown or the process ran less than min_running
    NOT_SLOW = "not-slow"          # rate >= slow_ratio × expected rate
    NO_TARGET = "no-target"        # no feasible node other than the source (and not blocklisted)
    NOT_WORTH = "not-worth"        # the best target does not beat staying, margin included
    WARMING = "warming"            # worth it, but fewer than slow_checks consecutive checks so far


@dataclass(frozen=True)
class RuleResult:
    intents: tuple[MigrationIntent, ...]
    skipped: Mapping[str, Skip]
    state: RuleState
    details: Mapping[str, str] = field(default_factory=dict)
    """Per skipped job, the numbers behind its skip (for a person reading the controller's log)."""


def _with_assumed(snap: ClusterSnapshot, node: int, job: RunningJob) -> ClusterSnapshot:
    assumed, requested, pods = snap.assumed.copy(), snap.requested.copy(), snap.pods.copy()
    assumed[node] += job.pod.demand
    requested[node] += job.pod.requests
    pods[node] += 1
    return ClusterSnapshot(names=snap.names, capacity=snap.capacity, requested=requested, usage=snap.usage,
                           usage_age=snap.usage_age, assumed=assumed, pods=pods, max_pods=snap.max_pods,
                           ready=snap.ready, now=snap.now)


def _alone_speed(job: RunningJob, snap: ClusterSnapshot, node: int) -> float:
    """The share of full speed the job's node gives it with nothing else there (a node smaller than the job's
    demand never runs it at full speed, so that alone is not slowness)."""
    return predicted_speed(job.pod.demand, snap.capacity[node], np.zeros_like(job.pod.demand), 0.0)


def _speed_here(job: RunningJob, snap: ClusterSnapshot, est: np.ndarray, node: int) -> float:
    """The speed model's prediction for the job where it runs, next to the node's other estimated load."""
    others = np.maximum(est[node] - job.pod.demand, 0.0)
    return predicted_speed(job.pod.demand, snap.capacity[node], others, max(float(snap.pods[node]) - 1.0, 0.0))


def _estimate(job: RunningJob, snap: ClusterSnapshot, est: np.ndarray, node: int) -> tuple[float, float, float]:
    """(target rate, lost_work_time, time_left_target) of moving ``job`` to ``node``."""
    rate = job.expected_rate * predicted_speed(job.pod.demand, snap.capacity[node], est[node], snap.pods[node])
    lost, left = move_cost(job.progress, job.checkpoint_progress, rate, job.restore_cost)
    return rate, lost, left


def _slowness(job: RunningJob, snap: ClusterSnapshot, index: Mapping[str, int],
              params: RuleParams) -> tuple[Skip | None, str]:
    """Steps 1-2 for one job: (None, "") when it is eligible and slow, else the skip reason and its numbers."""
    if job.node not in index:
        return Skip.UNKNOWN_NODE, ""
    if job.rate is None or job.running_for < params.min_running:
        return Skip.TOO_YOUNG, ""
    bar = params.slow_ratio * job.expected_rate * _alone_speed(job, snap, index[job.node])
    if job.rate >= bar:
        return Skip.NOT_SLOW, f"rate {job.rate:.4g}/s >= {bar:.4g}/s"
    return None, ""


def _straggles(job: RunningJob, snap: ClusterSnapshot, est: np.ndarray, node: int, params: RuleParams) -> bool:
    """Step 2's node judgement for a slow job: slow against the speed model's prediction for it there too, so
    its node, not its neighbours, is to blame (the node is blocklisted; the taint baseline taints it)."""
    return job.rate is not None and job.rate < params.slow_ratio * job.expected_rate * _speed_here(job, snap, est, node)


def straggler_nodes(jobs: Sequence[RunningJob], snap: ClusterSnapshot,
                    params: RuleParams | None = None) -> dict[str, tuple[str, ...]]:
    """Nodes judged degraded on this snapshot (the judgement ``decide`` blocklists by) → the jobs that show it."""
    params = params or RuleParams()
    index = {name: i for i, name in enumerate(snap.names)}
    est = estimated_usage(snap)
    out: dict[str, tuple[str, ...]] = {}
    for job in jobs:
        if _slowness(job, snap, index, params)[0] is None and _straggles(job, snap, est, index[job.node], params):
            out[job.node] = (*out.get(job.node, ()), job.job_id)
    return out


def decide(jobs: Sequence[RunningJob], snap: ClusterSnapshot, scorer: Scorer, params: RuleParams | None = None,
           state: RuleState | None = None) -> RuleResult:
    """Intents for the jobs worth moving now, longest time left first (module docstring)."""
    params = params or RuleParams()
    state = state or RuleState()
    now = snap.now
    index = {name: i for i, name in enumerate(snap.names)}
    blocked = {n: t for n, t in state.blocked.items() if t > now}
    skipped: dict[str, Skip] = {}
    details: dict[str, str] = {}
    slow: dict[str, int] = {}
    est0 = estimated_usage(snap)
    candidates: list[tuple[float, RunningJob]] = []
    for job in jobs:
        skip, detail = _slowness(job, snap, index, params)
        if skip is not None:
            skipped[job.job_id] = skip
            if detail:
                details[job.job_id] = detail
            continue
        if _straggles(job, snap, est0, index[job.node], params):
            blocked[job.node] = now + params.blocklist_for
        candidates.append((time_left(job.progress, job.rate), job))
    candidates.sort(key=lambda c: -c[0])
    blocked_mask = np.array([n in blocked for n in snap.names], dtype=bool)
    intents: list[MigrationIntent] = []
    cur = snap
    for here, job in candidates:
        source = index[job.node]
        allowed = feasible_mask(cur, job.pod) & ~blocked_mask
        allowed[source] = False
        scores = np.asarray(scorer.score(cur, job.pod), dtype=float)
        allowed &= np.isfinite(scores)
        order = [int(i) for i in np.flatnonzero(allowed)[np.argsort(-scores[allowed], kind="stable")]]
        if not order:
            skipped[job.job_id] = Skip.NO_TARGET
            details[job.job_id] = f"blocklisted: {','.join(sorted(n for n in blocked if n != job.node)) or '-'}"
            continue
        est = estimated_usage(cur)
        best = order[0]
        rate, lost, left = _estimate(job, cur, est, best)
        if not worth_moving(here, job.restore_cost, lost, left, params.margin):
            skipped[job.job_id] = Skip.NOT_WORTH
            details[job.job_id] = (f"left here {here:.0f}s <= restore {job.restore_cost:.0f}s + redo {lost:.0f}s + "
                                   f"left on {cur.names[best]} {left:.0f}s x{1 + params.margin:g} "
                                   f"(predicted speed {rate / job.expected_rate:.2f})")
            continue
        count = state.slow.get(job.job_id, 0) + 1
        slow[job.job_id] = count
        if count < params.slow_checks:
            skipped[job.job_id] = Skip.WARMING
            details[job.job_id] = f"slow check {count} of {params.slow_checks}, target {cur.names[best]}"
            continue
        fallbacks = []
        for k in order[1:]:
            if len(fallbacks) == MAX_FALLBACKS:
                break
            _, lost_k, left_k = _estimate(job, cur, est, k)
            if worth_moving(here, job.restore_cost, lost_k, left_k, params.margin):
                fallbacks.append(cur.names[k])
        intents.append(MigrationIntent(
            job_id=job.job_id, source=job.node, target=cur.names[best], fallbacks=tuple(fallbacks),
            reason=(f"time left {here:.0f}s > {job.restore_cost + lost + left:.0f}s on target "
                    f"(margin {params.margin:g})"),
            time_left_here=here, time_left_target=left, restore_cost=job.restore_cost, lost_work_time=lost,
            predicted_rate=rate, slow_checks=count))
        cur = _with_assumed(cur, best, job)
    return RuleResult(tuple(intents), skipped, RuleState(slow=slow, blocked=blocked), details)
