"""Node-level counters of an *emulated* node: its cgroup subtree and its bridge, not the host's /proc.

Why it exists: several emulated nodes on one machine (real kubelets, each with its own cgroup root and CNI
bridge) share the host's /proc, so the default host view (``monitor.node``) reports the whole machine on
every node. With ``--node-view cgroup`` the agent reads instead:

* CPU: the cumulative usage of the node's cgroup (``cpuacct.usage`` v1 / ``cpu.stat usage_usec`` v2) against
  the node's capacity, its CFS quota (``cpu.cfs_quota_us / cpu.cfs_period_us`` v1, ``cpu.max`` v2; no quota:
  the host's CPUs). ``CpuTimes.busy`` is the usage and ``total`` the capacity's share of wall time (both in
  microseconds; each interval counted at the quota read at its end), so the shared ``node_values`` step
  gives cores and fraction as for a real host, from the first sample after a quota change on;
* memory: the node cgroup's working set (usage minus inactive page cache) out of its memory limit (or the
  host's MemTotal when the limit is above it);
* network: the counters of the node's own bridge or veths (``--node-net-dev``), read from the host's network
  namespace through ``<proc>/1/net/dev`` (the agent itself may run in a pod network namespace). Seen from
  the host, a bridge *receives* what the node's pods send and *transmits* what they receive, so rx and tx are
  swapped into the node's point of view;
* disk: the host's disks, as in the host view (v1 blkio cannot attribute buffered writes to a cgroup).

A real node keeps the default host view. Like ``NodeReader``, a read never raises: a source that fails is
``None`` in the snapshot and reported in the error list.
"""

from __future__ import annotations

import os
from pathlib import Path

from monitor import cgroups
from monitor.counters import NodeCounters
from monitor.errors import SourceUnavailable, attempt
from monitor.logs import OnceLogger
from monitor.node import NodeReader, read_text, select
from monitor.procfs import CpuTimes, MemInfo, parse_net_dev

_UNLIMITED = 1 << 60  # v1 memory.limit_in_bytes reads about 2^63 when unset


def parse_cpu_max(text: str) -> float | None:
    """Cores of a v2 ``cpu.max`` (``"<quota> <period>"``; ``max`` = no quota -> None)."""
    parts = text.split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    try:
        quota, period = int(parts[0]), int(parts[1])
    except ValueError as exc:
        raise SourceUnavailable("node_cgroup", f"bad cpu.max {text.strip()!r}") from exc
    return quota / period if quota > 0 and period > 0 else None


def v1_quota_cores(quota_text: str, period_text: str) -> float | None:
    """Cores of a v1 CFS quota (``-1`` = no quota -> None)."""
    try:
        quota, period = int(quota_text.strip()), int(period_text.strip())
    except ValueError as exc:
        raise SourceUnavailable("node_cgroup", f"bad cfs quota/period {quota_text!r}/{period_text!r}") from exc
    return quota / period if quota > 0 and period > 0 else None


def node_devices(spec: list[str], node: str) -> list[str]:
    """The devices of ``--node-net-dev`` for ``node``: plain names apply to every node, ``NODE=DEV`` entries
    only to that node (one DaemonSet spec can then name each node's bridge)."""
    out = []
    for item in spec:
        name, sep, dev = item.partition("=")
        if not sep:
            out.append(item)
        elif name == node and dev:
            out.append(dev)
    return out


