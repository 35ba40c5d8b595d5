"""drsched's speculative migration decision: a pure LATE-style rule and a separate budget.

Numpy and stdlib only; the simulator (``policy.sim``) and the Kubernetes controller (``migration/``) both
import it. Usage, once per check on one snapshot:

    ctl = MigrationController(make_scorer("demand-aware"), RuleParams(), Budget())
    for intent in ctl.check(snapshot, running_jobs, BudgetState(now=..., running=..., in_flight=...)):
        carry_out(intent)      # the caller is the executor: try intent.target, then intent.fallbacks

or the two pure halves: ``decide`` (rule) → ``apply_budget`` (caps). Formulas: ``late`` (time left, move
cost, the test), ``speed`` (predicted speed on a target); records: ``records``.
"""

from policy.errors import ConfigError
from policy.migrate.budget import Budget, BudgetResult, BudgetState, Limit, Refusal, apply_budget
from policy.migrate.controller import MigrationController
from policy.migrate.late import checkpoint_progress_from_age, move_cost, time_left, worth_moving
from policy.migrate.records import MigrationInputError, MigrationIntent, RunningJob
from policy.migrate.rule import RuleParams, RuleResult, RuleState, Skip, decide
from policy.migrate.speed import predicted_speed

__all__ = [
    "Budget", "BudgetResult", "BudgetState", "Limit", "ConfigError", "MigrationController",
    "MigrationInputError", "MigrationIntent", "Refusal", "RuleParams", "RuleResult",
    "RuleState", "RunningJob", "Skip", "apply_budget", "checkpoint_progress_from_age", "decide", "move_cost",
    "predicted_speed", "time_left", "worth_moving",
]
