"""What the simulator shows a scheduler of the running pods' progress and of the incoming pod's run time.

Why it exists: issue #22 asks whether knowing how far along the running pods are (every drsched job writes
``progress.json``) and how long the incoming pod will run lets a policy place better. This module turns the
simulator's truth into what a scheduler could know, in one of two ways (``SimConfig.progress_shown``):

``reports``  what a deployment has. A running pod's time left is ``(1 - p) * t / p`` from the fraction done
             ``p`` it reports and the seconds ``t`` its process has run (its mean rate so far; a resumed job's
             checkpointed part counts as done); missing (NaN) for a process younger than ``MIN_REPORT_AGE`` or
             that has not progressed. A pod's expected run time is the median run time of the completed pods of
             its class in this episode (NaN before the first completes): wall seconds, so contention it met
             counts in.
``oracle``   the truth: time left = remaining work / present rate (inf at rate 0), run time = its work.

State owned: the completed run times per class (``DurationLearner``). Pure otherwise.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import numpy as np

from policy.state import RunningProgress

PROGRESS_SHOWN = ("none", "reports", "oracle")
MIN_REPORT_AGE = 5.0
"""Seconds a process must have run before its mean rate is trusted (a reporter's first reports are noise)."""


class DurationLearner:
    """Median run time of the completed pods of each class, as a deployment would learn it."""

    def __init__(self) -> None:
        self._seen: dict[str, list[float]] = {}

    def completed(self, kind: str, run_time: float) -> None:
        if run_time > 0 and math.isfinite(run_time):
            self._seen.setdefault(kind, []).append(run_time)

    def expected(self, kind: str) -> float:
        seen = self._seen.get(kind)
        return statistics.median(seen) if seen else math.nan


def report_time_left(done: float, work: float, running_for: float) -> float:
    """A reporter's time left: ``(1 - p) * t / p``; NaN if the process is too young or has not progressed."""
    p = min(max(done / work, 0.0), 1.0)
    if running_for < MIN_REPORT_AGE or p <= 0.0:
        return math.nan
    return (1.0 - p) * running_for / p


def running_progress(mode: str, on_node: Sequence[Sequence[int]], *, now: float, done, work: Sequence[float],
                     rate: Sequence[float], started: Sequence[float], kinds: Sequence[str],
                     durations: DurationLearner | None) -> RunningProgress:
    """The ``RunningProgress`` of the jobs ``on_node[i]`` (running on node ``i``) shown in ``mode``;
    ``done(j)`` is job ``j``'s work done by ``now``."""
    node, left, dur = [], [], []
    for i, js in enumerate(on_node):
        for j in js:
            node.append(i)
            if mode == "oracle":
                r = rate[j]
                left.append((work[j] - done(j)) / r if r > 0 else math.inf)
                dur.append(work[j])
            else:
                left.append(report_time_left(done(j), work[j], now - started[j]))
                dur.append(durations.expected(kinds[j]))
    return RunningProgress(np.array(node, dtype=np.int64), np.array(left), np.array(dur))
