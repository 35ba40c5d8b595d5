"""Filter reasons kept across filter requests: only the failing nodes whose inputs moved are written again.

kube-scheduler's filter names every node, and at 5,000 KWOK nodes a fifth of them fail (hot, or full), so
writing each one's reason (``extender.decide.FilterCodes.reasons``: a few formatted floats per node) was most
of the filter's CPU (1.6 of 2.4 ms, issue #26), while between two pods one bind changes one node. A failing
row's reason is a function of its code, its own row of the snapshot, the freshness of its sample, the pod
and the thresholds (``FilterCodes``), so ``FilterMemo`` keeps, per pod key (the pod's requests and demand,
the thresholds, ``max_usage_age``; the ``MAX_ENTRIES`` most recently used), the last codes, freshness,
snapshot and reasons, and writes again only the rows where any of those differ bitwise
(``extender.row_cache``'s comparison). The checks themselves (the codes) are computed whole on every
request: they are numpy over all rows and cheap, and ``hot_refused`` reads the set of nodes. So the
answer is the one ``extender.decide.filter_reasons`` gives, by construction
(``tests/unit/extender/test_filter_memo.py`` checks it on random event sequences).

State: the entries, under one lock (filter runs on the event loop; the lock is for any other caller).
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from extender.decide import FilterCodes, Thresholds
from extender.row_cache import ROW_INPUTS, rows_differ, same_buffer
from policy.features import usage_is_fresh
from policy.state import ClusterSnapshot, PodView

MAX_ENTRIES = 8
"""Pod keys kept: a key holds one snapshot's arrays and the reasons of its failing nodes."""


@dataclass(eq=False, slots=True)
class _Entry:
    snap: ClusterSnapshot
    code: np.ndarray
    fresh: np.ndarray
    reasons: dict[int, str]


class FilterMemo:
    """``reasons(snap, pod, ...)``: ``extender.decide.filter_reasons``, rows written only where their inputs moved."""

    def __init__(self, *, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._ordered: tuple[dict[int, str], np.ndarray, dict[str, str], list[str]] | None = None
        self.written = 0
        """Reasons written since start: what the tests read."""

    def reasons(self, snap: ClusterSnapshot, pod: PodView, thresholds: Thresholds,
                max_usage_age: float) -> dict[int, str]:
        """Row -> reason for every node of ``snap`` the pod must not go to, in row order."""
        if snap.n_nodes == 0:
            return {}
        codes = FilterCodes.of(snap, pod, thresholds, max_usage_age)
        failing = np.flatnonzero(codes.code)
        key = (pod.requests.tobytes(), pod.demand.tobytes(), thresholds, float(max_usage_age))
        with self._lock:
            entry = self._entries.get(key)
            if not failing.size:  # every node passes (no usage, room everywhere): nothing to keep or compare
                self._entries.pop(key, None)
                return {}
            fresh = usage_is_fresh(snap, max_usage_age)
            moved = None if entry is None else _moved(entry, snap, codes.code, fresh)
            if moved is None:
                reasons = codes.reasons(failing)
                self.written += len(reasons)
            elif not (moved & ((codes.code != 0) | (entry.code != 0))).any():
                reasons = entry.reasons  # the same failing rows, none moved: the same object (``in_order`` keys on it)
            else:
                new = codes.reasons(failing[moved[failing]])
                self.written += len(new)
                old = entry.reasons
                reasons = {i: (new[i] if i in new else old[i]) for i in failing.tolist()}
            self._entries[key] = _Entry(snap=snap, code=codes.code, fresh=fresh, reasons=reasons)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return reasons

    def in_order(self, reasons: dict[int, str], names: list[str], idx: np.ndarray) -> tuple[dict[str, str], list[str]]:
        """(FailedNodes, the names that pass) of a request naming ``names`` (rows ``idx``: every row once), in
        request order. The last answer is kept while ``reasons`` (from ``reasons``) and ``idx`` (from
        ``kube.cache.CacheView.lookup``) are the same objects: between two pods only the bound node moved, and
        it passed before and mostly after too."""
        last = self._ordered  # one read: another thread may replace it, never change it
        if last is not None and last[0] is reasons and last[1] is idx:
            return last[2], last[3]
        position = np.empty(len(idx), dtype=np.int64)
        position[idx] = np.arange(len(idx))
        at = position[np.fromiter(reasons, dtype=np.int64, count=len(reasons))]
        order = np.argsort(at, kind="stable")
        keep = np.ones(len(names), dtype=bool)
        keep[at] = False
        texts = list(reasons.values())
        failed = {names[p]: texts[j] for p, j in zip(at[order].tolist(), order.tolist(), strict=True)}
        passed = list(itertools.compress(names, keep.tolist()))
        self._ordered = (reasons, idx, failed, passed)
        return failed, passed


def _moved(entry: _Entry, snap: ClusterSnapshot, code: np.ndarray, fresh: np.ndarray) -> np.ndarray | None:
    """(N,) True where a row's reason may differ from the entry's; None when no row can be compared (another
    node set)."""
    old = entry.snap
    if old.names is not snap.names and old.names != snap.names:
        return None
    moved = (code != entry.code) | (fresh != entry.fresh)
    for name in ROW_INPUTS:
        a, b = getattr(old, name), getattr(snap, name)
        if not same_buffer(a, b):
            moved |= rows_differ(a, b)
    return moved
