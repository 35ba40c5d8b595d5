"""Trimaran's load-aware scorers: TargetLoadPacking (tlp) and LoadVariationRiskBalancing (lvrb).

Source: kubernetes-sigs/scheduler-plugins ``pkg/trimaran/targetloadpacking`` and
``pkg/trimaran/loadvariationriskbalancing`` (KEP 61). Both read *measured* usage plus the assumed usage of
pods bound since the sample (``policy.features.estimated_usage``).

TargetLoadPacking, cpu only, target X = 40:
    predicted(pod) = cpu request * 1.5 (defaultRequestsMultiplier), or 1 core without a request
    U = 100 * (est_cpu + predicted(pod)) / capacity_cpu
    U <= X:        score = (100 - X) * U / X + X
    X < U <= 100:  score = X * (100 - U) / (100 - X)
    U > 100:       score = 0

LoadVariationRiskBalancing, cpu and memory, margin 1, sensitivity 1:
    mu_r    = (est_r + request_r) / capacity_r
    sigma_r = stdev_r / capacity_r;  sigma'_r = margin * sigma_r ** (1 / sensitivity)
    risk_r  = (mu_r + sigma'_r) / 2
    score   = 100 * (1 - max(risk_cpu, risk_mem))
Departure: our snapshots carry no usage standard deviation yet, so sigma = 0 (documented in the README);
the ordering then follows the mean load alone. Risk is clipped to [0, 1] as the plugin does.
"""

from __future__ import annotations

import numpy as np

from policy.features import DEFAULT_MAX_USAGE_AGE, estimated_usage
from policy.state import CPU, MEM, ClusterSnapshot, PodView

TARGET = 40.0
REQUEST_MULTIPLIER = 1.5
DEFAULT_CPU = 1.0
MARGIN = 1.0
SENSITIVITY = 1.0


class TargetLoadPacking:
    name = "tlp"

    def __init__(self, target: float = TARGET, max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> None:
        self.target = target
        self.max_usage_age = max_usage_age

    def score(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        predicted = pod.requests[CPU] * REQUEST_MULTIPLIER if pod.requests[CPU] > 0 else DEFAULT_CPU
        u = 100.0 * (estimated_usage(snap, self.max_usage_age)[:, CPU] + predicted) / snap.capacity[:, CPU]
        x = self.target
        return np.where(u <= x, (100 - x) * u / x + x, np.where(u <= 100, x * (100 - u) / (100 - x), 0.0))


class LoadVariationRiskBalancing:
    name = "lvrb"

    def __init__(self, max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> None:
        self.max_usage_age = max_usage_age

    def score(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        est = estimated_usage(snap, self.max_usage_age)
        risks = []
        for r in (CPU, MEM):
            mu = (est[:, r] + pod.requests[r]) / snap.capacity[:, r]
            sigma = MARGIN * 0.0 ** (1 / SENSITIVITY)
            risks.append(np.clip((mu + sigma) / 2, 0.0, 1.0))
        return 100.0 * (1.0 - np.maximum(*risks))
