"""Pure parsers for kubelet pod cgroups: directory names to pod UIDs, and cgroup stat files.

The kubelet puts each pod in its own cgroup, below a QoS cgroup except for Guaranteed pods:

* systemd driver: ``kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice``
  and ``kubepods.slice/kubepods-pod<uid>.slice``, with ``_`` in place of each ``-`` of the UID
  (systemd reserves ``-`` for nesting);
* cgroupfs driver: ``kubepods/burstable/pod<uid>`` and ``kubepods/pod<uid>``.

Counters read per pod (v2 / v1):

* CPU: ``cpu.stat`` ``usage_usec`` / ``cpuacct.usage`` (nanoseconds);
* memory: ``memory.current`` / ``memory.usage_in_bytes``; the working set (what the kubelet
  evicts on) subtracts ``inactive_file`` / ``total_inactive_file`` from ``memory.stat``;
* disk: ``io.stat`` ``rbytes``/``wbytes`` / ``blkio.throttle.io_service_bytes`` Read/Write.
"""

from __future__ import annotations

import re

from monitor.errors import SourceUnavailable

QOS_GUARANTEED = "guaranteed"

_SYSTEMD_POD = re.compile(r"kubepods(?:-(besteffort|burstable))?-pod([0-9a-fA-F_]+)\.slice")
_CGROUPFS_POD = re.compile(r"pod([0-9a-fA-F-]+)")
_QOS_DIRS = {
    "kubepods-besteffort.slice": "besteffort",
    "kubepods-burstable.slice": "burstable",
    "besteffort": "besteffort",
    "burstable": "burstable",
}


def pod_from_dirname(name: str) -> tuple[str, str | None] | None:
    """``(uid, qos)`` for a pod cgroup directory name, else ``None``.

    ``qos`` is known from a systemd name (``None`` means the name had no QoS part, i.e.
    Guaranteed); for a cgroupfs name it is ``None`` and comes from the parent directory.
    """
    match = _SYSTEMD_POD.fullmatch(name)
    if match:
        return match.group(2).replace("_", "-").lower(), match.group(1) or QOS_GUARANTEED
    match = _CGROUPFS_POD.fullmatch(name)
    if match:
        return match.group(1).lower(), None
    return None


def qos_from_dirname(name: str) -> str | None:
    """The QoS class a kubelet QoS cgroup directory stands for, else ``None``."""
    return _QOS_DIRS.get(name)


def is_kubepods_dir(name: str) -> bool:
    """True for the kubelet's top pod cgroup: ``kubepods``, ``kubepods.slice`` or ``<prefix>-kubepods.slice``."""
    return name in ("kubepods", "kubepods.slice") or name.endswith("-kubepods.slice")


def _int_or_fail(value: str, source: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise SourceUnavailable("cgroup", f"{source}: not an integer: {value!r}") from exc


def parse_cpu_stat_usec(text: str) -> int:
    """``usage_usec`` from a cgroup v2 ``cpu.stat``."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "usage_usec":
            return _int_or_fail(value.strip(), "cpu.stat")
    raise SourceUnavailable("cgroup", "cpu.stat has no usage_usec")


def parse_cpuacct_usage_usec(text: str) -> int:
    """A cgroup v1 ``cpuacct.usage`` (nanoseconds) in microseconds."""
    return _int_or_fail(text.strip(), "cpuacct.usage") // 1000


def parse_single_int(text: str, source: str) -> int:
    """A one-number file such as ``memory.current`` or ``memory.usage_in_bytes``."""
    return _int_or_fail(text.strip(), source)


def parse_flat_keyed(text: str) -> dict[str, int]:
    """A ``key value`` per line file such as ``memory.stat``; lines that are not that are skipped."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


def working_set(usage: int, memory_stat: dict[str, int]) -> int:
    """Usage minus inactive page cache, floored at 0 (the kubelet's ``working_set_bytes``)."""
    inactive = memory_stat.get("inactive_file", memory_stat.get("total_inactive_file", 0))
    return max(usage - inactive, 0)


def parse_io_stat(text: str) -> tuple[int, int]:
    """Read and written bytes summed over the devices of a cgroup v2 ``io.stat``.

    Each line is ``MAJ:MIN rbytes=.. wbytes=.. rios=.. ...``; an empty file means no I/O yet.
    """
    read = written = 0
    for line in text.splitlines():
        for field in line.split()[1:]:
            key, _, value = field.partition("=")
            if key == "rbytes":
                read += _int_or_fail(value, "io.stat")
            elif key == "wbytes":
                written += _int_or_fail(value, "io.stat")
    return read, written


def parse_blkio_service_bytes(text: str) -> tuple[int, int]:
    """Read and written bytes summed over the devices of a v1 ``blkio.throttle.io_service_bytes``.

    Lines are ``MAJ:MIN Read N``, ``MAJ:MIN Write N``, ...; the trailing ``Total N`` line
    (no device) is skipped so nothing is counted twice.
    """
    read = written = 0
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        if parts[1] == "Read":
            read += _int_or_fail(parts[2], "blkio")
        elif parts[1] == "Write":
            written += _int_or_fail(parts[2], "blkio")
    return read, written


def parse_cgroup_procs(text: str) -> list[int]:
    """PIDs listed in a ``cgroup.procs`` file."""
    return [int(line) for line in text.split() if line.isdigit()]
