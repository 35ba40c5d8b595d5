"""The migration controller's knobs as the lab runs it, for jobs of tens of seconds instead of the shipped minutes.

Why it exists: the lab deploys the controller with these (``lab.kube.MIGRATION_ARGS`` is written from them) and
the simulator's copy of a lab scenario (``policy.migration_eval``'s ``lab-straggler``) must move jobs by the same
ones, so they are written once, here. Every other knob is the controller's default (``migration.settings``, which
are ``RuleParams``' and ``Budget``'s). The module owns no state.
"""

from __future__ import annotations

from dataclasses import dataclass

from policy.migrate.budget import Budget
from policy.migrate.rule import RuleParams


@dataclass(frozen=True)
class Knobs:
    """The controller's settings that differ from its defaults (``python -m migration --help`` names each)."""

    interval_s: float
    """Seconds between checks (``--interval-s``; ``SimConfig.migration_interval``)."""
    min_running_s: float
    """Seconds a process runs before its rate is trusted (``--min-running-s``; ``RuleParams.min_running``)."""
    slow_checks: int
    """Consecutive slow checks before a move (``--slow-checks``; ``RuleParams.slow_checks``)."""
    cooldown_s: float
    """Seconds after a job's last move before the next (``--cooldown-s``; ``Budget.cooldown``)."""
    max_fraction: float
    """Moves in flight over running jobs (``--max-fraction``; ``Budget.max_fraction``)."""
    restore_cost_s: float
    """The rule's estimate of seconds from stop to progress on the target (``--restore-cost-s``)."""

    def rule(self) -> RuleParams:
        return RuleParams(min_running=self.min_running_s, slow_checks=self.slow_checks)

    def budget(self) -> Budget:
        return Budget(cooldown=self.cooldown_s, max_fraction=self.max_fraction)


LAB = Knobs(interval_s=5.0, min_running_s=10.0, slow_checks=2, cooldown_s=20.0, max_fraction=0.5, restore_cost_s=5.0)
"""The lab's controller (``lab.kube.MIGRATION_ARGS``)."""
