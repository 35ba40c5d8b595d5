"""Encoded node rows kept across prioritize requests: only the nodes whose inputs changed are re-encoded.

A node's row (``policy.features.node_rows``) depends on its own capacity, requested, pods, max pods,
readiness, usage sample and assumed demand; on whether that sample is fresh (staleness crossing
``max_usage_age``); on the cluster's mean capacity; on the pod's demand and requests; and, through the
``usage_age`` column alone, on the request's clock. ``RowCache`` keeps, per pod key (the pod's demand and
requests, ``max_usage_age``, and the caller's ``group``: which node set it encodes over, ``extender.context``; the
``max_entries`` most recently used), the rows of every node of that set, their feasibility, and the snapshot they
were encoded from. A request re-encodes, through the one encoder,

* every row, when the node set changed (a node came or went: the cache hands out a new names tuple then)
  or the mean capacity did (a node's capacity changed), and in clusters under ``PARTIAL_MIN_NODES`` on
  any new cache view;
* the rows whose inputs differ bitwise from the last snapshot's (a bind, a pod event, an assumed pod, a
  usage sample; arrays of the same cache view are known equal without a look), or whose freshness flipped;

then writes the ``usage_age`` column at this request's clock, computes the pod row, and the cluster
summary once some row changed (it reads est_util and the mask, which the clock does not move): what
``policy.features.assemble`` makes. ``node_rows`` is elementwise over nodes, so the result is bitwise what
``policy.features.encode`` gives on the whole snapshot (``tests/unit/extender/test_row_cache.py`` checks
it on random event sequences).

Raw values are not kept per row. A node's Q-value depends on its row, the pod row and the cluster summary
(mean and std of the feasible nodes' estimated usage, feasible fraction, size), all three in the first
layer, so every bind (which moves the summary) and every tick of the clock (which moves ``usage_age`` of
every node with a sample) changes every node's Q-value; and OpenBLAS gives a row of a matrix product other
last bits when the batch has another row count or the row another position in it (150 of 150 random
subsets of a 5,000-row first layer differed, by up to 3e-7 relative). Exact decisions therefore cost the
whole batched Q-network whenever any input bit moved: the model's raw values are reused only when the
Encoded is bitwise the last one for that pod key and the model is the same object; a heuristic scores the
snapshot each time.

State: the entries, under one lock (prioritize runs on the event loop; the lock is for any other caller).
Arrays handed out are never written afterwards (rows and mask are copied before the next change).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from extender.decide import ServedPolicy, whole
from policy.features import (
    USAGE_AGE,
    Encoded,
    cluster_row,
    feasible_mask,
    mean_capacity,
    node_rows,
    pod_row,
    usage_age_column,
    usage_is_fresh,
)
from policy.state import ClusterSnapshot, PodView

MAX_ENTRIES = 8
"""Pod keys kept: a key holds the rows of every node (~0.5 MiB at 5,000 nodes)."""
PARTIAL_MIN_NODES = 2000
"""Below this many nodes a new cache view (a bind, a pod event, a usage poll) re-encodes every row: finding
the changed rows and encoding them apart cost more than one pass over all (in-process, a bind before each
request: 0.21 vs 0.14 ms at 100 nodes, 0.72 vs 0.68 at 1,000; 2.34 vs 2.49 at 5,000)."""
_PARTIAL_SHARE = 8
"""Rows are re-encoded one by one while at most 1/8 of them changed: encoding a row subset costs a fixed
~30 numpy calls plus a little per row, one pass over every row ~0.1 us per row more (5,000 nodes)."""
ROW_INPUTS = ("capacity", "requested", "pods", "max_pods", "ready", "usage", "assumed")


@dataclass(eq=False, slots=True)
class _Entry:
    snap: ClusterSnapshot   # what the rows were last brought up to date with
    fresh: np.ndarray       # (N,) freshness the rows were encoded with
    mean_cap: np.ndarray    # (4,)
    rows: np.ndarray        # (N, N_NODE) float32
    mask: np.ndarray        # (N,) bool
    lent: bool = False      # rows / mask were handed out: copy before writing
    cluster: np.ndarray | None = None  # the summary of rows and mask (None: to compute)
    policy: ServedPolicy | None = None  # the policy whose raw values these are (None: none kept)
    enc: Encoded | None = None
    raw: np.ndarray | None = None


class RowCache:
    """``whole(snap, pod, policy)``: what ``extender.decide.whole`` computes from scratch, kept up to date."""

    def __init__(self, *, max_entries: int = MAX_ENTRIES, partial_min_nodes: int = PARTIAL_MIN_NODES) -> None:
        self.max_entries = max_entries
        self.partial_min_nodes = partial_min_nodes
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.reencoded = 0
        """Rows encoded since start (a whole encode counts every row): what the tests and the bench read."""

    def whole(self, snap: ClusterSnapshot, pod: PodView, policy: ServedPolicy, *, max_usage_age: float,
              group: Hashable = None) -> tuple[Encoded, np.ndarray, np.ndarray]:
        """(Encoded of every node of ``snap``, raw values, fresh) for ``pod``: bitwise the from-scratch answer.
        ``group`` names the node set ``snap`` is of (``extender.context.Context.group``), so that requests over
        two sets keep an entry each."""
        if snap.n_nodes == 0:
            return whole(snap, pod, policy, max_usage_age=max_usage_age)
        key = (pod.demand.tobytes(), pod.requests.tobytes(), float(max_usage_age), group)
        with self._lock:
            fresh = usage_is_fresh(snap, max_usage_age)
            entry = self._entries.get(key)
            same = None if entry is None else self._update(entry, snap, pod, fresh, max_usage_age)
            aged = same is None  # rows encoded whole carry this clock's usage_age already
            if same is None:
                entry = self._encode_all(snap, pod, fresh, max_usage_age)
                self._entries[key] = entry
                same = False
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
            if not same:
                entry.cluster = None
            age = None if aged else usage_age_column(snap.usage_age, max_usage_age).astype(np.float32)
            if age is not None and not np.array_equal(age, entry.rows[:, USAGE_AGE]):
                self._writable(entry)
                entry.rows[:, USAGE_AGE] = age
                same = False
            if entry.cluster is None:  # the summary reads est_util and the mask, which the clock does not move
                entry.cluster = cluster_row(entry.rows, entry.mask)
            # what policy.features.assemble makes, with the summary kept while no row changed
            enc = Encoded(nodes=entry.rows, pod=pod_row(pod, entry.mean_cap), cluster=entry.cluster, mask=entry.mask,
                          mean_cap=entry.mean_cap)
            entry.lent = True
            last = entry.enc
            if (same and entry.policy is policy and last is not None and last.pod.tobytes() == enc.pod.tobytes()
                    and last.cluster.tobytes() == enc.cluster.tobytes()):
                return last, entry.raw, fresh
            raw = policy.raw(snap, pod, enc)
            keep = policy.from_features  # only the model's raw values follow the features alone
            entry.policy, entry.enc, entry.raw = (policy, enc, raw) if keep else (None, None, None)
            return enc, raw, fresh

    # -- keeping an entry up to date ----------------------------------------------------------------
    def _encode_all(self, snap: ClusterSnapshot, pod: PodView, fresh: np.ndarray, max_usage_age: float) -> _Entry:
        mean_cap = mean_capacity(snap)
        self.reencoded += snap.n_nodes
        return _Entry(snap=snap, fresh=fresh, mean_cap=mean_cap, mask=feasible_mask(snap, pod),
                      rows=node_rows(snap, pod, mean_cap=mean_cap, max_usage_age=max_usage_age))

    def _update(self, entry: _Entry, snap: ClusterSnapshot, pod: PodView, fresh: np.ndarray,
                max_usage_age: float) -> bool | None:
        """Bring ``entry`` up to ``snap``: True if no row changed, False if some did, None if all must be
        encoded again (another node set, another mean capacity)."""
        old = entry.snap
        if old.names is not snap.names and old.names != snap.names:
            return None
        moved = [name for name in ROW_INPUTS if not same_buffer(getattr(old, name), getattr(snap, name))]
        if moved and snap.n_nodes < self.partial_min_nodes:
            return None
        changed = fresh != entry.fresh
        cap_changed = False
        for name in moved:
            diff = rows_differ(getattr(old, name), getattr(snap, name))
            if name == "capacity" and diff.any():
                cap_changed = True
            changed |= diff
        if cap_changed:
            mean_cap = mean_capacity(snap)
            if mean_cap.tobytes() != entry.mean_cap.tobytes():
                return None
        entry.snap, entry.fresh = snap, fresh
        idx = np.flatnonzero(changed)
        if idx.size == 0:
            return True
        if idx.size > snap.n_nodes // _PARTIAL_SHARE:  # a re-list, a usage poll: one pass over all is cheaper
            entry.rows = node_rows(snap, pod, mean_cap=entry.mean_cap, max_usage_age=max_usage_age)
            entry.mask, entry.lent = feasible_mask(snap, pod), False
            self.reencoded += snap.n_nodes
            return False
        self._writable(entry)
        sub = ClusterSnapshot.trusted(
            names=tuple(snap.names[i] for i in idx.tolist()), capacity=snap.capacity[idx],
            requested=snap.requested[idx], usage=snap.usage[idx], usage_age=snap.usage_age[idx],
            assumed=snap.assumed[idx], pods=snap.pods[idx], max_pods=snap.max_pods[idx], ready=snap.ready[idx],
            now=snap.now)
        entry.rows[idx] = node_rows(sub, pod, mean_cap=entry.mean_cap, max_usage_age=max_usage_age)
        entry.mask[idx] = feasible_mask(sub, pod)
        self.reencoded += idx.size
        return False

    @staticmethod
    def _writable(entry: _Entry) -> None:
        if entry.lent:
            entry.rows, entry.mask, entry.lent = entry.rows.copy(), entry.mask.copy(), False


def same_buffer(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` are the same bytes of one array (two snapshots of one cache view): the cache
    never writes a view's arrays, and the entry holds ``a``, so its buffer cannot be reused meanwhile."""
    if a is b:
        return True
    base = a.base if a.base is not None else a
    return (base is (b.base if b.base is not None else b) and a.shape == b.shape and a.strides == b.strides
            and a.ctypes.data == b.ctypes.data)


def rows_differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N,) True where a row of ``a`` differs from ``b``'s in any bit (NaN equals the same NaN)."""
    if a.shape != b.shape:
        return np.ones(b.shape[0], dtype=bool)
    if a.dtype == bool:
        return a != b
    ne = np.ascontiguousarray(a).view(np.int64) != np.ascontiguousarray(b).view(np.int64)
    if ne.ndim == 1:
        return ne
    # a row's 2 or 4 flags read as one integer: one comparison per row instead of any(axis=1) on a narrow axis
    return ne.view(_ROW_FLAGS[ne.shape[1]]).reshape(-1) != 0


_ROW_FLAGS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