class CgroupNodeReader:
    """``NodeReader``'s interface over one node cgroup (``path``, under the cgroup root) and its net devices."""

    def __init__(self, *, root: Path, version: str, path: str, proc_root: Path, net_devices: list[str],
                 disks: list[str], once: OnceLogger) -> None:
        self._root, self._version, self._path = str(root), version, path.strip("/")
        self._proc = proc_root
        self._devices = net_devices
        self._host = NodeReader(proc_root=proc_root, interfaces=[], disks=disks, once=once)
        self._once = once
        self._cpu_total: tuple[float, float] | None = None  # (mono, capacity microseconds so far)

    def _dirs(self) -> tuple[bool, str, str, str]:
        """(v2?, cpu usage dir, cpu quota dir, memory dir) of the node cgroup."""
        v2 = self._version == "2" or (self._version == "auto" and os.path.exists(f"{self._root}/cgroup.controllers"))
        if v2:
            base = f"{self._root}/{self._path}"
            return True, base, base, base
        acct = next((f"{self._root}/{d}" for d in ("cpu,cpuacct", "cpuacct,cpu", "cpuacct")
                     if os.path.exists(f"{self._root}/{d}/cpuacct.usage")), f"{self._root}/cpuacct")
        quota = acct if os.path.exists(f"{acct}/cpu.cfs_quota_us") else f"{self._root}/cpu"
        return False, f"{acct}/{self._path}", f"{quota}/{self._path}", f"{self._root}/memory/{self._path}"

    def _read(self, path: str) -> str:
        return read_text(Path(path), "node_cgroup")

    def _cpu(self, mono: float, host_cpus: int | None) -> tuple[CpuTimes, float]:
        v2, acct, quota, _ = self._dirs()
        if v2:
            usage = cgroups.parse_cpu_stat_usec(self._read(f"{acct}/cpu.stat"))
            cores = parse_cpu_max(self._read(f"{quota}/cpu.max")) if os.path.exists(f"{quota}/cpu.max") else None
        else:
            usage = cgroups.parse_cpuacct_usage_usec(self._read(f"{acct}/cpuacct.usage"))
            cores = v1_quota_cores(self._read(f"{quota}/cpu.cfs_quota_us"), self._read(f"{quota}/cpu.cfs_period_us"))
        if cores is None:
            cores = float(host_cpus or os.cpu_count() or 1)
        # The capacity is accumulated interval by interval at the quota read now, so a quota change (a node
        # cut as a noisy neighbour would) moves the total by the new capacity only, never by all the time
        # before it as mono x cores would (a negative or huge step).
        if self._cpu_total is None or mono < self._cpu_total[0]:
            total = mono * 1e6 * cores
        else:
            total = self._cpu_total[1] + (mono - self._cpu_total[0]) * 1e6 * cores
        self._cpu_total = (mono, total)
        return CpuTimes(busy=usage, total=int(total)), cores

    def _memory(self, host: MemInfo | None) -> MemInfo:
        v2, _, _, mem_dir = self._dirs()
        usage_file, limit_file = ("memory.current", "memory.max") if v2 else ("memory.usage_in_bytes",
                                                                              "memory.limit_in_bytes")
        usage = cgroups.parse_single_int(self._read(f"{mem_dir}/{usage_file}"), usage_file)
        stat = cgroups.parse_flat_keyed(self._read(f"{mem_dir}/memory.stat"))
        raw = self._read(f"{mem_dir}/{limit_file}").strip()
        limit = _UNLIMITED if raw == "max" else cgroups.parse_single_int(raw, limit_file)
        total = min(limit, host.total) if host is not None else limit
        used = min(cgroups.working_set(usage, stat), total)
        return MemInfo(total=total, available=total - used)

    def _net(self) -> dict[str, tuple[int, int]]:
        counters = parse_net_dev(read_text(self._proc / "1" / "net" / "dev", "net_dev"))
        names = select(list(counters), self._devices, kind="interface", once=self._once) if self._devices else []
        return {n: (counters[n][1], counters[n][0]) for n in names}  # the bridge's tx is the node's rx

    def read(self, *, mono: float, wall: float) -> tuple[NodeCounters, list[SourceUnavailable]]:
        host, errors = self._host.read(mono=mono, wall=wall)
        errors = [e for e in errors if e.source not in ("net_dev", "proc_stat")]
        cpu = attempt(errors, lambda: self._cpu(mono, host.ncpu))
        memory = attempt(errors, lambda: self._memory(host.memory))
        net = attempt(errors, self._net)
        counters = NodeCounters(mono=mono, wall=wall, cpu=cpu[0] if cpu else None, ncpu=cpu[1] if cpu else None,
                                memory=memory, net=net, disk=host.disk)
        return counters, errors
