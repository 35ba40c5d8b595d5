"""drsched's picture of the cluster: nodes, pods, allocations, usage samples and assumed pods.

``ClusterCache`` owns per-node numpy rows (capacity, requested, pod count, usage, sample time, assumed
demand) that watch events, the static loader, usage polls and binds update in place under one lock. A
request takes ONE ``view()``: a frozen ``CacheView`` of the rows, rebuilt only when a row may have changed
since the last one (a pending pod, a status-only update or a node heartbeat keeps it), so the request path
never loops over nodes in Python and never sees a half-applied event.
``CacheView.snapshot(now)`` turns it (or a subset of its rows) into the policy's ``ClusterSnapshot``;
``CacheView.pool_of(pod)`` / ``pool_snapshot`` give the nodes a pod could ever go to (``kube.pool``).

Bookkeeping rules:

* ``requested`` / ``pods`` of a node = sum / count of the requests of its non-terminated pods;
  ``daemon_pods`` = how many of those a DaemonSet owns (the contention model leaves them out of a node's jobs).
* ``assumed`` of a node = the expected demand of its pods bound after its last usage sample (minus a
  grace period, since a sample taken just after a bind has not seen the pod ramp up yet). A newer sample
  clears them. This is the Trimaran / Koordinator correction: without it a burst of pods piles onto the
  node that looked idlest in a sample taken before any of them started.
* Pods may name a node the cache has not seen yet; they are counted when it appears.
* ``usage`` cpu = the sample's cpu + the cores its agent says the node lacks below allocatable
  (``NodeUsage.row``): a node whose CPU was cut is not scored as free.

The cache knows nothing about HTTP or the Kubernetes API. The extender's watch (``extender.kube``) and
static loader feed one for the life of the process; the migration controller fills a fresh one from each
cycle's lists (``migration.snapshot``), so both see the cluster through the same bookkeeping.
"""

from __future__ import annotations

import itertools
import operator
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from kube.objects import NodeInfo, Toleration, is_daemon_pod, pod_key, pod_terminated, pod_tolerations
from kube.pool import EVERY, Pool, PoolIndex
from policy.state import CPU, ClusterSnapshot, PodView

_GROW = 64


@dataclass(frozen=True, slots=True)
class NodeUsage:
    """One usage sample of one node, in policy units; ``timestamp`` is epoch seconds. ``cpu_capacity``: the
    cores the node's agent measured it has (None: not reported)."""

    cpu: float
    mem: float
    net: float
    disk: float
    timestamp: float
    cpu_capacity: float | None = None

    def row(self, allocatable_cpu: float) -> tuple[float, float, float, float]:
        """The sample as a usage row of a node with ``allocatable_cpu`` cores: capacity the agent reports
        missing below that (a CPU quota cut, a noisy neighbour) counts as CPU in use by something else, as
        a neighbour's CPU shows up in a real node's /proc/stat; an agent reporting more (the host's CPUs)
        changes nothing."""
        lost = 0.0 if self.cpu_capacity is None else max(0.0, allocatable_cpu - self.cpu_capacity)
        return self.cpu + lost, self.mem, self.net, self.disk


@dataclass(slots=True)
class PodRecord:
    """What the cache remembers about a pod (bound or pending)."""

    namespace: str
    name: str
    uid: str
    node: str | None
    requests: np.ndarray        # (2,)
    demand: np.ndarray          # (4,)
    demand_source: str = "requests"
    terminated: bool = False
    bound_at: float = 0.0       # epoch seconds the pod was bound (0: before we knew)
    daemon: bool = False        # a DaemonSet owns it (``kube.objects.is_daemon_pod``)
    tolerations: tuple[Toleration, ...] | None = ()  # ``kube.objects.pod_tolerations``; None: not known


