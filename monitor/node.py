"""Reads the host-wide counters from the proc root: the one module that opens /proc files for the node.

A read returns a ``NodeCounters`` snapshot of cumulative counters plus the sources that
failed; it never raises for a missing or malformed file (that source is ``None`` in the
snapshot). Which interfaces and disks count is decided here, every sample, so that an
interface or disk that appears later is picked up and one that vanishes is warned about.
"""

from __future__ import annotations

import os
from pathlib import Path

from monitor.counters import LOOPBACK, NodeCounters
from monitor.errors import SourceUnavailable, attempt
from monitor.logs import OnceLogger
from monitor.procfs import parse_diskstats, parse_meminfo, parse_net_dev, parse_proc_stat, physical_disks


def read_small(path: str | Path) -> str:
    """A small kernel file read with raw os calls: cheaper than ``open()`` for files read every second."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode("ascii", "replace")


def read_text(path: Path, source: str) -> str:
    """The whole file, or ``SourceUnavailable(source)`` when it cannot be read."""
    try:
        return read_small(path)
    except OSError as exc:
        raise SourceUnavailable(source, f"cannot read {path}: {exc.strerror or exc}") from exc


def select(names: list[str], wanted: list[str], *, kind: str, once: OnceLogger) -> list[str]:
    """The ``wanted`` names that exist (warning once per missing one), or ``names`` when none are wanted."""
    if not wanted:
        return names
    present = set(names)
    for name in wanted:
        key = f"{kind}:{name}"
        if name in present:
            once.clear(key)
        else:
            once.warn(key, "configured device not found; left out of the sum", kind=kind, name=name)
    return [n for n in wanted if n in present]


class NodeReader:
    """Reads /proc/stat, /proc/meminfo, /proc/net/dev and /proc/diskstats under ``proc_root``."""

    def __init__(self, *, proc_root: Path, interfaces: list[str], disks: list[str], once: OnceLogger) -> None:
        self._proc = proc_root
        self._interfaces = interfaces
        self._disks = disks
        self._once = once

    def read(self, *, mono: float, wall: float) -> tuple[NodeCounters, list[SourceUnavailable]]:
        errors: list[SourceUnavailable] = []
        stat = attempt(errors, lambda: parse_proc_stat(read_text(self._proc / "stat", "proc_stat")))
        memory = attempt(errors, lambda: parse_meminfo(read_text(self._proc / "meminfo", "meminfo")))
        net = attempt(errors, self._read_net)
        disk = attempt(errors, self._read_disk)
        counters = NodeCounters(
            mono=mono,
            wall=wall,
            cpu=stat[0] if stat else None,
            ncpu=stat[1] if stat else None,
            memory=memory,
            net=net,
            disk=disk,
        )
        return counters, errors

    def _read_net(self) -> dict[str, tuple[int, int]]:
        # <proc>/net/dev is the netns of the reading process: with hostNetwork, the host's.
        all_ifaces = parse_net_dev(read_text(self._proc / "net" / "dev", "net_dev"))
        default = [n for n in all_ifaces if n != LOOPBACK]
        names = select(list(all_ifaces), self._interfaces, kind="interface", once=self._once)
        return {n: all_ifaces[n] for n in (names if self._interfaces else default)}

    def _read_disk(self) -> dict[str, tuple[int, int]]:
        all_disks = parse_diskstats(read_text(self._proc / "diskstats", "diskstats"))
        if self._disks:
            names = select(list(all_disks), self._disks, kind="disk", once=self._once)
        else:
            names = physical_disks(all_disks)
        return {n: all_disks[n] for n in names}
