"""The LATE estimates: how long a job has left where it is, and what a move to another node would cost.

Why it exists: the migration decision is these few formulas; each is pure and table-tested
(``tests/unit/policy/migrate/test_late.py``). Source: LATE (Zaharia et al., OSDI 2008) for time left from a
progress rate; Mantri (OSDI 2010) for comparing it with a restarted copy's cost. The module owns no state.

    time_left_here   = (1 − progress) / rate                                (inf when rate = 0)
    lost_work_time   = (progress − checkpoint_progress) / target_rate        (redo since the checkpoint)
    time_left_target = (1 − progress) / target_rate
    worth_moving     ⇔ time_left_here > restore_cost + lost_work_time + time_left_target × (1 + margin)

The margin multiplies only the target's estimate, which is the uncertain one (a predicted rate); the
restore cost and the lost work are known.
"""

from __future__ import annotations

import math


def time_left(progress: float, rate: float) -> float:
    """LATE's estimated time to end: (1 − progress) / rate; ``inf`` for a stalled job, 0 for a finished one."""
    remaining = max(1.0 - progress, 0.0)
    if remaining == 0.0:
        return 0.0
    return remaining / rate if rate > 0.0 else math.inf


def move_cost(progress: float, checkpoint_progress: float, target_rate: float,
              restore_cost: float) -> tuple[float, float]:
    """(lost_work_time, time_left_target) of resuming from the checkpoint on a node running it at ``target_rate``."""
    if target_rate <= 0.0:
        return math.inf, math.inf
    return max(progress - checkpoint_progress, 0.0) / target_rate, max(1.0 - progress, 0.0) / target_rate


def worth_moving(time_left_here: float, restore_cost: float, lost_work_time: float, time_left_target: float,
                 margin: float) -> bool:
    """The migration test of the module docstring (strict: a tie stays)."""
    return time_left_here > restore_cost + lost_work_time + time_left_target * (1.0 + margin)


def checkpoint_progress_from_age(progress: float, rate: float, checkpoint_age: float) -> float:
    """Progress at the newest checkpoint when only its age (seconds) is known: progress − rate × age, >= 0.

    ``checkpoint_age = inf`` (no checkpoint) gives 0: a move loses all progress."""
    if not math.isfinite(checkpoint_age):
        return 0.0
    return min(max(progress - rate * max(checkpoint_age, 0.0), 0.0), progress)