def record_for(pod: Mapping, view: PodView, *, bound_at: float = 0.0) -> PodRecord:
    """The record of a v1.Pod whose demand is ``view``; ``bound_at`` counts only when it names a node."""
    ns, name, uid = pod_key(pod)
    node = (pod.get("spec") or {}).get("nodeName") or None
    return PodRecord(namespace=ns, name=name, uid=uid or f"{ns}/{name}", node=node, requests=view.requests,
                     demand=view.demand, demand_source=view.demand_source, terminated=pod_terminated(pod),
                     bound_at=bound_at if node else 0.0, daemon=is_daemon_pod(pod),
                     tolerations=pod_tolerations(pod))


def names_at(names: tuple[str, ...], rows: list[int]) -> tuple[str, ...]:
    """``tuple(names[i] for i in rows)``: one C call where there are several rows (5,000 rows: ~0.3 ms against
    ~1 ms for the generator over numpy integers, on a loaded core)."""
    if len(rows) > 1:
        return operator.itemgetter(*rows)(names)
    return tuple(names[i] for i in rows)  # itemgetter of one row gives the name, not a 1-tuple


@dataclass(frozen=True, slots=True, eq=False)
class CacheView:
    """One consistent copy of the cache's rows. ``usage_ts`` is -inf where a node has no sample."""

    names: tuple[str, ...]
    index: dict[str, int]
    capacity: np.ndarray
    requested: np.ndarray
    pods: np.ndarray
    max_pods: np.ndarray
    ready: np.ndarray
    usage: np.ndarray
    usage_ts: np.ndarray
    assumed: np.ndarray
    version: int
    built_at: float
    daemon_pods: np.ndarray | None = None
    """(N,) how many of each node's ``pods`` a DaemonSet owns (None: a view built without them)"""
    taints: Mapping[str, tuple] = field(default_factory=dict)
    """node -> the taints that keep pods off it (``kube.objects.node_taints``), only nodes that have some; one
    object shared by every view until a node comes or goes or a taint changes"""
    pools: PoolIndex | None = None
    """``taints`` grouped for ``pool_of``, shared as ``taints`` is (None: built on first use, for this view only)"""
    labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """node -> its labels, only nodes that have some; one object shared by every view until a node's labels
    change (so a caller may key a memo on its identity: ``extender.shadow``)"""
    names_memo: NamesMemo = field(default_factory=lambda: NamesMemo(), repr=False)
    """Shared by every view with the same ``names`` and ``index`` (``ClusterCache`` keeps one, and the same
    ``index`` object, until a node comes or goes)."""
    pool_rows: dict = field(default_factory=dict, repr=False)
    """``Pool.key`` -> the pool's rows of this view's arrays, gathered once (``pool_snapshot``)"""
    trusted: bool = False
    """built by ``ClusterCache.view`` (float64 / bool rows of one length by construction) with every capacity > 0:
    its snapshots skip ``ClusterSnapshot``'s validation, which would find nothing (False: a view built elsewhere,
    or holding a node ``ClusterSnapshot`` refuses, whose snapshots validate and raise as they always did)"""

    def pool_of(self, pod: Mapping) -> Pool:
        """The nodes of this view ``pod`` could ever be placed on as far as taints and cordons go (``kube.pool``)."""
        pools = self.pools
        if pools is None:
            if not self.taints:
                return EVERY
            pools = PoolIndex(self.names, self.index, self.taints)
            object.__setattr__(self, "pools", pools)
        return pools.of(pod)

    def pool_snapshot(self, now: float, pool: Pool) -> ClusterSnapshot:
        """``snapshot(now)`` of the nodes of ``pool``, a pool of this view. A pool's rows are gathered once per view,
        so two snapshots of one pool and view share their arrays, as two ``snapshot(now)`` do (what
        ``extender.row_cache`` relies on to see that nothing moved)."""
        if pool.rows is None:
            return self.snapshot(now)
        got = self.pool_rows.get(pool.key)
        if got is None:
            r = pool.rows  # take: a quarter of fancy indexing's time on these narrow rows (1,000 nodes)
            got = tuple(a.take(r, axis=0) for a in (self.capacity, self.requested, self.usage, self.usage_ts,
                                                     self.assumed, self.pods, self.max_pods, self.ready))
            got = self.pool_rows.setdefault(pool.key, got)  # a racing thread's, if first: one set of arrays
        capacity, requested, usage, usage_ts, assumed, pods, max_pods, ready = got
        return self._snapshot(names=pool.names, capacity=capacity, requested=requested, usage=usage,
                              usage_age=np.maximum(now - usage_ts, 0.0), assumed=assumed, pods=pods,
                              max_pods=max_pods, ready=ready, now=now)

    def snapshot(self, now: float, idx: np.ndarray | None = None,
                 names: tuple[str, ...] | None = None) -> ClusterSnapshot:
        """The ClusterSnapshot at time ``now``, of all nodes or of rows ``idx`` (named ``names``)."""
        arrays = (self.capacity, self.requested, self.usage, self.usage_ts, self.assumed, self.pods, self.max_pods,
                  self.ready)
        if idx is None:
            names = self.names
        else:
            rows = np.asarray(idx)
            names = names_at(self.names, rows.tolist()) if names is None else tuple(names)
            arrays = tuple(a.take(rows, axis=0) for a in arrays)  # take: as pool_snapshot gathers, for its speed
        capacity, requested, usage, usage_ts, assumed, pods, max_pods, ready = arrays
        # the caller's names are its own: a list of another length is refused as ever
        return self._snapshot(len(names) == len(ready), names=names, capacity=capacity, requested=requested,
                              usage=usage, usage_age=np.maximum(now - usage_ts, 0.0), assumed=assumed, pods=pods,
                              max_pods=max_pods, ready=ready, now=now)

    def _snapshot(self, names_fit: bool = True, **arrays) -> ClusterSnapshot:
        """``ClusterSnapshot(**arrays)``, unvalidated where this view is ``trusted`` and the names fit: the arrays are
        rows of the cache's own, float64 / bool of the right shapes with capacity > 0 (~6 us a snapshot saved)."""
        return ClusterSnapshot.trusted(**arrays) if self.trusted and names_fit else ClusterSnapshot(**arrays)

    def lookup(self, names: list[str] | tuple[str, ...]) -> np.ndarray:
        """Row index of each name, -1 where the cache does not know the node.

        kube-scheduler sends the same candidate list again and again while the cluster is quiet, so the
        last answer is memoised across views while the node set stays (comparing two lists of names is
        cheaper than hashing each): the same read-only array comes back for an equal list, so a caller may
        key its own per-list memo on the array's identity.
        """
        return self.names_memo.rows(names, self.index)


