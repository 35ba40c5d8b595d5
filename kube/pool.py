"""A pod's pool: the nodes it could ever be placed on as far as taints and cordons go. Pure, no I/O.

Why it exists: the extender encodes a pod's candidates over a whole cluster (``extender.context``), so that the
cluster-relative features (capacity over the mean capacity, the pod's demand over it, the cluster summary's size and
feasible fraction) mean what they meant in training, where every simulated node could take the pod. The cached
cluster also holds nodes the pod can never go to -- the lab's tainted control-plane node, whose 1250 MB/s link
against the workers' 60-500 made every pod's net demand look small, and cordoned nodes -- and those would move the
features of every other node. A node is in a pod's pool unless it carries a taint that keeps pods off
(``kube.objects.KEEP_OFF_EFFECTS``; a cordon is ``UNSCHEDULABLE_TAINT``) the pod does not tolerate
(``kube.objects.tolerates``). Readiness, room and labels do not matter here: they are the filter's and the
features' business, as in training.

Cost: ``PoolIndex`` groups the tainted nodes of one node list by their taint sets once, and a pod's pool is then
one ``tolerates`` per distinct taint set (a pod with no tolerations: none). Every pod that tolerates none of the
sets shares one ``Pool`` (the common pool, key ``()``); a pod that tolerates every set gets ``EVERY`` (the whole
node list). Pools are remembered by the sets tolerated (``POOLS_MEMO`` of them).

State: an index describes the names, rows and taints it was built with and is never updated (``ClusterCache``
builds a new one when a node comes or goes or a taint changes); its memo of pools only grows, to its bound.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kube.objects import Taint, child_list, child_map, tolerates

POOLS_MEMO = 64
"""Distinct pools (sets of tolerated taint sets) an index remembers; others are built per call."""


@dataclass(frozen=True, slots=True, eq=False)
class Pool:
    """The nodes of one node list a pod could ever be placed on."""

    key: tuple[tuple[Taint, ...], ...] | None
    """the node list's taint sets the pod tolerates, in the index's order (``()``: none, the common pool; None:
    every node, ``EVERY``)"""
    rows: np.ndarray | None = None
    """(P,) the pool's rows in the node list, ascending, read-only (None: every row)"""
    position: np.ndarray | None = None
    """(N,) each node list row's row in the pool, -1 outside it (None: every row, in place)"""
    names: tuple[str, ...] | None = None
    """the pool's node names, in ``rows``' order (None: the node list's)"""


EVERY = Pool(key=None)
"""The pool of a pod that no node's taints keep off: every node of the list."""


class PoolIndex:
    """The tainted nodes of one node list grouped by their taint sets, and the pool of a pod (module doc)."""

    def __init__(self, names: Sequence[str], index: Mapping[str, int], taints: Mapping[str, tuple[Taint, ...]]):
        self.names, self.taints = names, taints
        rows: dict[tuple[Taint, ...], list[int]] = {}
        for name, node_taints in taints.items():
            if node_taints:
                rows.setdefault(tuple(node_taints), []).append(index[name])
        self._groups = [(t, np.array(sorted(r), dtype=np.int64)) for t, r in rows.items()]
        self._pools: dict[tuple, Pool] = {}

    def of(self, pod: Mapping) -> Pool:
        """The pool of ``pod`` (a v1.Pod; its ``spec.tolerations``)."""
        if not self._groups:
            return EVERY
        if not child_list(child_map(pod, "spec"), "tolerations"):
            key: tuple = ()
        else:
            key = tuple(t for t, _ in self._groups if tolerates(pod, t))
            if len(key) == len(self._groups):
                return EVERY
        pool = self._pools.get(key)
        if pool is None:
            pool = self._build(key)
            if len(self._pools) < POOLS_MEMO:
                pool = self._pools.setdefault(key, pool)  # a racing thread's, if first: one object per pool
        return pool

    def _build(self, key: tuple) -> Pool:
        n = len(self.names)
        keep = np.ones(n, dtype=bool)
        tolerated = set(key)
        for taints, rows in self._groups:
            if taints not in tolerated:
                keep[rows] = False
        rows = np.flatnonzero(keep)
        position = np.full(n, -1, dtype=np.int64)
        position[rows] = np.arange(rows.size)
        rows.flags.writeable = position.flags.writeable = False
        return Pool(key=key, rows=rows, position=position, names=tuple(self.names[i] for i in rows.tolist()))
