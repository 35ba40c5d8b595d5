"""The one picture of a cluster that every scorer decides on.

A ``ClusterSnapshot`` is what a scheduler can know at one instant: per node, capacity, the sum of pod
*requests* (what kube-scheduler accounts) and the *measured* usage with its age (what a node monitor
reports, possibly stale). A ``PodView`` is what it can know of the incoming pod: its requests and an
*expected demand profile* (learned from observed usage, annotated by a user, or just its requests).

The simulator (``policy.sim``) and the extender's cluster cache both produce these records, so features
(``policy.features``), heuristic scorers (``policy.baselines``) and the DQN (``policy.model``) see the
same thing in training and in serving. Arrays are numpy, one row per node, columns in ``RESOURCES``
order. The records are frozen; callers build a new one instead of mutating.

Units (everywhere in ``policy/``):
    cpu   cores
    mem   GiB
    net   MB/s  (receive + transmit)
    disk  MB/s  (read + write)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

RESOURCES: tuple[str, ...] = ("cpu", "mem", "net", "disk")
"""Resource order of every per-resource column in ``policy/``."""
CPU, MEM, NET, DISK = range(4)
N_RESOURCES = len(RESOURCES)
_INF = float("inf")
DEFAULT_NET_MBPS = 1250.0
"""Network bandwidth of a node that does not say its own (10 Gbit/s): the extender's default for a node
without the ``drsched.io/net-mbps`` annotation, and the lab's real nodes in the simulator."""
DEFAULT_DISK_MBPS = 500.0
"""Disk bandwidth of a node that does not say its own (``drsched.io/disk-mbps``)."""
REQUESTED: tuple[str, ...] = ("cpu", "mem")
"""Resources kube-scheduler accounts by request (the first two of ``RESOURCES``)."""


class SnapshotError(ValueError):
    """A snapshot or pod view was built from inconsistent or impossible values."""


def _as_2d(name: str, value, n: int, cols: int) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (n, cols):
        raise SnapshotError(f"{name} has shape {arr.shape}, expected ({n}, {cols})")
    return arr