class NamesMemo:
    """The rows of the last few candidate lists, kept across views while the node set stays.

    Every bind, pod event and usage poll makes a new ``CacheView``; if the last lists' rows lived on the
    view, a busy cluster would look them up again on every request. They depend only on the names and the
    name -> row index, which change only when a node is added or deleted, so ``ClusterCache`` hands the
    same memo to every view until then. (What the extender writes from names -- its reply -- it memoises
    itself, keyed on these rows: ``extender.wire.HostPriorities``.)

    ``KEPT`` lists, not one: kube-scheduler's cycle for one pod asks about two, filter's (every node) and
    prioritize's (the nodes that passed), and with a single list each evicted the other, so both missed on
    every pod (1.2 ms of lookups and the reply's prefixes rebuilt, at 5,000 nodes; issue #26).
    """

    KEPT = 4

    __slots__ = ("_lists",)

    def __init__(self) -> None:
        self._lists: tuple[tuple[list[str], np.ndarray], ...] = ()  # (names, rows), most recent first

    def rows(self, names, index: dict[str, int]) -> np.ndarray:
        lists = self._lists  # one read: another thread may replace it, never change it
        n = len(names)
        for got in lists:
            if len(got[0]) == n and got[0] == names:
                return got[1]
        # map with a bound method and a constant: one C call per name, no generator frame (a third of the time)
        idx = np.fromiter(map(index.get, names, itertools.repeat(-1, n)), dtype=np.int64, count=n)
        idx.flags.writeable = False
        self._lists = ((list(names), idx), *lists[: self.KEPT - 1])
        return idx


