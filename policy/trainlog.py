"""Reading what ``python -m policy.train`` printed: its periodic evaluation lines and how long its warm start took.

Why it exists: the warm-start studies' table scripts (``scripts/warm_start_table.py``,
``scripts/warm_start_strong_table.py``) both read the trainer's saved output, and scripts never import each
other (``tests/unit/test_scripts.py``), so the format is read here, once. Pure: text in, numbers out.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

FIELDS = ("steps", "dqn", "default-k8s", "demand-aware")
"""The columns of a per-run CSV: one row per periodic evaluation (the trainer's ``eval`` line)."""
OUTPUT = ".trainer-output.txt"
"""The suffix under which a run's saved trainer output is kept beside its CSV."""
EVAL = re.compile(r"eval steps=(\d+) dqn=([\d.]+) default-k8s=([\d.]+) demand-aware=([\d.]+)")
"""One periodic evaluation line of the trainer's log: steps, then the three policies' validation excess."""
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")


def imitation_seconds(log: Path) -> float | None:
    """Seconds from the trainer's 'effective config' line to its 'warm start:' line (env and model set-up, a
    fraction of a second, included); None when the log lacks either."""
    t: dict[str, float] = {}
    for line in log.read_text().splitlines():
        m = _STAMP.match(line)
        for key in ("effective config", "warm start:"):
            if m and key in line and key not in t:
                t[key] = dt.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S").timestamp() + int(m[2]) / 1000
    return t["warm start:"] - t["effective config"] if len(t) == 2 else None
