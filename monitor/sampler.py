"""The sampling loop: reads the host at a fixed interval and keeps the smoothed series.

``Sampler`` owns the only mutable state of the agent: the previous counter snapshots, one
``SeriesStats`` per node series and per pod series, and the sample/error counts. After each
sample it publishes an immutable ``Snapshot``; the HTTP handlers only ever read the latest
snapshot, so a request never sees a half-updated sample.

The loop is an asyncio task that stops when its ``stop`` event is set (no background
thread). A sample reads a few small files (well under a millisecond per file), so it runs
on the event loop rather than in a thread pool.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kube.logs import kv
from monitor.cgroupfs import CgroupReader
from monitor.counters import NODE_SERIES, POD_SERIES, NodeCounters, PodCounters, node_values, pod_values
from monitor.logs import OnceLogger
from monitor.node import NodeReader
from monitor.nodecgroup import CgroupNodeReader, node_devices
from monitor.rates import SeriesStats, Stat
from monitor.settings import MonitorSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PodSnapshot:
    uid: str
    qos: str
    stats: dict[str, Stat]
    net_note: str | None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the server shows: the latest sample's values and windows, and the agent's own counts."""

    timestamp: float | None
    mono: float | None
    node: dict[str, Stat]
    capacity_cores: float | None
    capacity_memory_bytes: int | None
    interfaces: tuple[str, ...]
    disks: tuple[str, ...]
    cgroup_version: str | None
    pods: dict[str, PodSnapshot]
    window_filled: int
    samples_total: int
    errors_total: dict[str, int] = field(default_factory=dict)
    last_duration_seconds: float | None = None


@dataclass(slots=True)
class _PodState:
    qos: str
    counters: PodCounters | None
    series: dict[str, SeriesStats]


class Sampler:
    """Samples the node and its pods; ``sample_once`` is one step, ``run`` the stoppable loop."""

    def __init__(self, settings: MonitorSettings, *, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self._clock = clock
        self._wall = wall
        once = OnceLogger(log)
        self._node_reader: NodeReader | CgroupNodeReader = NodeReader(
            proc_root=settings.proc_root, interfaces=settings.interfaces, disks=settings.disks, once=once
        )
        if settings.node_view == "cgroup":  # an emulated node: its own cgroup and bridge, not the host
            self._node_reader = CgroupNodeReader(
                root=settings.cgroup_root, version=settings.cgroup_version, path=settings.node_cgroup_path(),
                proc_root=settings.proc_root, net_devices=node_devices(settings.node_net_dev, settings.node_name),
                disks=settings.disks, once=once,
            )
        self._cgroups = CgroupReader(
            root=settings.cgroup_root, parent=settings.cgroup_parent, version=settings.cgroup_version,
            proc_root=settings.proc_root, pod_network=settings.pod_network, once=once,
        )
        self._once = once
        self._prev: NodeCounters | None = None
        self._node = {name: self._series() for name in NODE_SERIES}
        self._pods: dict[str, _PodState] = {}
        self._samples = 0
        self._errors: dict[str, int] = {}
        self._snapshot = Snapshot(None, None, {n: s.stat() for n, s in self._node.items()}, None, None, (), (),
                                  None, {}, 0, 0)

    def _series(self) -> SeriesStats:
        return SeriesStats(window=self.settings.window, alpha=self.settings.ewma_alpha)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def sample_once(self) -> Snapshot:
        """Read everything once, update the series and publish a new snapshot."""
        started = self._clock()
        cur, errors = self._node_reader.read(mono=started, wall=self._wall())
        for error in errors:
            self._errors[error.source] = self._errors.get(error.source, 0) + 1
            self._once.warn(f"source:{error.source}", "host source unavailable", error=error.detail)
        for source in ("proc_stat", "meminfo", "net_dev", "diskstats", "node_cgroup"):
            if source not in {e.source for e in errors}:
                self._once.clear(f"source:{source}")
        dt = started - self._prev.mono if self._prev is not None else 0.0
        for name, value in node_values(self._prev, cur).items():
            self._node[name].add(value)
        version = self._sample_pods(dt)
        self._prev = cur
        self._samples += 1
        self._snapshot = Snapshot(
            timestamp=cur.wall,
            mono=cur.mono,
            node={n: s.stat() for n, s in self._node.items()},
            capacity_cores=cur.ncpu,
            capacity_memory_bytes=cur.memory.total if cur.memory else None,
            interfaces=tuple(sorted(cur.net or ())),
            disks=tuple(sorted(cur.disk or ())),
            cgroup_version=version,
            pods={uid: PodSnapshot(uid, p.qos, {n: s.stat() for n, s in p.series.items()},
                                   p.counters.net_note if p.counters else None)
                  for uid, p in self._pods.items()},
            window_filled=self._node["memory_bytes"].filled,
            samples_total=self._samples,
            errors_total=dict(self._errors),
            last_duration_seconds=self._clock() - started,
        )
        return self._snapshot

    def _sample_pods(self, dt: float) -> str | None:
        version, cgroups = self._cgroups.discover()
        for gone in self._pods.keys() - cgroups.keys():
            log.info("pod cgroup gone", extra=kv(pod_uid=gone))
            del self._pods[gone]
        for uid, pod in cgroups.items():
            state = self._pods.get(uid)
            if state is None:
                log.info("pod cgroup found", extra=kv(pod_uid=uid, qos=pod.qos))
                state = self._pods[uid] = _PodState(pod.qos, None, {n: self._series() for n in POD_SERIES})
            counters = self._cgroups.read(pod, version or "2")
            for name, value in pod_values(state.counters, counters, dt).items():
                state.series[name].add(value)
            state.counters = counters
        return version

    async def run(self, stop: asyncio.Event) -> None:
        """Sample every ``interval`` seconds on a fixed schedule until ``stop`` is set.

        The first sample of the loop comes one interval after the call: the caller takes
        the startup sample, and a rate over a few milliseconds would be mostly noise.
        """
        interval = self.settings.interval
        next_at = self._clock() + interval
        while True:
            delay = next_at - self._clock()
            if delay < 0:  # fell behind (host stalled): skip the missed ticks rather than burst
                next_at = self._clock()
                delay = 0
            try:
                await asyncio.wait_for(stop.wait(), timeout=delay)
                return
            except TimeoutError:
                pass
            try:
                self.sample_once()
            except Exception:  # a bug in one sample must not end the loop; it shows in the log and errors_total
                self._errors["sampler"] = self._errors.get("sampler", 0) + 1
                log.exception("sample failed")
            next_at += interval
