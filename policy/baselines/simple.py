"""The two floor baselines: uniform random and round-robin over feasible nodes.

Round-robin keeps one piece of state, the last node it chose (by name, so nodes joining or leaving do not
shift it); callers make a fresh scorer per run.
"""

from __future__ import annotations

import numpy as np

from policy.state import ClusterSnapshot, PodView


class RandomScorer:
    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def score(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        return self.rng.random(snap.n_nodes)


class RoundRobin:
    """Scores the node after the last chosen one highest, then the next, and so on around the ring.

    ``score`` cannot know which node the caller finally picks (it may be infeasible), so the caller
    reports it with ``chose``; without that call the scorer assumes its top node was taken.
    """

    name = "round-robin"

    def __init__(self) -> None:
        self.last: str | None = None

    def score(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        n = snap.n_nodes
        if n == 0:
            return np.zeros(0)
        start = 0
        if self.last is not None:
            names = snap.names
            start = (names.index(self.last) + 1) % n if self.last in names else 0
        order = (np.arange(n) - start) % n  # 0 for the next node in the ring
        self.last = snap.names[start]
        return -order.astype(float)

    def chose(self, name: str) -> None:
        self.last = name
