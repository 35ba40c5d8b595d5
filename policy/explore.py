"""Exploration for off-policy evaluation: draw drsched's top node uniformly among the near-tied ones. Pure.

Why: a log of greedy decisions only says what happened at the nodes the policy liked best, so another
policy's value cannot be estimated from it without a model. Randomising where the served policy barely
cares (nodes within ``margin`` of the best 0-10 score) costs almost nothing, and logging the probability of
the node it drew (its propensity) makes importance-weighted estimates unbiased on those decisions.

Rule, on the served 0-10 scores of the allowed nodes:

    tied   = nodes with score >= max - margin, and > 0    (sorted by name: every replica draws alike;
                                                           0 is also what a refused node gets: never drawn)
    draw   = tied[crc32(seed:pod uid) mod |tied|]          (uniform over uids; the same pod, the same draw)
    scores = the drawn node keeps the max, the other tied nodes get at most max - 1
    propensity = 1 / |tied|                               (1 when a single node is the best)

The draw is a hash rather than a random generator so that replicas and retries of one pod agree
(scoring stays stateless). kube-scheduler adds its own plugins' scores, so the extender's top node is
what is randomised, not the final binding: the log records both (``chosen`` and the outcome's node).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True, eq=False)
class Explored:
    scores: np.ndarray        # the 0-10 scores to serve
    chosen: int               # row of the drawn node
    tied: tuple[int, ...]     # rows it was drawn from
    propensity: float


def explore(scores: np.ndarray, names: list[str] | tuple[str, ...], *, uid: str, margin: float,
            seed: int = 0) -> Explored | None:
    """The scores with the top node drawn among the near-tied (module doc); None when no node scores > 0."""
    if scores.size == 0:
        return None
    best = int(scores.max())
    if best <= 0:
        return None  # nothing allowed: nothing to draw
    tied = sorted(np.flatnonzero((scores >= best - margin) & (scores > 0)).tolist(), key=lambda i: names[i])
    pick = tied[zlib.crc32(f"{seed}:{uid}".encode()) % len(tied)]
    out = scores.copy()
    if len(tied) > 1:
        rows = np.array([i for i in tied if i != pick])
        out[rows] = np.minimum(out[rows], best - 1)
        out[pick] = best
    return Explored(scores=out, chosen=pick, tied=tuple(tied), propensity=1.0 / len(tied))
