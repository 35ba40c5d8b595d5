"""Host isolation for the real-node lab: which CPUs the system uses, which the nodes' pods share, and how big
the nodes are on them.

Why it exists: without it the four node cgroups' quotas (2.25 cores) share the machine's 2 cores with etcd, the
apiserver, the schedulers, kubelets and containerd, and under load the kernel splits the host between busy
nodes whatever their quota (issue #21: 1:2:2:4 measured as about 1:1.5:1.5:1.6). With an ``Isolation``,
``RealCluster`` runs everything that is not a node's job work on ``system_cpus`` (cgroup ``/drsched-system``
and each node's ``/<node>.runtime``, plus a tainted system node for the drsched pods) and the job nodes' pods on
``node_cpus``, with quotas scaled to fit that set (``scale_shapes``) and ``cpu.shares`` in proportion to quota
(``cpu_shares``).

Pure: the decisions and the cpuset list syntax, no I/O except ``machine_cpus`` and ``unavailable_reason``,
which read the cpuset hierarchy's root. State: none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, HostError
from policy.labworld import RealNodeShape

CPUSET_ROOT = Path("/sys/fs/cgroup/cpuset")
SYSTEM_CGROUP = "/drsched-system"
"""The cgroup (every v1 hierarchy) the control plane runs in; its cpuset is ``Isolation.system_cpus``."""
SYSTEM_NODE = "rn-system"
DEFAULT_HEADROOM = 0.1
"""Share of the node CPU set left out of the nodes' quotas: the kernel's per-CPU threads (ksoftirqd, kworkers)
and softirqs run there whatever the cpusets say, and a full set would make the nodes throttle for them."""
SHARES_PER_CORE = 10_240
"""cpu.shares per core of quota: a 100 m node weighs 1024, as much as one default task or cgroup (anything
else the machine runs in the root cgroup), and the other nodes in proportion to their quota."""
MIN_SHARES = 2  # the kernel's floor for cpu.shares
SYSTEM_NODE_MEMORY_MIB = 2048  # the extender (limit 1 Gi) and the migration controller (256 Mi) with room


class IsolationError(HarnessError, ValueError):
    """An isolation that cannot be meant: CPU lists that overlap, are empty or unreadable, a bad headroom."""


class IsolationUnavailable(HostError):
    """This machine cannot isolate the system from the nodes; the message names what is missing."""


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """The CPUs of a kernel CPU list (``0-2,5``), sorted; raises ``IsolationError`` on anything else."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        low, sep, high = part.partition("-")
        try:
            first, last = int(low), int(high) if sep else int(low)
        except ValueError:
            raise IsolationError(f"not a CPU list: {text!r}") from None
        if first < 0 or last < first:
            raise IsolationError(f"not a CPU list: {text!r}")
        cpus.update(range(first, last + 1))
    return tuple(sorted(cpus))


def format_cpu_list(cpus: Iterable[int]) -> str:
    """The kernel's CPU list syntax for ``cpus``, ranges joined: ``(0, 1, 2, 5)`` -> ``0-2,5``."""
    ordered = sorted(set(cpus))
    parts: list[str] = []
    start = prev = None
    for cpu in [*ordered, None]:
        if start is not None and (cpu is None or cpu != prev + 1):
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = None
        if cpu is not None and start is None:
            start = cpu
        prev = cpu
    return ",".join(parts)


