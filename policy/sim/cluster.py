"""Node types and cluster specs: what machines an episode runs on.

Why it exists: the scheduler must learn on heterogeneous clusters, so a cluster is described by a short
spec string and drawn per episode. The module owns the node-type presets (immutable) and nothing else; the
engine keeps the mutable per-node state.

Node types (capacity = allocatable, in ``policy.state`` units: cores, GiB, MB/s, MB/s):

==========  =====  =======  ==========  ===========  ========
name        cpu    mem GiB  net MB/s    disk MB/s    max pods
==========  =====  =======  ==========  ===========  ========
standard    4      16       125 (1GbE)  200 (SSD)    110
compute     16     32       125         200          110
netfast     8      32       1250 (10GbE) 400         110
small       2      8        125         100          32
tiny        0.5    2        125         100          16
==========  =====  =======  ==========  ===========  ========

``tiny`` is smaller than most jobs (a DRS cpu job wants 4x its cpu); no shipped training draw or split uses
it, so a recipe can add nodes smaller than a job to training (``"mixed:2-8,tiny:1-4"``).

The ``rn-*`` types are the lab's four real kubelet nodes (``policy.labworld.REAL_NODES``: cgroup cpu quota
and memory limit = allocatable) for the evaluation-only ``lab`` family set (``policy.splits``); no training
draw uses them. Their net and disk are what the extender assumes for nodes without capacity annotations
(``policy.state.DEFAULT_NET_MBPS`` / ``DEFAULT_DISK_MBPS``), which the real nodes carry none of; the lab's
net jobs stream to a sink in their own pod, so the nodes' shaped links never limit them. Their max pods is
the kubelet's default, 110. They range from ``rn-small`` (0.25 core, 0.75 GiB) to ``rn-large`` (1 core, 2 GiB).

The ``mr-*`` types are the same four nodes in the lab's ``multi-resource`` world
(``policy.labworld.WORLDS["multi-resource"].nodes``: ``mr-small``, ``mr-medium``, ``mr-medium-mem``,
``mr-large``, each ``mr-`` + the node's ``node_type``), for the ``lab-mr-*`` families. That world's net jobs
pull their data through their own node's shaped link, so a node's net capacity is its link,
``net_mbit / 8`` MB/s (the slowest on the node with the most CPU). Policies see that capacity in every
snapshot, as the extender does only when a node carries its ``drsched.io/net-mbps`` annotation (without
one it assumes ``DEFAULT_NET_MBPS``). Disk stays the default: the lab's io jobs share one host disk
whatever their node, so no placement changes their speed.

The same four nodes in the lab's own frame, for the ``lab-mr-*-isolated`` and ``lab-mr-*-daemons`` families: host
isolation scales the real nodes' cpu by ``policy.labworld.ISOLATED_SCALE`` (250/500/500/1000 m to 100/200/200/400 m;
memory and links as they are), ``mr-iso-*``; ``mr-lab-*`` are those nodes as the lab's kube-scheduler sees them,
each already holding the node-monitor DaemonSet pod's requests (``policy.labworld.MONITOR_POD_REQUESTS``, 20 m and
48 Mi, one pod: a fifth of rn-small's cpu). A node type's ``reserved`` requests and ``daemon_pods`` are
already-requested capacity (``policy.sim.fleet``): in every snapshot's ``requested`` and ``pods`` and in the
filter, never in the contention set (under isolation the DaemonSet's processes run on the system CPUs). Every
other node type reserves nothing, so the ``mr-*`` and ``rn-*`` types, and what was run on them, are unchanged.

Cluster spec grammar (``parse_cluster``):
    ``"standard:4"``                one type, 4 nodes
    ``"standard:2,netfast:2"``      explicit composition, in that order
    ``"mixed:16"``                  16 nodes in the ``MIXED_WEIGHTS`` proportions (largest remainder), order
                                    shuffled by the episode's generator
    ``"standard:4-8"``, ``"mixed:8-32"``  a size drawn uniformly per episode (inclusive)

``scaled_cluster`` grows a fixed spec to another size in the same proportions (``"mixed:12"`` to
``"mixed:1000"``, ``"small:12,standard:8"`` to ``"small:600,standard:400"``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from policy.labworld import ISOLATED_SCALE, MONITOR_POD_REQUESTS, REAL_NODES, WORLDS, RealNodeShape
from policy.sim.errors import ConfigError, UnknownClassError
from policy.state import DEFAULT_DISK_MBPS, DEFAULT_NET_MBPS


@dataclass(frozen=True, slots=True)
class NodeType:
    """One machine shape. ``capacity`` is (cpu, mem, net, disk) allocatable; ``reserved`` (cpu, mem) is requested
    by ``daemon_pods`` pods that are always there, outside any scheduler (module doc)."""

    name: str
    capacity: tuple[float, float, float, float]
    max_pods: int
    reserved: tuple[float, float] = (0.0, 0.0)
    daemon_pods: int = 0

    def __post_init__(self) -> None:
        if len(self.capacity) != 4 or not all(c > 0 for c in self.capacity):
            raise ConfigError("capacity",
                              f"node type {self.name!r}: capacities must be 4 values > 0, got {self.capacity}")
        if self.max_pods < 1:
            raise ConfigError("max_pods", f"node type {self.name!r}: max_pods must be >= 1, got {self.max_pods}")
        cpu, mem = self.capacity[:2]
        if not (len(self.reserved) == 2 and 0 <= self.reserved[0] <= cpu and 0 <= self.reserved[1] <= mem
                and 0 <= self.daemon_pods < self.max_pods):
            raise ConfigError("reserved", f"node type {self.name!r}: reserved {self.reserved} must lie within its cpu "
                                          f"and memory, and {self.daemon_pods} daemon pods below max_pods")


MULTI_PREFIX = "mr"
"""Prefix of the ``multi-resource`` world's node types (module doc)."""
KUBELET_MAX_PODS = 110


