"""Reads per-pod counters from the kubelet's pod cgroups: the one module that opens cgroup files.

The layout (v2 unified, or v1 per-controller hierarchies) is looked up on every discovery,
so a cgroup root mounted late is picked up. The reader owns small caches: per pod, one PID
whose network namespace stands for the pod's (and, for a pod without processes, when to look
again), and per PID whether that namespace is the host's. Paths are plain strings here:
this runs for every pod every second, and pathlib costs more than the reads.

Per-pod network: a cgroup has no network counters; a pod's traffic is only visible inside
its network namespace. So the reader takes one process of the pod (any: all containers of
a pod share the sandbox's netns), reads ``<proc>/<pid>/net/dev`` and sums the non-loopback
interfaces. Pods on the host network share the node's namespace; their counters would be
the node's, so they are reported as unavailable with the reason ``host network``. Whether
a PID is in the host namespace is decided by the inode of ``<proc>/<pid>/ns/net`` when the
agent may read it (root or CAP_SYS_PTRACE) and otherwise by comparing the pod's interface
list and counters with the agent's own (the agent runs with hostNetwork).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from kube.logs import kv
from monitor import cgroups
from monitor.counters import LOOPBACK, PodCgroup, PodCounters
from monitor.errors import SourceUnavailable
from monitor.logs import OnceLogger
from monitor.node import read_small, read_text
from monitor.procfs import parse_net_dev

log = logging.getLogger(__name__)

_V1_CPU_DIRS = ("cpu,cpuacct", "cpuacct,cpu", "cpuacct")
_SAME_COUNTER_SLACK = 1 << 20
_PID_RETRY_SAMPLES = 5

NET_HOST = "host network: the pod shares the node's network namespace"
NET_NO_PROCESS = "no process found in the pod cgroup"
NET_DISABLED = "per-pod network disabled (--pod-network false)"


class CgroupReader:
    """Finds pod cgroups under ``root``/<controller>/``parent`` and reads their counters."""

    def __init__(
        self, *, root: Path, parent: str, version: str, proc_root: Path, pod_network: bool, once: OnceLogger
    ) -> None:
        self._root = root
        self._parent = parent.strip("/")
        self._version = version
        self._proc = proc_root
        self._pod_network = pod_network
        self._once = once
        self._pids: dict[str, int] = {}
        self._host_netns: dict[int, bool] = {}
        self._pid_retry: dict[str, int] = {}
        self._tick = 0

    def layout(self) -> tuple[str, dict[str, str]] | None:
        """``(version, {controller: hierarchy dir})`` for the configured root, or ``None``."""
        root = str(self._root)
        v2 = os.path.exists(f"{root}/cgroup.controllers")
        if self._version == "2" or (self._version == "auto" and v2):
            return ("2", {c: root for c in ("cpu", "memory", "io")}) if os.path.isdir(root) else None
        dirs: dict[str, str] = {}
        cpu = next((f"{root}/{d}" for d in _V1_CPU_DIRS if os.path.exists(f"{root}/{d}/cpuacct.usage")), None)
        if cpu is not None:
            dirs["cpu"] = cpu
        for controller, name in (("memory", "memory"), ("io", "blkio")):
            if os.path.isdir(f"{root}/{name}"):
                dirs[controller] = f"{root}/{name}"
        return ("1", dirs) if dirs else None

    def discover(self) -> tuple[str | None, dict[str, PodCgroup]]:
        """The cgroup version found and every pod cgroup, keyed by pod UID."""
        self._tick += 1
        layout = self.layout()
        if layout is None:
            self._once.warn("cgroup_root", "no cgroup hierarchy found; per-pod usage is empty", root=self._root)
            return None, {}
        self._once.clear("cgroup_root")
        version, hierarchies = layout
        pods: dict[str, PodCgroup] = {}
        walked: dict[str, dict[str, tuple[str, str]]] = {}
        for controller, hierarchy in hierarchies.items():
            if hierarchy not in walked:  # v2: one hierarchy serves all controllers, walk it once
                walked[hierarchy] = _pod_dirs(os.path.join(hierarchy, self._parent) if self._parent else hierarchy)
            for uid, (qos, path) in walked[hierarchy].items():
                pods.setdefault(uid, PodCgroup(uid=uid, qos=qos)).paths[controller] = path
        for gone in self._pids.keys() - pods.keys():
            self._host_netns.pop(self._pids.pop(gone), None)
        for gone in self._pid_retry.keys() - pods.keys():
            del self._pid_retry[gone]
        return version, pods

    def read(self, pod: PodCgroup, version: str) -> PodCounters:
        """Read one pod; a file that vanished (pod deleted mid-sample) leaves its field ``None``."""
        v2 = version == "2"
        cpu_dir, mem_dir, io_dir = (pod.paths.get(c) for c in ("cpu", "memory", "io"))
        cpu = self._attempt(cpu_dir, "cpu.stat" if v2 else "cpuacct.usage",
                            cgroups.parse_cpu_stat_usec if v2 else cgroups.parse_cpuacct_usage_usec)
        usage_file = "memory.current" if v2 else "memory.usage_in_bytes"
        memory = self._attempt(mem_dir, usage_file, lambda t: cgroups.parse_single_int(t, usage_file))
        mstat = self._attempt(mem_dir, "memory.stat", cgroups.parse_flat_keyed)
        if v2:
            disk = self._attempt(io_dir, "io.stat", cgroups.parse_io_stat)
        else:
            disk = self._attempt(io_dir, "blkio.throttle.io_service_bytes_recursive", cgroups.parse_blkio_service_bytes)
        net, note = self._pod_net(pod)
        return PodCounters(
            cpu_usec=cpu,
            memory_bytes=memory,
            working_set_bytes=cgroups.working_set(memory, mstat) if memory is not None and mstat is not None else None,
            disk=disk,
            net=net,
            net_note=note,
        )

    def _attempt(self, directory: str | None, name: str, parse):
        if directory is None:
            return None
        path = f"{directory}/{name}"
        try:
            value = parse(read_small(path))
        except FileNotFoundError:
            if os.path.isdir(directory):  # the controller does not offer this file here
                self._once.warn(f"cgroup_file:{name}", "cgroup file missing; field left empty", path=path)
            return None
        except (OSError, SourceUnavailable) as exc:
            log.debug("cgroup read failed", extra=kv(path=path, error=exc))
            return None
        self._once.clear(f"cgroup_file:{name}")
        return value

    def _pod_net(self, pod: PodCgroup) -> tuple[tuple[int, int] | None, str | None]:
        if not self._pod_network:
            return None, NET_DISABLED
        for _ in range(2):  # a cached PID may have exited: look again once
            pid = self._pids.get(pod.uid) or self._find_pid(pod)
            if pid is None:
                return None, NET_NO_PROCESS
            try:
                ifaces = parse_net_dev(read_text(self._proc / str(pid) / "net" / "dev", "net_dev"))
            except SourceUnavailable:
                self._pids.pop(pod.uid, None)
                self._host_netns.pop(pid, None)
                continue
            self._pids[pod.uid] = pid
            if self._in_host_netns(pid, ifaces):
                return None, NET_HOST
            rx = sum(c[0] for n, c in ifaces.items() if n != LOOPBACK)
            tx = sum(c[1] for n, c in ifaces.items() if n != LOOPBACK)
            return (rx, tx), None
        return None, NET_NO_PROCESS

    def _find_pid(self, pod: PodCgroup) -> int | None:
        # A pod without processes (sandbox starting or gone) is looked at again every few samples, not every one.
        if self._pid_retry.get(pod.uid, 0) > self._tick:
            return None
        pid = _first_pid(pod)
        if pid is None:
            self._pid_retry[pod.uid] = self._tick + _PID_RETRY_SAMPLES
        return pid

    def _in_host_netns(self, pid: int, ifaces: dict[str, tuple[int, int]]) -> bool:
        if pid not in self._host_netns:
            self._host_netns[pid] = self._compare_netns(pid, ifaces)
        return self._host_netns[pid]

    def _compare_netns(self, pid: int, ifaces: dict[str, tuple[int, int]]) -> bool:
        try:
            theirs = os.stat(self._proc / str(pid) / "ns" / "net").st_ino
            return theirs == os.stat(self._proc / "self" / "ns" / "net").st_ino
        except OSError:
            pass  # not root / no CAP_SYS_PTRACE: fall back to comparing counters
        try:
            own = parse_net_dev(read_text(self._proc / "self" / "net" / "dev", "net_dev"))
        except SourceUnavailable:
            return False
        return own.keys() == ifaces.keys() and all(
            abs(own[n][0] - ifaces[n][0]) <= max(_SAME_COUNTER_SLACK, own[n][0] // 1000) for n in own
        )


def _pod_dirs(base: str) -> dict[str, tuple[str, str]]:
    """``{uid: (qos, dir)}`` for the pod cgroups under the kubepods directories in ``base``."""
    found: dict[str, tuple[str, str]] = {}
    for top_name, top in _subdirs(base):
        if not cgroups.is_kubepods_dir(top_name):
            continue
        for name, child in _subdirs(top):
            pod = cgroups.pod_from_dirname(name)
            if pod is not None:
                found[pod[0]] = (pod[1] or cgroups.QOS_GUARANTEED, child)
                continue
            qos = cgroups.qos_from_dirname(name)
            if qos is None:
                continue
            for grand_name, grandchild in _subdirs(child):
                pod = cgroups.pod_from_dirname(grand_name)
                if pod is not None:
                    found[pod[0]] = (pod[1] or qos, grandchild)
    return found


def _subdirs(path: str) -> list[tuple[str, str]]:
    try:
        with os.scandir(path) as entries:
            return [(e.name, e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _first_pid(pod: PodCgroup) -> int | None:
    """A PID in the pod's cgroup or its container cgroups (the pod cgroup itself is usually empty)."""
    directory = pod.paths.get("cpu") or pod.paths.get("memory") or pod.paths.get("io")
    if directory is None:
        return None
    for current, _dirs, _files in os.walk(directory):
        try:
            pids = cgroups.parse_cgroup_procs(read_small(os.path.join(current, "cgroup.procs")))
        except OSError:
            continue
        if pids:
            return pids[0]
    return None
