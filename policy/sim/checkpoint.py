"""Where a job's newest checkpoint is: the one formula behind lost work on a migration or a node failure.

Why it exists: "a move loses the work since the last checkpoint" must mean the same in the fleet, the
migration feed and the tests. Jobs checkpoint every ``interval`` seconds of *work* (the time the job needs
alone; ``SimConfig.checkpoint_interval``), i.e. at done = interval, 2·interval, ...; ``None`` or 0 means no
checkpoints, so a restart loses all progress (SpeCon's jobs). Pure; owns no state.
"""

from __future__ import annotations

import math


def checkpointed(done: float, interval: float | None) -> float:
    """Work (seconds) covered by the newest checkpoint of a job that has done ``done`` seconds of work."""
    if not interval or done <= 0.0:
        return 0.0
    return min(math.floor(done / interval + 1e-9) * interval, done)