def _linked(shape: RealNodeShape, prefix: str = MULTI_PREFIX, *, scale: float = 1.0, daemons: bool = False) -> NodeType:
    """A multi-resource world's node: its quota (x ``scale``), memory and link; with ``daemons``, the monitor
    DaemonSet pod's requests already on it (module doc)."""
    cpu_m, mem_mi = MONITOR_POD_REQUESTS
    return NodeType(f"{prefix}-{shape.node_type}", (shape.cpu_millis * scale / 1000, shape.memory_mib / 1024,
                                                    shape.net_mbit / 8, DEFAULT_DISK_MBPS), KUBELET_MAX_PODS,
                    reserved=(cpu_m / 1000, mem_mi / 1024) if daemons else (0.0, 0.0), daemon_pods=int(daemons))


MULTI_TYPES = tuple(_linked(s) for s in WORLDS["multi-resource"].nodes)
ISOLATED_PREFIX, LAB_PREFIX = "mr-iso", "mr-lab"
"""Prefixes of the multi-resource world's node types in the lab's isolated frame, without and with the DaemonSet."""
MULTI_ISOLATED_TYPES = tuple(_linked(s, ISOLATED_PREFIX, scale=ISOLATED_SCALE) for s in WORLDS["multi-resource"].nodes)
MULTI_LAB_TYPES = tuple(_linked(s, LAB_PREFIX, scale=ISOLATED_SCALE, daemons=True)
                        for s in WORLDS["multi-resource"].nodes)
NODE_TYPES: dict[str, NodeType] = {
    t.name: t
    for t in (
        NodeType("standard", (4.0, 16.0, 125.0, 200.0), 110),
        NodeType("compute", (16.0, 32.0, 125.0, 200.0), 110),
        NodeType("netfast", (8.0, 32.0, 1250.0, 400.0), 110),
        NodeType("small", (2.0, 8.0, 125.0, 100.0), 32),
        NodeType("tiny", (0.5, 2.0, 125.0, 100.0), 16),
        *(NodeType(s.name, (s.cpu_millis / 1000, s.memory_mib / 1024, DEFAULT_NET_MBPS, DEFAULT_DISK_MBPS),
                   KUBELET_MAX_PODS) for s in REAL_NODES),
        *MULTI_TYPES,
        *MULTI_ISOLATED_TYPES,
        *MULTI_LAB_TYPES,
    )
}
LAB_CLUSTER = ",".join(f"{s.name}:1" for s in REAL_NODES)
"""The lab's four real nodes, in ``policy.labworld.REAL_NODES``' order."""
MULTI_CLUSTER = ",".join(f"{t.name}:1" for t in MULTI_TYPES)
"""The multi-resource world's four nodes, in its ``nodes``' order."""
MULTI_ISOLATED_CLUSTER = ",".join(f"{t.name}:1" for t in MULTI_ISOLATED_TYPES)
"""The same four nodes scaled as host isolation scales them."""
MULTI_LAB_CLUSTER = ",".join(f"{t.name}:1" for t in MULTI_LAB_TYPES)
"""The same four nodes as the lab ran them: scaled, each with the monitor DaemonSet pod's requests."""
MIXED_WEIGHTS: dict[str, float] = {"standard": 0.4, "compute": 0.2, "netfast": 0.2, "small": 0.2}


