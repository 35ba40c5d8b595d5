"""Scoring as the deployment serves it: hot-node filter, the extender's 0-10 score x weight, kube-scheduler's own.

Why it exists: a pure argmax of a scorer is not what a pod meets in a cluster. There, kube-scheduler keeps
the nodes that fit by requests, the extender's filter drops *hot* nodes (fresh estimated usage at or above
``HOT_THRESHOLDS`` of capacity; a node with stale or missing usage passes), the extender maps its raw values
to integers 0..10 over the remaining nodes, and kube-scheduler adds ``score x weight x 10`` to its default
resource scoring (NodeResourcesFit LeastAllocated + NodeResourcesBalancedAllocation, 0..100 each; the
other default plugins give every node of the simulator the same score). The highest total wins, ties at
random. ``Served`` wraps any ``Scorer`` into that total, so ``policy.sim.episode`` evaluates what is served.

The 0..10 rule lives here and the extender imports it; the hot filter mirrors ``extender/decide.py``'s
``filter_reasons`` hot check on the snapshot alone (a test checks both agree); the defaults are its settings'.
"""

from __future__ import annotations

import numpy as np

from policy.baselines.default_k8s import DefaultK8s
from policy.features import DEFAULT_MAX_USAGE_AGE, estimated_usage, feasible_mask, usage_is_fresh
from policy.model import Scorer
from policy.state import ClusterSnapshot, PodView

HOT_THRESHOLDS = (0.65, 0.95, np.inf, np.inf)
"""Estimated usage / capacity at which a fresh node is filtered, per resource (the extender's defaults)."""
NO_HOT_FILTER = (np.inf, np.inf, np.inf, np.inf)
"""The extender with every ``hot_*`` setting off."""
MAX_EXTENDER_PRIORITY = 10
NODE_SCORE_PER_PRIORITY = 10
"""kube-scheduler scales an extender's score by MaxNodeScore (100) / MaxExtenderPriority (10)."""


def hot_nodes(snap: ClusterSnapshot, thresholds=HOT_THRESHOLDS,
              max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> np.ndarray:
    """(N,) True where fresh estimated usage reaches a threshold on some resource."""
    util = estimated_usage(snap, max_usage_age) / snap.capacity
    return ((util >= np.asarray(thresholds)) & usage_is_fresh(snap, max_usage_age)[:, None]).any(axis=1)


def to_extender_scores(raw: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """(N,) int64 scores 0..10: ``raw`` min-max scaled over the allowed nodes and rounded half up (all equal:
    10); nodes not allowed (or with a non-finite raw value) get 0. The one copy of the rule: the extender
    (``extender/decide.py``) serves exactly this, and the simulator's served mode scores with it."""
    raw = np.asarray(raw, dtype=np.float64)
    ok = allowed & np.isfinite(raw)
    out = np.zeros(raw.shape[0], dtype=np.int64)
    if not ok.any():
        return out
    lo, hi = raw[ok].min(), raw[ok].max()
    if hi - lo <= 1e-12 * max(1.0, abs(hi)):
        out[ok] = MAX_EXTENDER_PRIORITY
        return out
    scaled = np.floor(MAX_EXTENDER_PRIORITY * (raw[ok] - lo) / (hi - lo) + 0.5)
    out[ok] = np.clip(scaled, 0, MAX_EXTENDER_PRIORITY).astype(np.int64)
    return out


class Served:
    """``scorer`` as served behind kube-scheduler with extender weight ``weight``: -inf on hot nodes, else
    the default resource score + 10 x weight x the 0..10 extender score."""

    def __init__(self, scorer: Scorer, weight: float, *, thresholds=HOT_THRESHOLDS, strict: bool = False,
                 max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> None:
        if not weight > 0:
            raise ValueError(f"extender weight must be > 0 (kube-scheduler refuses 0 with a prioritize verb), "
                             f"got {weight}")
        self.scorer, self.weight = scorer, weight
        self.name = scorer.name
        self.thresholds, self.strict, self.max_usage_age = thresholds, strict, max_usage_age
        self._k8s = DefaultK8s()
        if hasattr(scorer, "chose"):
            self.chose = scorer.chose

    def score(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        fit = feasible_mask(snap, pod)
        passed = fit & ~hot_nodes(snap, self.thresholds, self.max_usage_age)
        if not self.strict and not passed.any():  # the extender's prefer-cool filter: every fit node is hot
            passed = fit
        ext = to_extender_scores(self.scorer.score(snap, pod), passed)
        total = self._k8s.score(snap, pod) + NODE_SCORE_PER_PRIORITY * self.weight * ext
        return np.where(passed, total, -np.inf)