@dataclass(frozen=True)
class Isolation:
    """The opt-in host isolation of a ``RealCluster`` (``RealCluster(..., isolation=Isolation.for_this_machine())``)."""

    system_cpus: str
    """CPU list for the control plane, kubelets, containerd and shims, the caller and the system node."""
    node_cpus: str
    """CPU list the job nodes' pods share; the nodes' quotas together fit in it (less ``headroom``)."""
    headroom: float = DEFAULT_HEADROOM
    """Share of ``node_cpus`` left out of the nodes' quotas (see ``DEFAULT_HEADROOM``)."""
    system_node: bool = True
    """Run a fifth, tainted node ``rn-system`` on ``system_cpus`` for the extender and migration controller."""
    pin_caller: bool = True
    """Move the process that starts the cluster (the lab driver, pytest) onto ``system_cpus`` while it runs."""

    def __post_init__(self) -> None:
        system, nodes = parse_cpu_list(self.system_cpus), parse_cpu_list(self.node_cpus)
        if not system or not nodes:
            raise IsolationError(f"both CPU sets must be non-empty: system={self.system_cpus!r} "
                                 f"nodes={self.node_cpus!r}")  # fmt: skip
        if set(system) & set(nodes):
            raise IsolationError(f"system CPUs {self.system_cpus} and node CPUs {self.node_cpus} overlap on "
                                 f"{format_cpu_list(set(system) & set(nodes))}")  # fmt: skip
        if not 0.0 <= self.headroom < 1.0:
            raise IsolationError(f"headroom must be in [0, 1), got {self.headroom}")
        # Normal form, so two equal isolations compare and print the same.
        object.__setattr__(self, "system_cpus", format_cpu_list(system))
        object.__setattr__(self, "node_cpus", format_cpu_list(nodes))

    @classmethod
    def for_cpus(cls, cpus: Sequence[int], **options: Any) -> Isolation:
        """The default split of ``cpus``: the first quarter (at least one) for the system, the rest for the nodes;
        ``options`` are the other fields (``headroom``, ``system_node``, ``pin_caller``).
        Raises ``IsolationUnavailable`` with fewer than 2 CPUs."""
        ordered = sorted(set(cpus))
        if len(ordered) < 2:
            raise IsolationUnavailable(
                f"host isolation needs at least 2 CPUs (one for the system, one for the nodes); this machine "
                f"offers {len(ordered)} ({format_cpu_list(ordered) or 'none'} in {CPUSET_ROOT}/cpuset.cpus)")
        system = max(1, len(ordered) // 4)
        return cls(system_cpus=format_cpu_list(ordered[:system]), node_cpus=format_cpu_list(ordered[system:]),
                   **options)  # fmt: skip

    @classmethod
    def for_this_machine(cls, **options: Any) -> Isolation:
        """``for_cpus`` of the CPUs this machine's cpuset root offers (raises ``IsolationUnavailable``)."""
        return cls.for_cpus(machine_cpus(), **options)

    @property
    def node_budget_millis(self) -> int:
        """What the job nodes' quotas may add up to: the node CPU set less the headroom."""
        return int(len(parse_cpu_list(self.node_cpus)) * 1000 * (1.0 - self.headroom))

    def system_shape(self) -> RealNodeShape:
        """The system node: the whole system CPU set (no quota below it), unshaped network."""
        return RealNodeShape(SYSTEM_NODE, "system", len(parse_cpu_list(self.system_cpus)) * 1000,
                             SYSTEM_NODE_MEMORY_MIB)  # fmt: skip

    def describe(self) -> dict[str, object]:
        return {**dataclasses.asdict(self), "node_budget_millis": self.node_budget_millis}


def scale_shapes(shapes: Sequence[RealNodeShape], budget_millis: int) -> tuple[RealNodeShape, ...]:
    """``shapes`` with CPU quotas scaled by one factor so they add up to at most ``budget_millis``; unchanged
    when they fit already. Rounded down, so the ratios hold to within a millicore (exactly for 1:2:2:4 into
    900 m: 100/200/200/400). Memory and links are left as they are."""
    total = sum(s.cpu_millis for s in shapes)
    if budget_millis < len(shapes):
        raise IsolationError(f"a budget of {budget_millis} m cannot give {len(shapes)} nodes a millicore each")
    if total <= budget_millis:
        return tuple(shapes)
    return tuple(dataclasses.replace(s, cpu_millis=max(1, s.cpu_millis * budget_millis // total)) for s in shapes)


def cpu_shares(cpu_millis: int) -> int:
    """A node cgroup's ``cpu.shares`` for its quota (``SHARES_PER_CORE``), at least the kernel's minimum."""
    return max(MIN_SHARES, cpu_millis * SHARES_PER_CORE // 1000)


# ---- the host -----------------------------------------------------------------------------------------


def machine_cpus(root: Path = CPUSET_ROOT) -> tuple[int, ...]:
    """The CPUs the cpuset hierarchy's root offers (``IsolationUnavailable`` when there is none)."""
    reason = unavailable_reason(root)
    if reason is not None:
        raise IsolationUnavailable(reason)
    return parse_cpu_list((root / "cpuset.cpus").read_text())


def unavailable_reason(root: Path = CPUSET_ROOT) -> str | None:
    """Why this machine cannot place processes on CPU sets, or None: the cgroup v1 cpuset hierarchy must be
    mounted with its ``cpuset.cpus`` / ``cpuset.mems`` files."""
    missing = [f for f in ("cgroup.procs", "cpuset.cpus", "cpuset.mems") if not (root / f).exists()]
    if missing:
        return (f"host isolation needs the cgroup v1 cpuset hierarchy at {root} (missing: {', '.join(missing)}; "
                "cgroup v2 only, or cpuset not mounted?)")  # fmt: skip
    return None


def check_fits(isolation: Isolation, available: Sequence[int]) -> None:
    """Raise ``IsolationUnavailable`` when ``isolation`` names CPUs the machine does not offer."""
    wanted = set(parse_cpu_list(isolation.system_cpus)) | set(parse_cpu_list(isolation.node_cpus))
    missing = sorted(wanted - set(available))
    if missing:
        raise IsolationUnavailable(f"host isolation wants CPUs {format_cpu_list(missing)}, which the cpuset root "
                                   f"does not offer (it has {format_cpu_list(available) or 'none'})")  # fmt: skip
