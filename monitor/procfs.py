"""Pure parsers for the host-wide /proc files the monitor samples.

Each function takes the text of one file and returns cumulative kernel counters; nothing
here opens a file or looks at the clock (``monitor.node`` does that). Malformed input
raises ``SourceUnavailable`` so the sampler can count it and carry on.

Files and fields (see proc(5)):

* ``/proc/stat`` -- the aggregate ``cpu`` line, in USER_HZ ticks summed over all CPUs.
* ``/proc/meminfo`` -- ``MemTotal`` and ``MemAvailable`` in kB.
* ``/proc/net/dev`` -- per interface: received bytes (1st field), transmitted bytes (9th).
* ``/proc/diskstats`` -- per block device: sectors read (6th column), sectors written
  (10th column); a sector here is always 512 bytes, whatever the device's sector size.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from monitor.errors import SourceUnavailable

SECTOR_BYTES = 512

# Whole-device name prefixes that are not physical disks: loop files, RAM disks,
# compressed RAM swap, device-mapper and md volumes (their I/O is already counted on
# the disks underneath them), optical and floppy drives.
_VIRTUAL_PREFIXES = ("loop", "ram", "zram", "dm-", "md", "sr", "fd", "nbd")


@dataclass(frozen=True, slots=True)
class CpuTimes:
    """Cumulative CPU ticks over all CPUs: ``busy`` ran work, ``total`` includes idle and steal."""

    busy: int
    total: int


def parse_proc_stat(text: str) -> tuple[CpuTimes, int]:
    """Return the aggregate CPU ticks and the number of CPUs (``cpuN`` lines).

    busy = user + nice + system + irq + softirq. guest/guest_nice are already inside user
    and nice, so they are not added again. steal (time the hypervisor gave to someone
    else) counts in total but not in busy: this node's pods did not use it.
    """
    aggregate: CpuTimes | None = None
    ncpu = 0
    for line in text.splitlines():
        if not line.startswith("cpu"):
            continue
        name, *fields = line.split()
        if name == "cpu":
            try:
                values = [int(v) for v in fields[:8]]
            except ValueError as exc:
                raise SourceUnavailable("proc_stat", f"bad cpu line {line!r}") from exc
            if len(values) < 4:
                raise SourceUnavailable("proc_stat", f"short cpu line {line!r}")
            values += [0] * (8 - len(values))
            user, nice, system, idle, iowait, irq, softirq, steal = values
            busy = user + nice + system + irq + softirq
            aggregate = CpuTimes(busy=busy, total=busy + idle + iowait + steal)
        elif name[3:].isdigit():
            ncpu += 1
    if aggregate is None or ncpu == 0:
        raise SourceUnavailable("proc_stat", "no aggregate cpu line or no per-cpu lines")
    return aggregate, ncpu


@dataclass(frozen=True, slots=True)
class MemInfo:
    """Node memory in bytes: ``used`` = total - available (what the kernel could not hand out)."""

    total: int
    available: int

    @property
    def used(self) -> int:
        return max(self.total - self.available, 0)


def parse_meminfo(text: str) -> MemInfo:
    """Return MemTotal and MemAvailable in bytes.

    Kernels before 3.14 lack MemAvailable; there free + buffers + cached stands in for it.
    """
    kb: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            kb[key.strip()] = int(parts[0])
    if "MemTotal" not in kb:
        raise SourceUnavailable("meminfo", "no MemTotal line")
    available = kb.get("MemAvailable")
    if available is None:
        available = kb.get("MemFree", 0) + kb.get("Buffers", 0) + kb.get("Cached", 0)
    return MemInfo(total=kb["MemTotal"] * 1024, available=available * 1024)


def parse_net_dev(text: str) -> dict[str, tuple[int, int]]:
    """Return ``{interface: (rx_bytes, tx_bytes)}`` for every interface listed."""
    counters: dict[str, tuple[int, int]] = {}
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        if not sep or "|" in line:
            continue
        fields = rest.split()
        try:
            counters[name.strip()] = (int(fields[0]), int(fields[8]))
        except (IndexError, ValueError) as exc:
            raise SourceUnavailable("net_dev", f"bad line {line!r}") from exc
    return counters


def parse_diskstats(text: str) -> dict[str, tuple[int, int]]:
    """Return ``{device: (read_bytes, written_bytes)}`` for every device listed."""
    counters: dict[str, tuple[int, int]] = {}
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        try:
            counters[fields[2]] = (int(fields[5]) * SECTOR_BYTES, int(fields[9]) * SECTOR_BYTES)
        except (IndexError, ValueError) as exc:
            raise SourceUnavailable("diskstats", f"bad line {line!r}") from exc
    return counters


def is_partition(name: str, devices: Iterable[str]) -> bool:
    """True if ``name`` is a partition of another device in ``devices``.

    The kernel names partitions after their disk: ``sda`` -> ``sda1``; when the disk
    name ends in a digit it inserts ``p``: ``nvme0n1`` -> ``nvme0n1p1``, ``mmcblk0`` ->
    ``mmcblk0p1``. So ``nvme0n10`` is a disk, not a partition of ``nvme0n1``.
    """
    for disk in devices:
        if disk == name or not name.startswith(disk):
            continue
        suffix = name[len(disk):]
        pattern = r"p\d+" if disk[-1].isdigit() else r"\d+"
        if re.fullmatch(pattern, suffix):
            return True
    return False


def physical_disks(devices: Iterable[str]) -> list[str]:
    """The whole physical disks among ``devices``: no partitions, loop, ram, zram, dm, md."""
    names = list(devices)
    return sorted(
        n for n in names if not n.startswith(_VIRTUAL_PREFIXES) and not is_partition(n, names)
    )