def _counts_alike(a: PodRecord, b: PodRecord) -> bool:
    """Whether two records of one pod add the same to their node's row: the fields ``_recount`` reads."""
    return (a.node == b.node and a.terminated == b.terminated and a.bound_at == b.bound_at and a.daemon == b.daemon
            and _same_values(a.requests, b.requests) and _same_values(a.demand, b.demand))


def _same_values(a, b) -> bool:
    return a is b or np.array_equal(a, b)


_MAX_EARLY = 100_000
"""Bound on samples held for nodes not (yet) in the cache, so a provider naming junk cannot grow memory."""


class ClusterCache:
    """Thread-safe node/pod/usage bookkeeping; see the module docstring for the rules."""

    def __init__(self, *, assume_grace_s: float = 5.0, clock: Callable[[], float] = time.time) -> None:
        self._lock = threading.RLock()
        self._clock = clock
        self.assume_grace_s = assume_grace_s
        self._names: list[str] = []
        self._index: dict[str, int] = {}
        self._alloc_rows(_GROW)
        self._pods: dict[str, PodRecord] = {}
        self._by_name: dict[tuple[str, str], str] = {}
        self._node_pods: dict[str, set[str]] = {}
        self._taints: dict[str, tuple] = {}  # node -> its taints that keep pods off, only nodes that have some
        self._labels: dict[str, Mapping[str, str]] = {}  # node -> its labels, only nodes that have some
        self._labels_view: Mapping[str, Mapping[str, str]] | None = None  # views' copy, until a label changes
        self._pools: PoolIndex | None = None  # views' taints, grouped; until a node comes or goes or a taint changes
        self._version = 0
        self._view: CacheView | None = None
        self._names_view: tuple[tuple[str, ...], dict[str, int], NamesMemo] | None = None  # until a node comes or goes
        # Samples for nodes the watch has not listed yet (a usage poll can beat the first node list at
        # start-up); applied when the node arrives, so the first poll is not lost.
        self._early_usage: dict[str, NodeUsage] = {}
        self.last_change = clock()

    # -- storage -------------------------------------------------------------------------------------
    def _alloc_rows(self, rows: int) -> None:
        self._cap = np.ones((rows, 4))
        self._req = np.zeros((rows, 2))
        self._npods = np.zeros(rows)
        self._ndaemon = np.zeros(rows)
        self._maxpods = np.zeros(rows)
        self._ready = np.zeros(rows, dtype=bool)
        self._usage = np.full((rows, 4), np.nan)
        self._usage_ts = np.full(rows, -np.inf)
        self._assumed = np.zeros((rows, 4))

    def _rows(self) -> tuple[np.ndarray, ...]:
        """Every per-node row array, in one order (growing and deleting move them all)."""
        return (self._cap, self._req, self._npods, self._ndaemon, self._maxpods, self._ready, self._usage,
                self._usage_ts, self._assumed)

    def _grow(self) -> None:
        old = self._rows()
        n = len(self._names)
        self._alloc_rows(max(_GROW, 2 * len(old[0])))
        for new, prev in zip(self._rows(), old, strict=True):
            new[:n] = prev[:n]

    def _touch(self, *, rows: bool = True) -> None:
        """Something changed; ``rows``: perhaps a node's row too, so the next ``view()`` is a new copy. A change
        no row reads (a pending pod, a status-only update, a node heartbeat) keeps the view, and with it what
        the request path keeps per view (``extender.row_cache``: no re-encoding, the Q-values reused)."""
        if rows:
            self._version += 1
        self.last_change = self._clock()

    def heard(self) -> None:
        """An event that changes nothing the cache holds (a node heartbeat its watch skipped): only
        ``last_change`` moves, as ``upsert_node`` of an unchanged node moves it."""
        with self._lock:
            self._touch(rows=False)

    # -- nodes ---------------------------------------------------------------------------------------
    def upsert_node(self, info: NodeInfo) -> None:
        with self._lock:
            i = self._index.get(info.name)
            early = None
            if i is not None and self._same_node(i, info):  # a heartbeat: nothing the rows hold changed
                self._touch(rows=False)
                return
            if i is None:
                if len(self._names) == len(self._cap):
                    self._grow()
                i = len(self._names)
                self._names.append(info.name)
                self._index[info.name] = i
                self._names_view = self._pools = None
                self._usage[i] = np.nan
                self._usage_ts[i] = -np.inf
                early = self._early_usage.pop(info.name, None)
            self._cap[i] = info.capacity
            if early is not None:
                self._usage[i] = early.row(float(info.capacity[CPU]))
                self._usage_ts[i] = early.timestamp
            self._maxpods[i] = info.max_pods
            self._ready[i] = info.ready
            if self._taints.get(info.name, ()) != info.taints:
                self._pools = None
                if info.taints:
                    self._taints[info.name] = info.taints
                else:
                    del self._taints[info.name]
            if self._labels.get(info.name, {}) != info.labels:
                self._labels_view = None
                if info.labels:
                    self._labels[info.name] = info.labels
                else:
                    del self._labels[info.name]
            self._recount(info.name)
            self._touch()

    def _same_node(self, i: int, info: NodeInfo) -> bool:
        cap = self._cap[i]
        return (bool(self._ready[i]) == info.ready and float(self._maxpods[i]) == float(info.max_pods)
                and self._taints.get(info.name, ()) == info.taints and self._labels.get(info.name, {}) == info.labels
                and all(float(a) == float(b) for a, b in zip(cap.tolist(), info.capacity, strict=True)))

    def delete_node(self, name: str) -> None:
        with self._lock:
            i = self._index.pop(name, None)
            if i is None:
                return
            self._taints.pop(name, None)
            if self._labels.pop(name, None) is not None:
                self._labels_view = None
            last = len(self._names) - 1
            if i != last:  # move the last row into the hole: O(1), order does not matter
                moved = self._names[last]
                self._names[i] = moved
                self._index[moved] = i
                for arr in self._rows():
                    arr[i] = arr[last]
            self._names.pop()
            self._names_view = self._pools = None
            self._touch()

    def replace_nodes(self, infos: Iterable[NodeInfo]) -> None:
        """Make the node set exactly ``infos`` (after a re-list), keeping usage of nodes that stay."""
        with self._lock:
            infos = list(infos)
            keep = {i.name for i in infos}
            for name in [n for n in self._names if n not in keep]:
                self.delete_node(name)
            for info in infos:
                self.upsert_node(info)

    @property
    def node_names(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._names)

    # -- pods ----------------------------------------------------------------------------------------
    def upsert_pod(self, rec: PodRecord) -> None:
        """Add or update a pod. A pod that just got a node keeps ``rec.bound_at``; a known one keeps its own."""
        with self._lock:
            old = self._pods.get(rec.uid)
            if old is not None and old.node == rec.node and old.bound_at:
                rec.bound_at = old.bound_at
            self._pods[rec.uid] = rec
            self._by_name[(rec.namespace, rec.name)] = rec.uid
            if not ((old is not None and old.node) or rec.node) or (old is not None and _counts_alike(old, rec)):
                self._touch(rows=False)  # pending, or a status-only update: no node's sums move
                return
            if old is not None and old.node and old.node != rec.node:
                self._node_pods.get(old.node, set()).discard(rec.uid)
                self._recount(old.node)
            if rec.node:
                self._node_pods.setdefault(rec.node, set()).add(rec.uid)
                self._recount(rec.node)
            self._touch()

    def delete_pod(self, uid: str) -> None:
        with self._lock:
            rec = self._pods.pop(uid, None)
            if rec is None:
                return
            if self._by_name.get((rec.namespace, rec.name)) == uid:
                del self._by_name[(rec.namespace, rec.name)]
            if rec.node:
                self._node_pods.get(rec.node, set()).discard(uid)
                self._recount(rec.node)
            self._touch(rows=bool(rec.node))

    def replace_pods(self, recs: Iterable[PodRecord]) -> None:
        """Make the pod set exactly ``recs`` (after a re-list)."""
        with self._lock:
            recs = list(recs)
            keep = {r.uid for r in recs}
            for uid in [u for u in self._pods if u not in keep]:
                self.delete_pod(uid)
            for rec in recs:
                self.upsert_pod(rec)

    def pod(self, namespace: str, name: str) -> PodRecord | None:
        with self._lock:
            uid = self._by_name.get((namespace, name))
            return self._pods.get(uid) if uid else None

    def pod_view(self, namespace: str, name: str) -> PodView | None:
        rec = self.pod(namespace, name)
        if rec is None:
            return None
        return PodView(requests=rec.requests, demand=rec.demand, demand_source=rec.demand_source,
                       name=f"{namespace}/{name}")

    @property
    def n_pods(self) -> int:
        with self._lock:
            return len(self._pods)

    def _recount(self, node: str) -> None:
        """Recompute one node's requested / pods / assumed from its pods (O(pods on that node))."""
        i = self._index.get(node)
        if i is None:
            return
        req = np.zeros(2)
        assumed = np.zeros(4)
        count = daemons = 0
        since = self._usage_ts[i] - self.assume_grace_s
        # In uid order: a set's order follows per-process string hashing, and float sums in another order
        # differ in the last bit (a restarted extender could score the same cluster differently).
        for uid in sorted(self._node_pods.get(node, ())):
            rec = self._pods[uid]
            if rec.terminated:
                continue
            req += rec.requests
            count += 1
            daemons += rec.daemon
            if rec.bound_at > since:
                assumed += rec.demand
        self._req[i] = req
        self._npods[i] = count
        self._ndaemon[i] = daemons
        self._assumed[i] = assumed

    # -- usage ---------------------------------------------------------------------------------------
    def apply_usage(self, samples: dict[str, NodeUsage]) -> int:
        """Record usage samples; a sample older than the one held is ignored. Returns how many were applied."""
        applied = 0
        with self._lock:
            for name, s in samples.items():
                i = self._index.get(name)
                if i is None:
                    held = self._early_usage.get(name)
                    if (held is None or s.timestamp >= held.timestamp) and len(self._early_usage) < _MAX_EARLY:
                        self._early_usage[name] = s
                    continue
                if s.timestamp < self._usage_ts[i]:
                    continue
                newer = s.timestamp > self._usage_ts[i]
                self._usage[i] = s.row(float(self._cap[i, CPU]))
                self._usage_ts[i] = s.timestamp
                if newer:
                    self._recount(name)
                applied += 1
            if applied:
                self._touch()
        return applied

    # -- the request path ----------------------------------------------------------------------------
    def view(self) -> CacheView:
        """A consistent copy of every row; cached until the next change."""
        view = self._view
        if view is not None and view.version == self._version:
            return view
        with self._lock:
            n = len(self._names)
            if self._names_view is None:
                self._names_view = (tuple(self._names), dict(self._index), NamesMemo())
            names, index, memo = self._names_view
            if self._labels_view is None:
                self._labels_view = dict(self._labels)
            if self._pools is None:
                self._pools = PoolIndex(names, index, dict(self._taints))
            capacity = self._cap[:n].copy()
            view = CacheView(
                names=names, index=index, names_memo=memo, capacity=capacity, trusted=bool(np.all(capacity > 0)),
                requested=self._req[:n].copy(), pods=self._npods[:n].copy(),
                daemon_pods=self._ndaemon[:n].copy(), max_pods=self._maxpods[:n].copy(),
                ready=self._ready[:n].copy(), usage=self._usage[:n].copy(), usage_ts=self._usage_ts[:n].copy(),
                assumed=self._assumed[:n].copy(), version=self._version, built_at=self._clock(),
                taints=self._pools.taints, pools=self._pools, labels=self._labels_view)
            self._view = view
            return view
