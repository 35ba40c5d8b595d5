"""The cluster a pod's candidates are encoded over in names mode: its pool, and any candidate outside it.

Why it exists: kube-scheduler sends the nodes that passed its own filters; encoding those alone would shift the
cluster-relative features (capacity over the mean, the cluster summary), so prioritize, ``/debug/explain`` and
shadow mode encode over a cluster and take the candidates' rows after (``extender.decide.score``'s ``context``).
That cluster is the pod's pool (``kube.pool``: every cached node but those whose taints, a cordon among them, the
pod does not tolerate), as in training, where every simulated node could take the pod. A candidate outside the
pool should not come (kube-scheduler's TaintToleration and NodeUnschedulable filters ran first), but one that does
is encoded with the pool, not refused: the context is then the pool and those candidates, in the view's order.

Cost: the common case -- the candidates inside the pool, which is the same for every pod that tolerates none of
the cluster's taints -- reads the pool's rows gathered once per cache view, so ``extender.row_cache`` keeps them
across requests (``Context.group`` keys its entries: pods of one demand in different pools do not evict each
other). A pod whose tolerations widen the pool takes its own pool, built once per taint change; a candidate
outside the pool takes a snapshot of its own and is encoded from scratch (``group`` None).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import numpy as np

from kube.cache import CacheView
from policy.state import ClusterSnapshot

EVERY_GROUP = "every"
"""``Context.group`` of a context of every cached node (pool keys are tuples)."""


@dataclass(frozen=True, slots=True, eq=False)
class Context:
    """What one pod is encoded over, and where its candidates are in it."""

    snap: ClusterSnapshot
    """the nodes encoded over"""
    rows: np.ndarray
    """(K,) each known candidate's row in ``snap``, in the order given"""
    view_rows: np.ndarray | None
    """(N,) each row of ``snap``'s row in the cache view (None: the view's own rows, every node)"""
    group: Hashable | None
    """the row cache's key for this node set (``kube.pool.Pool.key``, ``EVERY_GROUP`` for every node; None: not to
    be kept, encoded from scratch)"""

    def of_view(self, values: np.ndarray | None) -> np.ndarray | None:
        """A per-node array of the cache view at ``snap``'s rows (None stays None)."""
        return values if values is None or self.view_rows is None else values[self.view_rows]


def context_of(view: CacheView, pod: Mapping, rows: np.ndarray, now: float) -> Context:
    """The context of ``pod`` (a v1.Pod) whose known candidates are the view's ``rows`` (module doc)."""
    pool = view.pool_of(pod)
    if pool.rows is None:
        return Context(snap=view.snapshot(now), rows=rows, view_rows=None, group=EVERY_GROUP)
    at = pool.position[rows]
    if at.size == 0 or at.min() >= 0:
        return Context(snap=view.pool_snapshot(now, pool), rows=at, view_rows=pool.rows, group=pool.key)
    union = np.union1d(pool.rows, rows)  # sorted: the view's order, as the pool's
    return Context(snap=view.snapshot(now, union), rows=np.searchsorted(union, rows), view_rows=union, group=None)
