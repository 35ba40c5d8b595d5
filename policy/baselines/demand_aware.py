"""drsched's strongest hand-written rule: place the pod where the busiest resource stays least busy.

It reads exactly what the DQN reads: estimated usage of every resource (measured + assumed, requests when
stale) and the pod's expected demand profile.

    after_r = (est_r + demand_r) / capacity_r        for r in cpu, mem, net, disk
    score   = -max_r after_r  - 1e-3 * mean_r after_r

The small mean term breaks ties between nodes whose bottleneck is equal (e.g. all idle) toward the one
left with the most total headroom. Since a job's speed under contention is set by its most-starved
resource (``policy.sim.contention``), minimising the post-placement peak is the natural greedy rule; it
ignores what the pod does to the jobs already there and the pods still to come, which is where a learned
policy can do better.
"""

from __future__ import annotations

import numpy as np

from policy.features import DEFAULT_MAX_USAGE_AGE, estimated_usage
from policy.state import ClusterSnapshot, PodView

TIE_WEIGHT = 1e-3


class DemandAware:
    name = "demand-aware"

    def __init__(self, max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> None:
        self.max_usage_age = max_usage_age

    def score(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        after = (estimated_usage(snap, self.max_usage_age) + pod.demand) / snap.capacity
        return -after.max(axis=1) - TIE_WEIGHT * after.mean(axis=1)
