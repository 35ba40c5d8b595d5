"""Wire models of the agent's HTTP API (they are the OpenAPI schema) and the snapshot-to-wire mapping.

``UsageReport`` is what ``GET /usage`` returns. Every measured quantity is a ``Stat``: the
last sample (``current``), its EWMA, and the mean and max over the window; ``null`` when
not measured yet (rates need two samples) or when its source is unavailable. Units are
SI base units (cores, bytes, bytes per second, fractions in [0, 1]). ``scheduler_units``
repeats the four numbers the extender scores on in its own units -- cpu cores, memory
GiB (2^30 bytes), network MB/s (10^6 bytes, rx + tx) and disk MB/s (read + write).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from monitor.rates import Stat
from monitor.sampler import PodSnapshot, Snapshot
from monitor.settings import MonitorSettings

GIB = float(1 << 30)
MB = 1e6


class StatOut(BaseModel):
    """One series: last value, EWMA and window mean/max (null = not measured)."""

    current: float | None = Field(description="Value over the last sampling interval (or at the last sample).")
    ewma: float | None = Field(description="Exponentially weighted moving average (weight ewma_alpha on the newest).")
    mean: float | None = Field(description="Mean over the samples in the window.")
    max: float | None = Field(description="Maximum over the samples in the window.")


class WindowOut(BaseModel):
    samples: int = Field(description="Samples the window holds when full.")
    filled: int = Field(description="Samples in the window now.")
    seconds: float = Field(description="Window length when full: samples x interval.")
    ewma_alpha: float = Field(description="Weight of the newest sample in the EWMA.")


class NodeUsageOut(BaseModel):
    cpu_cores: StatOut = Field(description="CPU cores busy (user+nice+system+irq+softirq).")
    cpu_fraction: StatOut = Field(description="Busy fraction of all CPUs, 0..1.")
    memory_bytes: StatOut = Field(description="MemTotal - MemAvailable, bytes.")
    memory_fraction: StatOut = Field(description="memory_bytes / MemTotal, 0..1.")
    net_rx_bytes_per_second: StatOut = Field(description="Received bytes/s summed over the counted interfaces.")
    net_tx_bytes_per_second: StatOut = Field(description="Transmitted bytes/s summed over the counted interfaces.")
    net_bytes_per_second: StatOut = Field(description="rx + tx bytes/s.")
    disk_read_bytes_per_second: StatOut = Field(description="Bytes/s read from the counted disks.")
    disk_write_bytes_per_second: StatOut = Field(description="Bytes/s written to the counted disks.")
    disk_bytes_per_second: StatOut = Field(description="read + write bytes/s.")
    capacity_cores: float | None = Field(description="CPUs the node has (per-CPU lines in /proc/stat; node view "
                                          "cgroup: the node cgroup's CPU quota, in cores).")
    capacity_memory_bytes: int | None = Field(description="MemTotal, bytes.")
    interfaces: list[str] = Field(description="Interfaces summed in the network rates.")
    disks: list[str] = Field(description="Block devices summed in the disk rates.")


class PodUsageOut(BaseModel):
    uid: str = Field(description="Pod UID (metadata.uid), from the pod cgroup name.")
    qos: Literal["guaranteed", "burstable", "besteffort"] = Field(description="QoS class, from the cgroup layout.")
    cpu_cores: StatOut = Field(description="Cores used by the pod's cgroup.")
    memory_bytes: StatOut = Field(description="memory.current (v2) / memory.usage_in_bytes (v1), bytes.")
    memory_working_set_bytes: StatOut = Field(description="memory_bytes - inactive_file, as the kubelet counts it.")
    net_rx_bytes_per_second: StatOut = Field(description="Received bytes/s in the pod's network namespace.")
    net_tx_bytes_per_second: StatOut = Field(description="Transmitted bytes/s in the pod's network namespace.")
    disk_read_bytes_per_second: StatOut = Field(description="io.stat rbytes (v2) / blkio Read (v1) bytes/s.")
    disk_write_bytes_per_second: StatOut = Field(description="io.stat wbytes (v2) / blkio Write (v1) bytes/s.")
    net_unavailable_reason: str | None = Field(description="Why the network fields are null, if they are.")


class SchedulerUnitsOut(BaseModel):
    cpu_cores: float | None = Field(description="CPU cores used.")
    mem_gib: float | None = Field(description="Memory used, GiB.")
    net_mb_per_second: float | None = Field(description="Network rx + tx, MB/s (10^6 bytes).")
    disk_mb_per_second: float | None = Field(description="Disk read + write, MB/s (10^6 bytes).")


class SchedulerViewOut(BaseModel):
    current: SchedulerUnitsOut
    ewma: SchedulerUnitsOut
    window_mean: SchedulerUnitsOut
    window_max: SchedulerUnitsOut


class UsageReport(BaseModel):
    """GET /usage: the node's usage and its pods' usage at the last sample."""

    node_name: str = Field(description="Node name (NODE_NAME from the downward API, else hostname).")
    timestamp: float | None = Field(description="Unix time of the last sample; null before the first.")
    age_seconds: float | None = Field(description="Seconds since the last sample, by the agent's clock.")
    interval_seconds: float = Field(description="Sampling interval; rates are over this interval.")
    window: WindowOut
    cgroup_version: Literal["1", "2"] | None = Field(description="Cgroup version the pod usage came from.")
    node: NodeUsageOut
    scheduler_units: SchedulerViewOut = Field(description="cpu cores, mem GiB, net MB/s, disk MB/s for the extender.")
    pods: dict[str, PodUsageOut] = Field(description="Per-pod usage keyed by pod UID.")


class HealthOut(BaseModel):
    status: Literal["ok", "starting", "stale"]
    samples_total: int
    last_sample_age_seconds: float | None


def _stat(stat: Stat) -> StatOut:
    return StatOut(current=stat.current, ewma=stat.ewma, mean=stat.mean, max=stat.max)


def _scaled(value: float | None, unit: float) -> float | None:
    return None if value is None else value / unit


def _units(node: dict[str, Stat], attr: str) -> SchedulerUnitsOut:
    return SchedulerUnitsOut(
        cpu_cores=getattr(node["cpu_cores"], attr),
        mem_gib=_scaled(getattr(node["memory_bytes"], attr), GIB),
        net_mb_per_second=_scaled(getattr(node["net_bytes_per_second"], attr), MB),
        disk_mb_per_second=_scaled(getattr(node["disk_bytes_per_second"], attr), MB),
    )


def _pod(pod: PodSnapshot) -> PodUsageOut:
    return PodUsageOut(uid=pod.uid, qos=pod.qos, net_unavailable_reason=pod.net_note,
                       **{name: _stat(stat) for name, stat in pod.stats.items()})


def usage_report(snapshot: Snapshot, settings: MonitorSettings, *, now_mono: float) -> UsageReport:
    """Map the sampler's snapshot to the wire record."""
    node = snapshot.node
    return UsageReport(
        node_name=settings.node_name,
        timestamp=snapshot.timestamp,
        age_seconds=None if snapshot.mono is None else max(now_mono - snapshot.mono, 0.0),
        interval_seconds=settings.interval,
        window=WindowOut(samples=settings.window, filled=snapshot.window_filled,
                         seconds=settings.window_seconds(), ewma_alpha=settings.ewma_alpha),
        cgroup_version=snapshot.cgroup_version,
        node=NodeUsageOut(
            **{name: _stat(stat) for name, stat in node.items()},
            capacity_cores=snapshot.capacity_cores,
            capacity_memory_bytes=snapshot.capacity_memory_bytes,
            interfaces=list(snapshot.interfaces),
            disks=list(snapshot.disks),
        ),
        scheduler_units=SchedulerViewOut(
            current=_units(node, "current"), ewma=_units(node, "ewma"),
            window_mean=_units(node, "mean"), window_max=_units(node, "max"),
        ),
        pods={uid: _pod(pod) for uid, pod in snapshot.pods.items()},
    )
