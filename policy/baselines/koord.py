"""Koordinator LoadAwareScheduling: a hot-node filter, then weighted least-used on estimated usage.

Source: koordinator ``pkg/scheduler/plugins/loadaware`` and its defaults (``apis/config/v1/defaults.go``).

    B(pod)_r   = request_r * scaling_r        (estimatedScalingFactors: cpu 85 %, memory 70 %)
    P_r        = est_r + B(pod)_r             (est = measured + pods assigned since the sample)
    filter:      refuse the node if est_r / capacity_r >= threshold_r (usageThresholds: cpu 65 %, mem 95 %)
    leastUsed_r = (capacity_r - P_r) * 100 / capacity_r   (0 if P_r >= capacity_r)
    score      = (w_cpu * leastUsed_cpu + w_mem * leastUsed_mem) / (w_cpu + w_mem),  w = 1, 1

Departure: a pod without requests is estimated at 250m / 200 MiB as Koordinator does; limits are not
modelled (our ``PodView`` carries requests only), so the ``limit > request`` branch never applies.
"""

from __future__ import annotations

import numpy as np

from policy.features import DEFAULT_MAX_USAGE_AGE, estimated_usage
from policy.state import CPU, MEM, ClusterSnapshot, PodView

SCALING = np.array([0.85, 0.70])
USAGE_THRESHOLDS = (0.65, 0.95)
"""Koordinator's default usageThresholds (cpu, memory): a node at or above them is hot. The extender's
hot-node filter defaults to the same (``policy.served.HOT_THRESHOLDS``)."""
THRESHOLDS = np.array(USAGE_THRESHOLDS)
WEIGHTS = np.array([1.0, 1.0])
DEFAULT_REQUEST = np.array([0.25, 200 / 1024])


class Koord:
    name = "koord"

    def __init__(self, thresholds: np.ndarray = THRESHOLDS, max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> None:
        self.thresholds = np.asarray(thresholds, dtype=float)
        self.max_usage_age = max_usage_age

    def score(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        cap = snap.capacity[:, [CPU, MEM]]
        est = estimated_usage(snap, self.max_usage_age)[:, [CPU, MEM]]
        req = np.where(pod.requests > 0, pod.requests, DEFAULT_REQUEST)
        p = est + req * SCALING
        least = np.where(p >= cap, 0.0, (cap - p) * 100 / cap)
        score = least @ WEIGHTS / WEIGHTS.sum()
        hot = np.any(est / cap >= self.thresholds, axis=1)
        return np.where(hot, -np.inf, score)
