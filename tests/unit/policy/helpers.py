"""Small builders for hand-written snapshots in policy tests."""

from __future__ import annotations

import numpy as np

from policy.state import ClusterSnapshot


def snapshot(capacity, requested=None, usage=None, *, age=None, assumed=None, pods=None, max_pods=None,
             ready=None) -> ClusterSnapshot:
    cap = np.asarray(capacity, dtype=float)
    n = cap.shape[0]
    return ClusterSnapshot(
        names=tuple(f"n{i}" for i in range(n)),
        capacity=cap,
        requested=np.zeros((n, 2)) if requested is None else requested,
        usage=np.zeros((n, 4)) if usage is None else usage,
        usage_age=np.zeros(n) if age is None else age,
        assumed=np.zeros((n, 4)) if assumed is None else assumed,
        pods=np.zeros(n) if pods is None else pods,
        max_pods=np.full(n, 110) if max_pods is None else max_pods,
        ready=np.ones(n, dtype=bool) if ready is None else ready,
    )