@dataclass(frozen=True, slots=True)
class Nodes:
    """The machines of one episode: names, (N, 4) capacity, (N,) max pods, their type names, and (N, 2) cpu and
    memory already requested by (N,) daemon pods on each (``NodeType.reserved``; None: nothing)."""

    names: tuple[str, ...]
    types: tuple[str, ...]
    capacity: np.ndarray
    max_pods: np.ndarray
    reserved: np.ndarray | None = None
    daemon_pods: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.names)


def _size(text: str, spec: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    try:
        lo_n, hi_n = int(lo), int(hi or lo)
    except ValueError:
        raise ConfigError("cluster", f"{spec!r}: node count {text!r} is not an integer or range") from None
    if lo_n < 1 or hi_n < lo_n:
        raise ConfigError("cluster", f"{spec!r}: node count {text!r} must be >= 1 and low <= high")
    return lo_n, hi_n


def apportion(shares: dict[str, float], n: int) -> dict[str, int]:
    """``n`` nodes split in ``shares`` (fractions summing to 1) by largest remainder, in ``shares``' order."""
    quotas = {k: w * n for k, w in shares.items()}
    counts = {k: int(q) for k, q in quotas.items()}
    for k in sorted(quotas, key=lambda k: counts[k] - quotas[k])[: n - sum(counts.values())]:
        counts[k] += 1
    return counts


def _mixed(n: int) -> list[str]:
    counts = apportion(MIXED_WEIGHTS, n)
    return [k for k in MIXED_WEIGHTS for _ in range(counts[k])]


def scaled_cluster(spec: str, n: int) -> str:
    """A fixed-size ``spec`` (``"small:12,standard:8"``, ``"mixed:12"``) grown or shrunk to ``n`` nodes in the
    same proportions (``apportion``), for the size split's large clusters (``policy.splits.SIZE``)."""
    parts = [part.strip().partition(":") for part in spec.split(",")]
    try:
        counts = {kind: int(count) for kind, _, count in parts}
    except ValueError:
        raise ConfigError("cluster", f"{spec!r}: scaling needs fixed counts, 'type:count' each") from None
    if len(counts) != len(parts) or min(counts.values()) < 1 or n < 1:
        raise ConfigError("cluster", f"{spec!r} to {n} nodes: need distinct types, counts >= 1 and n >= 1")
    total = sum(counts.values())
    return ",".join(f"{k}:{c}" for k, c in apportion({k: c / total for k, c in counts.items()}, n).items() if c)


def parse_cluster(spec: str, rng: np.random.Generator, types: dict[str, NodeType] | None = None) -> Nodes:
    """Build the nodes of one episode from ``spec`` (see module doc); sizes and mixed order use ``rng``."""
    types = NODE_TYPES if types is None else types
    names: list[str] = []
    for part in spec.split(","):
        kind, sep, count = part.strip().partition(":")
        if not sep:
            raise ConfigError("cluster", f"{spec!r}: each part must be 'type:count', got {part!r}")
        lo, hi = _size(count, spec)
        n = lo if lo == hi else int(rng.integers(lo, hi + 1))
        if kind == "mixed":
            mix = _mixed(n)
            names.extend(mix[i] for i in rng.permutation(n))
        elif kind in types:
            names.extend([kind] * n)
        else:
            raise UnknownClassError("node type", kind, [*types, "mixed"])
    cap = np.array([types[k].capacity for k in names], dtype=np.float64)
    cap.setflags(write=False)
    max_pods = np.array([types[k].max_pods for k in names], dtype=np.float64)
    max_pods.setflags(write=False)
    reserved = daemons = None
    if any(types[k].daemon_pods or any(types[k].reserved) for k in names):
        reserved = np.array([types[k].reserved for k in names], dtype=np.float64)
        daemons = np.array([types[k].daemon_pods for k in names], dtype=np.float64)
        reserved.setflags(write=False)
        daemons.setflags(write=False)
    return Nodes(tuple(f"{k}-{i}" for i, k in enumerate(names)), tuple(names), cap, max_pods, reserved, daemons)
