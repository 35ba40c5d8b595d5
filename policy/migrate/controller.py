"""A migration controller's decision half: the rule's memory plus the budget, for one check at a time.

Why it exists: the simulator (and a Kubernetes controller's reconcile loop) call one object per check;
it threads ``RuleState`` from check to check, runs ``rule.decide`` then ``budget.apply_budget`` and logs one
line per intent and refusal. It carries out nothing: the caller is the executor (the simulator's move, the
controller's step-by-step protocol). State owned: the last ``RuleState`` and counters of outcomes.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from policy.migrate.budget import Budget, BudgetResult, BudgetState, apply_budget
from policy.migrate.records import MigrationIntent, RunningJob
from policy.migrate.rule import RuleParams, RuleState, decide
from policy.model import Scorer
from policy.state import ClusterSnapshot

if TYPE_CHECKING:  # a type only: importing policy.baselines here would be circular
    from policy.baselines import Scorer

log = logging.getLogger(__name__)


class MigrationController:
    """``check(snapshot, jobs, budget_state)`` → the intents allowed now. ``reset()`` forgets everything."""

    def __init__(self, scorer: Scorer, params: RuleParams | None = None, budget: Budget | None = None) -> None:
        self.scorer = scorer
        self.params = params or RuleParams()
        self.budget = budget or Budget()
        self.reset()

    def reset(self) -> None:
        self.state = RuleState()
        self.outcomes: Counter[str] = Counter()
        self.last: BudgetResult | None = None

    def check(self, snap: ClusterSnapshot, jobs: Sequence[RunningJob],
              budget_state: BudgetState) -> tuple[MigrationIntent, ...]:
        result = decide(jobs, snap, self.scorer, self.params, self.state)
        self.state = result.state
        verdict = apply_budget(result.intents, self.budget, budget_state)
        self.last = verdict
        for it in verdict.allowed:
            self.outcomes["allowed"] += 1
            log.debug("[%s] migration allowed source=%s target=%s saving=%.1f reason=%s", it.job_id, it.source,
                      it.target, it.saving, it.reason)
        for r in verdict.refused:
            self.outcomes[f"refused:{r.limit.value}"] += 1
            log.debug("[%s] migration refused limit=%s detail=%s", r.intent.job_id, r.limit.value, r.detail)
        return verdict.allowed