@dataclass(frozen=True, slots=True, eq=False)
class RunningProgress:
    """How far along the running pods are, as their progress reports show it (issue #22, deliverable 1).

    One entry per running pod that reports, in any order:
        node: (M,) index of the pod's node in the snapshot's node order.
        time_left: (M,) seconds it is expected to need still at its present rate; NaN where its report is
            missing or unusable (too young, stale, going backwards, absurdly fast).
        duration: (M,) seconds it is expected to take alone (its workload's learned profile); NaN if unknown.

    Pods that do not report have no entry: a node's ``pods`` minus its entries are the pods nothing is known of.
    """

    node: np.ndarray
    time_left: np.ndarray
    duration: np.ndarray

    def __post_init__(self) -> None:
        node = np.asarray(self.node, dtype=np.int64).reshape(-1)
        m = node.shape[0]
        for name in ("time_left", "duration"):
            arr = np.asarray(getattr(self, name), dtype=np.float64).reshape(-1)
            if arr.shape != (m,):
                raise SnapshotError(f"progress {name} has {arr.shape[0]} entries, node has {m}")
            if np.any(arr[np.isfinite(arr)] < 0):
                raise SnapshotError(f"progress {name} must be >= 0 or NaN")
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "node", node)

    @classmethod
    def empty(cls) -> RunningProgress:
        return cls(np.zeros(0, np.int64), np.zeros(0), np.zeros(0))

    def on(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(time_left, duration) of the reporting pods on node ``i``."""
        sel = self.node == i
        return self.time_left[sel], self.duration[sel]

    def subset(self, idx: np.ndarray) -> RunningProgress:
        """The entries of the nodes at ``idx`` (node indices), renumbered to their positions in ``idx``."""
        where = {int(n): k for k, n in enumerate(idx)}
        keep = np.array([int(n) in where for n in self.node], dtype=bool)
        return RunningProgress(np.array([where[int(n)] for n in self.node[keep]], dtype=np.int64),
                               self.time_left[keep], self.duration[keep])


@dataclass(frozen=True, slots=True, eq=False)
class ClusterSnapshot:
    """What a scheduler can know about N nodes at one instant.

    Attributes:
        names: node names, length N.
        capacity: (N, 4) allocatable capacity per resource, in ``RESOURCES`` units. Must be > 0.
        requested: (N, 2) sum of the cpu and memory *requests* of the pods on each node.
        usage: (N, 4) measured usage per resource; NaN where no sample exists.
        usage_age: (N,) seconds since each node's usage was sampled; ``inf`` where none.
        assumed: (N, 4) expected demand of the pods placed on each node *since* its usage was sampled (the
            Trimaran / Koordinator "assumed pods" correction, so a burst does not pile onto one node). The
            producer of the snapshot tracks it; ``policy.features`` adds it to ``usage``.
        pods: (N,) number of pods on each node.
        max_pods: (N,) pod capacity of each node.
        ready: (N,) whether the node accepts pods (Ready, not cordoned).
        now: the snapshot's time, seconds (simulated or wall clock).
        progress: the running pods' progress reports (``RunningProgress``); ``None`` where the producer has
            none (every scorer but ``lookahead-time`` ignores it).
    """

    names: tuple[str, ...]
    capacity: np.ndarray
    requested: np.ndarray
    usage: np.ndarray
    usage_age: np.ndarray
    assumed: np.ndarray
    pods: np.ndarray
    max_pods: np.ndarray
    ready: np.ndarray
    now: float = 0.0
    progress: RunningProgress | None = None

    def __post_init__(self) -> None:
        n = len(self.names)
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "capacity", _as_2d("capacity", self.capacity, n, N_RESOURCES))
        object.__setattr__(self, "requested", _as_2d("requested", self.requested, n, len(REQUESTED)))
        object.__setattr__(self, "usage", _as_2d("usage", self.usage, n, N_RESOURCES))
        object.__setattr__(self, "assumed", _as_2d("assumed", self.assumed, n, N_RESOURCES))
        for name, dtype in (("usage_age", np.float64), ("pods", np.float64), ("max_pods", np.float64),
                            ("ready", bool)):
            arr = np.asarray(getattr(self, name), dtype=dtype)
            if arr.shape != (n,):
                raise SnapshotError(f"{name} has shape {arr.shape}, expected ({n},)")
            object.__setattr__(self, name, arr)
        if self.progress is not None and self.progress.node.size and not (
                0 <= int(self.progress.node.min()) and int(self.progress.node.max()) < n):
            raise SnapshotError(f"progress names a node index outside 0..{n - 1}")
        if n and not np.all(self.capacity > 0):
            bad = int(np.argwhere(~(self.capacity > 0))[0][0])
            raise SnapshotError(f"node {self.names[bad]!r}: capacity must be > 0, got {self.capacity[bad].tolist()}")

    @property
    def n_nodes(self) -> int:
        return len(self.names)

    @classmethod
    def trusted(cls, *, names: tuple[str, ...], capacity: np.ndarray, requested: np.ndarray, usage: np.ndarray,
                usage_age: np.ndarray, assumed: np.ndarray, pods: np.ndarray, max_pods: np.ndarray,
                ready: np.ndarray, now: float = 0.0, progress: RunningProgress | None = None) -> ClusterSnapshot:
        """Build without validation, for producers whose arrays are float64/bool of the right shapes by
        construction (the simulator's hot path: validation costs more than the rest of a decision)."""
        snap = object.__new__(cls)
        for name, value in (("names", names), ("capacity", capacity), ("requested", requested), ("usage", usage),
                            ("usage_age", usage_age), ("assumed", assumed), ("pods", pods),
                            ("max_pods", max_pods), ("ready", ready), ("now", now), ("progress", progress)):
            object.__setattr__(snap, name, value)
        return snap

    @classmethod
    def empty(cls) -> ClusterSnapshot:
        return cls((), np.zeros((0, 4)), np.zeros((0, 2)), np.zeros((0, 4)), np.zeros(0), np.zeros((0, 4)),
                   np.zeros(0), np.zeros(0), np.zeros(0, dtype=bool))

    def subset(self, index) -> ClusterSnapshot:
        """The snapshot restricted to the nodes at ``index`` (an index array or boolean mask), in that order."""
        idx = np.arange(self.n_nodes)[index]
        return ClusterSnapshot(
            names=tuple(self.names[i] for i in idx), capacity=self.capacity[idx], requested=self.requested[idx],
            usage=self.usage[idx], usage_age=self.usage_age[idx], assumed=self.assumed[idx], pods=self.pods[idx],
            max_pods=self.max_pods[idx], ready=self.ready[idx], now=self.now,
            progress=None if self.progress is None else self.progress.subset(idx),
        )


@dataclass(frozen=True, slots=True, eq=False)
class PodView:
    """What a scheduler can know about the incoming pod.

    Attributes:
        requests: (2,) cpu and memory requests.
        demand: (4,) expected demand profile per resource, in ``RESOURCES`` units: what the pod is expected
            to *use* when running alone (learned, annotated, or derived from requests).
        demand_source: where ``demand`` came from: ``annotation``, ``learned``, ``requests`` or ``sim``.
        name: pod name, for logs and explanations.
        expected_duration: seconds the pod is expected to run alone (its workload's learned profile); NaN if
            unknown. Only ``lookahead-time`` reads it so far (issue #22).
        workload: the key of the workload the pod belongs to (``kube.objects.workload_key``: its profile's
            key); None if standalone or unknown. No scorer reads it; the decision log records it, so a fit of
            the contention model from a cluster's outcomes can tell pods of one workload (``policy.calibrate
            log``).
    """

    requests: np.ndarray
    demand: np.ndarray
    demand_source: str = "requests"
    name: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    expected_duration: float = math.nan
    workload: str | None = None

    def __post_init__(self) -> None:
        req = np.asarray(self.requests, dtype=np.float64).reshape(-1)
        dem = np.asarray(self.demand, dtype=np.float64).reshape(-1)
        if req.shape != (2,):
            raise SnapshotError(f"pod {self.name!r}: requests must have 2 values (cpu, mem), got {req.shape[0]}")
        if dem.shape != (N_RESOURCES,):
            raise SnapshotError(f"pod {self.name!r}: demand must have 4 values {RESOURCES}, got {dem.shape[0]}")
        # six values: plain floats check in ~1 us where four numpy reductions took ~15 (a PodView is built
        # several times per scheduled pod on the extender's path); NaN fails the comparison too
        if not all(0.0 <= x < _INF for x in req.tolist() + dem.tolist()):
            raise SnapshotError(f"pod {self.name!r}: requests and demand must be finite and >= 0")
        object.__setattr__(self, "requests", req)
        object.__setattr__(self, "demand", dem)
        d = float(self.expected_duration)
        if not (math.isnan(d) or 0.0 < d < _INF):
            raise SnapshotError(f"pod {self.name!r}: expected_duration must be > 0 and finite, or NaN; got {d}")
        object.__setattr__(self, "expected_duration", d)

    @classmethod
    def from_requests(cls, cpu: float, mem: float, *, name: str = "", workload: str | None = None) -> PodView:
        """A pod whose only information is its requests: expected cpu/mem use = requests, no net or disk."""
        return cls(requests=[cpu, mem], demand=[cpu, mem, 0.0, 0.0], demand_source="requests", name=name,
                   workload=workload)
