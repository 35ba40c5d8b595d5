"""Drive a whole run with a plain function as the scheduler (heuristic baselines, evaluation, the bench).

Why it exists: the env steps one decision at a time, but baselines and the evaluator just need "run this
policy to the end". It owns no state.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from policy.sim.engine import Simulator
from policy.sim.metrics import RunResult
from policy.state import ClusterSnapshot, PodView

Choose = Callable[[ClusterSnapshot, PodView, np.ndarray], "int | None"]


def run(sim: Simulator, choose: Choose) -> RunResult:
    """Run ``sim`` to the end, asking ``choose(snapshot, pod, feasible_mask)`` for a node index (or ``None``
    to defer) at every decision; the mask always has at least one True."""
    while (pending := sim.next_decision()) is not None:
        node = choose(sim.snapshot(), pending.pod, sim.feasible_mask())
        if node is None:
            sim.defer()
        else:
            sim.place(int(node))
    return sim.result()


def first_feasible(snapshot: ClusterSnapshot, pod: PodView, mask: np.ndarray) -> int:
    """The trivial policy: the lowest-index node that fits."""
    return int(mask.argmax())
