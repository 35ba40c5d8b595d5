"""The lab's positive control: a deliberately bad rule that packs each pod onto the busiest, smallest node.

Why it exists: an experiment that cannot tell a bad policy from the default scheduler cannot tell a good one
either (issue #21: "the positive control detected"). This is ``demand-aware`` turned upside down: it reads
the same estimated usage and demand profile and places the pod where the busiest resource ends up *most*
busy, ties toward the node with the least capacity.

    after_r = (est_r + demand_r) / capacity_r        for r in cpu, mem, net, disk
    score   = max_r after_r  + 1e-3 * mean_r after_r  - 1e-6 * capacity_cpu

Feasibility by requests stays kube-scheduler's (and the caller's ``pick``), so the rule overloads nodes
without ever leaving a pod pending. Never serve it outside an experiment.
"""

from __future__ import annotations

import numpy as np

from policy.features import DEFAULT_MAX_USAGE_AGE, estimated_usage
from policy.state import ClusterSnapshot, PodView

TIE_WEIGHT = 1e-3
SIZE_WEIGHT = 1e-6
"""Per core of capacity: among nodes equally loaded after placement (all idle), the smallest wins."""


class WorstFit:
    name = "worst-fit"

    def __init__(self, max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> None:
        self.max_usage_age = max_usage_age

    def score(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        after = (estimated_usage(snap, self.max_usage_age) + pod.demand) / snap.capacity
        return after.max(axis=1) + TIE_WEIGHT * after.mean(axis=1) - SIZE_WEIGHT * snap.capacity[:, 0]
