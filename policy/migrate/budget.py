"""The migration budget: which of the rule's intents may be carried out now, and why the others may not.

Why it exists: deciding and enforcing are separate (descheduler's evictor, Koordinator's arbitration). The
rule says what is worth moving; this pure function applies the caps, in the intents' order, and returns a
typed ``Limit`` for every refusal. An exhausted budget is an expected outcome, not an error. The caller
builds ``BudgetState`` from its ground truth (the simulator's fleet; the controller's annotations); the
module owns no state.

Caps, checked in this order per intent (the first that fails is reported):
    DRY_RUN       dry run: nothing is carried out
    IN_FLIGHT     the job is already migrating
    MAX_PER_JOB   the job has been migrated ``max_per_job`` times (SpeCon: once)
    COOLDOWN      fewer than ``cooldown`` seconds since the job's last migration (Hadoop: 15 s after acting)
    TOTAL         ``max_concurrent`` migrations in flight cluster-wide (in flight + allowed this check)
    FRACTION      more than ``max_fraction`` of the running jobs migrating (LATE's SpeculativeCap 10 %; at
                  least one is always allowed)
    SOURCE_NODE   ``max_per_node`` migrations already touch the source (Koordinator maxMigratingPerNode 2)
    TARGET_NODE   ... or the target (a migration counts on both of its nodes)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from policy.errors import ConfigError
from policy.migrate.records import MigrationIntent


@dataclass(frozen=True)
class Budget:
    """Caps on migrations (module docstring)."""

    max_concurrent: int = 4
    """Migrations in flight at once, cluster-wide."""
    max_per_node: int = 2
    """Migrations in flight touching one node (as source or target)."""
    max_fraction: float = 0.1
    """Migrations in flight as a fraction of running jobs (at least one is allowed)."""
    cooldown: float = 60.0
    """Seconds after a job's last migration before it may move again."""
    max_per_job: int = 2
    """Migrations of one job over its life."""
    dry_run: bool = False
    """Refuse everything with ``Limit.DRY_RUN`` (decisions still logged)."""

    def __post_init__(self) -> None:
        if min(self.max_concurrent, self.max_per_node, self.max_per_job) < 0:
            raise ConfigError("max_*", "caps must be >= 0")
        if not (0 <= self.max_fraction <= 1 and self.cooldown >= 0):
            raise ConfigError("max_fraction/cooldown", "need 0 <= max_fraction <= 1 and cooldown >= 0")


@dataclass(frozen=True)
class BudgetState:
    """What the executor knows now: the time, running jobs, migrations in flight and each job's history."""

    now: float
    running: int
    in_flight: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """job → (source, target) of migrations not finished yet."""
    last_migrated: Mapping[str, float] = field(default_factory=dict)
    migrations: Mapping[str, int] = field(default_factory=dict)


class Limit(StrEnum):
    DRY_RUN = "dry-run"
    IN_FLIGHT = "in-flight"
    MAX_PER_JOB = "max-per-job"
    COOLDOWN = "cooldown"
    TOTAL = "total"
    FRACTION = "fraction"
    SOURCE_NODE = "source-node"
    TARGET_NODE = "target-node"


@dataclass(frozen=True)
class Refusal:
    intent: MigrationIntent
    limit: Limit
    detail: str


@dataclass(frozen=True)
class BudgetResult:
    allowed: tuple[MigrationIntent, ...]
    refused: tuple[Refusal, ...]


def apply_budget(intents: Sequence[MigrationIntent], budget: Budget, state: BudgetState) -> BudgetResult:
    """Allow intents in order while every cap holds; refuse the rest with the first cap they hit."""
    per_node: dict[str, int] = {}
    for src, dst in state.in_flight.values():
        per_node[src] = per_node.get(src, 0) + 1
        per_node[dst] = per_node.get(dst, 0) + 1
    flying = len(state.in_flight)
    fraction_cap = max(1, int(budget.max_fraction * state.running))
    allowed: list[MigrationIntent] = []
    refused: list[Refusal] = []
    for it in intents:
        done = state.migrations.get(it.job_id, 0)
        since = state.now - state.last_migrated.get(it.job_id, float("-inf"))
        checks = (
            (budget.dry_run, Limit.DRY_RUN, "dry run"),
            (it.job_id in state.in_flight, Limit.IN_FLIGHT, "already migrating"),
            (done >= budget.max_per_job, Limit.MAX_PER_JOB, f"migrated {done} of {budget.max_per_job} times"),
            (since < budget.cooldown, Limit.COOLDOWN, f"last migrated {since:.0f}s ago < {budget.cooldown:g}s"),
            (flying >= budget.max_concurrent, Limit.TOTAL, f"{flying} in flight of {budget.max_concurrent}"),
            (flying >= fraction_cap, Limit.FRACTION, f"{flying} in flight of {fraction_cap} "
                                                     f"({budget.max_fraction:g} of {state.running} running)"),
            (per_node.get(it.source, 0) >= budget.max_per_node, Limit.SOURCE_NODE,
             f"{per_node.get(it.source, 0)} migrations on {it.source}"),
            (per_node.get(it.target, 0) >= budget.max_per_node, Limit.TARGET_NODE,
             f"{per_node.get(it.target, 0)} migrations on {it.target}"),
        )
        hit = next(((limit, detail) for failed, limit, detail in checks if failed), None)
        if hit is not None:
            refused.append(Refusal(it, *hit))
            continue
        allowed.append(it)
        flying += 1
        per_node[it.source] = per_node.get(it.source, 0) + 1
        per_node[it.target] = per_node.get(it.target, 0) + 1
    return BudgetResult(tuple(allowed), tuple(refused))
