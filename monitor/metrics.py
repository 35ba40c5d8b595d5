"""Prometheus exposition of the latest snapshot (``GET /metrics``).

A custom collector reads the sampler's snapshot at scrape time, so a pod that is gone is
gone from the next scrape (no stale label sets), and there is one place that names metrics.
A value that is not measured (``null`` in /usage) is left out rather than exported as NaN.
Window mean/max are not exported: Prometheus computes those itself (``avg_over_time``).

Metrics (all gauges unless noted; labels ``node`` and, per pod, ``pod_uid`` and ``qos``):

=============================================================  ==========================================
``drsched_monitor_node_cpu_cores`` / ``_ewma``                    CPU cores busy
``drsched_monitor_node_cpu_fraction`` / ``_ewma``                 busy fraction of all CPUs (0..1)
``drsched_monitor_node_memory_bytes`` / ``_ewma``                 MemTotal - MemAvailable
``drsched_monitor_node_memory_fraction`` / ``_ewma``              memory_bytes / MemTotal
``drsched_monitor_node_net_{rx,tx}_bytes_per_second`` / ``_ewma``  network rates over counted interfaces
``drsched_monitor_node_disk_{read,write}_bytes_per_second`` / ``_ewma``  disk rates over counted disks
``drsched_monitor_node_capacity_cores``, ``..._capacity_memory_bytes``  node capacity
``drsched_monitor_pod_cpu_cores``                                 per pod (pod_uid, qos)
``drsched_monitor_pod_memory_bytes``, ``..._memory_working_set_bytes``  per pod
``drsched_monitor_pod_{net_rx,net_tx,disk_read,disk_write}_bytes_per_second``  per pod
``drsched_monitor_pods``                                          pod cgroups seen at the last sample
``drsched_monitor_samples_total`` (counter)                       samples taken
``drsched_monitor_source_errors_total`` (counter, ``source``)     failed reads per source
``drsched_monitor_sample_duration_seconds``                       time the last sample took
``drsched_monitor_last_sample_timestamp_seconds``                 Unix time of the last sample
``drsched_monitor_process_*``                                     the agent's own CPU, memory, fds
=============================================================  ==========================================
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from monitor.counters import NODE_SERIES, POD_SERIES
from monitor.sampler import Snapshot

PREFIX = "drsched_monitor"

_NODE_HELP = {
    "cpu_cores": "CPU cores busy on the node.",
    "cpu_fraction": "Busy fraction of all node CPUs (0..1).",
    "memory_bytes": "Node memory used: MemTotal - MemAvailable, bytes.",
    "memory_fraction": "Node memory used / MemTotal (0..1).",
    "net_rx_bytes_per_second": "Bytes/s received on the counted interfaces.",
    "net_tx_bytes_per_second": "Bytes/s transmitted on the counted interfaces.",
    "net_bytes_per_second": "Bytes/s received + transmitted on the counted interfaces.",
    "disk_read_bytes_per_second": "Bytes/s read from the counted disks.",
    "disk_write_bytes_per_second": "Bytes/s written to the counted disks.",
    "disk_bytes_per_second": "Bytes/s read + written on the counted disks.",
}
_POD_HELP = {
    "cpu_cores": "CPU cores used by the pod cgroup.",
    "memory_bytes": "Memory charged to the pod cgroup, bytes.",
    "memory_working_set_bytes": "Pod memory minus inactive file cache, bytes.",
    "net_rx_bytes_per_second": "Bytes/s received in the pod network namespace.",
    "net_tx_bytes_per_second": "Bytes/s transmitted in the pod network namespace.",
    "disk_read_bytes_per_second": "Bytes/s read by the pod cgroup.",
    "disk_write_bytes_per_second": "Bytes/s written by the pod cgroup.",
}


class SnapshotCollector(Collector):
    """Yields the metric families of the snapshot ``get_snapshot`` returns at scrape time."""

    def __init__(self, get_snapshot: Callable[[], Snapshot], node_name: str, *, pods: bool = True) -> None:
        self._get = get_snapshot
        self._node = node_name
        self._pods = pods  # False: no per-pod series (a caller not allowed per-pod readings, monitor.access)

    def collect(self) -> Iterator[Metric]:
        snap = self._get()
        node = [self._node]
        for name in NODE_SERIES:
            stat = snap.node[name]
            for suffix, value, extra in (("", stat.current, ""), ("_ewma", stat.ewma, " EWMA.")):
                family = GaugeMetricFamily(f"{PREFIX}_node_{name}{suffix}", _NODE_HELP[name] + extra, labels=["node"])
                if value is not None:
                    family.add_metric(node, value)
                yield family
        for name, value, doc in (("capacity_cores", snap.capacity_cores, "CPUs on the node."),
                                 ("capacity_memory_bytes", snap.capacity_memory_bytes, "MemTotal, bytes.")):
            family = GaugeMetricFamily(f"{PREFIX}_node_{name}", doc, labels=["node"])
            if value is not None:
                family.add_metric(node, value)
            yield family
        for name in POD_SERIES:
            family = GaugeMetricFamily(f"{PREFIX}_pod_{name}", _POD_HELP[name], labels=["node", "pod_uid", "qos"])
            for uid, pod in (snap.pods if self._pods else {}).items():
                value = pod.stats[name].current
                if value is not None:
                    family.add_metric([self._node, uid, pod.qos], value)
            yield family
        yield GaugeMetricFamily(f"{PREFIX}_pods", "Pod cgroups seen at the last sample.", value=len(snap.pods))
        yield CounterMetricFamily(f"{PREFIX}_samples", "Samples taken.", value=snap.samples_total)
        errors = CounterMetricFamily(f"{PREFIX}_source_errors", "Failed reads per host source.", labels=["source"])
        for source, count in sorted(snap.errors_total.items()):
            errors.add_metric([source], count)
        yield errors
        if snap.last_duration_seconds is not None:
            yield GaugeMetricFamily(f"{PREFIX}_sample_duration_seconds", "Time the last sample took.",
                                    value=snap.last_duration_seconds)
        if snap.timestamp is not None:
            yield GaugeMetricFamily(f"{PREFIX}_last_sample_timestamp_seconds", "Unix time of the last sample.",
                                    value=snap.timestamp)


def build_registry(get_snapshot: Callable[[], Snapshot], node_name: str, *, pods: bool = True) -> CollectorRegistry:
    """A registry of its own (not the global default) holding the snapshot and process collectors."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(get_snapshot, node_name, pods=pods))
    ProcessCollector(namespace=PREFIX, registry=registry)
    return registry
