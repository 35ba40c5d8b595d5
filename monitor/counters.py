"""Counter snapshots and the pure step from two snapshots to usage values.

``NodeCounters`` and ``PodCounters`` hold cumulative kernel counters read at one instant
(by ``monitor.node`` and ``monitor.cgroupfs``). ``node_values`` and ``pod_values`` turn the
previous and the current snapshot into the values the sampler tracks, keyed by series
name; a value is ``None`` when its source failed or no rate exists yet (first sample,
counter reset). Units: cores, bytes, fractions in [0, 1], bytes per second.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from monitor.procfs import CpuTimes, MemInfo
from monitor.rates import counter_rate, ratio, summed_rate

LOOPBACK = "lo"

NODE_SERIES = (
    "cpu_cores",
    "cpu_fraction",
    "memory_bytes",
    "memory_fraction",
    "net_rx_bytes_per_second",
    "net_tx_bytes_per_second",
    "disk_read_bytes_per_second",
    "disk_write_bytes_per_second",
    "net_bytes_per_second",
    "disk_bytes_per_second",
)
POD_SERIES = (
    "cpu_cores",
    "memory_bytes",
    "memory_working_set_bytes",
    "net_rx_bytes_per_second",
    "net_tx_bytes_per_second",
    "disk_read_bytes_per_second",
    "disk_write_bytes_per_second",
)

Values = dict[str, float | None]


@dataclass(frozen=True, slots=True)
class NodeCounters:
    """Cumulative node counters at one instant; a field is ``None`` when its source failed."""

    mono: float
    wall: float
    cpu: CpuTimes | None
    ncpu: float | None  # CPUs; fractional for a node cgroup's quota (monitor.nodecgroup)
    memory: MemInfo | None
    net: dict[str, tuple[int, int]] | None
    disk: dict[str, tuple[int, int]] | None


@dataclass(frozen=True, slots=True)
class PodCgroup:
    """One pod's cgroup directories, by controller (``cpu``, ``memory``, ``io``)."""

    uid: str
    qos: str
    paths: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PodCounters:
    """Cumulative per-pod counters; ``None`` where unavailable (``net_note`` says why for net)."""

    cpu_usec: int | None
    memory_bytes: int | None
    working_set_bytes: int | None
    disk: tuple[int, int] | None
    net: tuple[int, int] | None
    net_note: str | None


def _column(counters: dict[str, tuple[int, int]] | None, index: int) -> dict[str, int] | None:
    return None if counters is None else {name: pair[index] for name, pair in counters.items()}


def _keyed_rate(prev: dict[str, tuple[int, int]] | None, cur: dict[str, tuple[int, int]] | None, index: int, dt: float):
    p, c = _column(prev, index), _column(cur, index)
    return None if p is None or c is None else summed_rate(p, c, dt)


def _pair_rate(prev: tuple[int, int] | None, cur: tuple[int, int] | None, index: int, dt: float):
    return None if prev is None or cur is None else counter_rate(prev[index], cur[index], dt)


def node_values(prev: NodeCounters | None, cur: NodeCounters) -> Values:
    """Node usage from two consecutive snapshots (memory needs only the current one)."""
    values: Values = dict.fromkeys(NODE_SERIES)
    if cur.memory is not None:
        values["memory_bytes"] = float(cur.memory.used)
        values["memory_fraction"] = ratio(cur.memory.used, cur.memory.total)
    if prev is None:
        return values
    dt = cur.mono - prev.mono
    if prev.cpu is not None and cur.cpu is not None and cur.ncpu:
        busy, total = cur.cpu.busy - prev.cpu.busy, cur.cpu.total - prev.cpu.total
        fraction = ratio(busy, total) if busy >= 0 else None
        if fraction is not None:
            values["cpu_fraction"] = min(fraction, 1.0)
            values["cpu_cores"] = min(fraction, 1.0) * cur.ncpu
    values["net_rx_bytes_per_second"] = _keyed_rate(prev.net, cur.net, 0, dt)
    values["net_tx_bytes_per_second"] = _keyed_rate(prev.net, cur.net, 1, dt)
    values["disk_read_bytes_per_second"] = _keyed_rate(prev.disk, cur.disk, 0, dt)
    values["disk_write_bytes_per_second"] = _keyed_rate(prev.disk, cur.disk, 1, dt)
    # The sums are series of their own so their window max is exact (max of sums, not sum of maxima).
    values["net_bytes_per_second"] = _total(values["net_rx_bytes_per_second"], values["net_tx_bytes_per_second"])
    values["disk_bytes_per_second"] = _total(values["disk_read_bytes_per_second"],
                                             values["disk_write_bytes_per_second"])
    return values


def _total(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def pod_values(prev: PodCounters | None, cur: PodCounters, dt: float) -> Values:
    """Pod usage from two consecutive snapshots ``dt`` seconds apart."""
    values: Values = dict.fromkeys(POD_SERIES)
    values["memory_bytes"] = None if cur.memory_bytes is None else float(cur.memory_bytes)
    values["memory_working_set_bytes"] = None if cur.working_set_bytes is None else float(cur.working_set_bytes)
    if prev is None:
        return values
    if prev.cpu_usec is not None and cur.cpu_usec is not None:
        rate = counter_rate(prev.cpu_usec, cur.cpu_usec, dt)
        values["cpu_cores"] = None if rate is None else rate / 1e6
    values["net_rx_bytes_per_second"] = _pair_rate(prev.net, cur.net, 0, dt)
    values["net_tx_bytes_per_second"] = _pair_rate(prev.net, cur.net, 1, dt)
    values["disk_read_bytes_per_second"] = _pair_rate(prev.disk, cur.disk, 0, dt)
    values["disk_write_bytes_per_second"] = _pair_rate(prev.disk, cur.disk, 1, dt)
    return values
