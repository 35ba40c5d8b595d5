"""PromQL for node usage over node-exporter metrics, result parsing and node mapping. Pure.

Default queries (``DEFAULT_QUERIES``; each can be replaced by ``prometheus_queries: {cpu: ..., ...}``).
``$label`` is ``prometheus_node_label`` (default ``instance``) and ``$window`` is
``prometheus_rate_window`` (default ``1m``; keep it at least 4 scrape intervals). Every query returns
one series per node, in policy units:

* ``cpu`` cores busy: ``rate(node_cpu_seconds_total)`` summed over CPUs and modes except idle, iowait
  and steal (the monitor's rule: iowait is idle time, steal is not ours).
* ``mem`` GiB: ``node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes``.
* ``net`` MB/s: receive + transmit rates, leaving out ``lo`` and virtual devices (veth, bridges, CNI and
  tunnel devices, see ``NET_EXCLUDE``), so pod traffic is counted once, on the uplink.
* ``disk`` MB/s: read + written rates of whole disks: node-exporter already drops partitions, ram, loop
  and fd; ``DISK_EXCLUDE`` also drops device-mapper, md and sr devices so no byte counts twice.
* ``timestamp``: the time of the node's last scrape, so a node whose exporter stopped reporting ages
  like a silent agent (without it a sample is as old as the query).

Node mapping (``InstanceMapper``), first match wins, for the value ``v`` of ``$label``:
``prometheus_instance_map[v]``, then ``prometheus_instance_map[host(v)]``, then ``v`` or ``host(v)`` is a
node name, then ``host(v)`` is an address of a node (its InternalIP / ExternalIP / Hostname, cluster mode).
``host()`` cuts the ``:port`` (``10.0.0.5:9100`` -> ``10.0.0.5``, ``[fd00::1]:9100`` -> ``fd00::1``).
A series that maps to no node is ``unmapped`` (counted, never guessed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from extender.providers.reading import UsageReadError, json_object
from kube.cache import NodeUsage

RESOURCE_QUERIES = ("cpu", "mem", "net", "disk")
QUERY_KEYS = (*RESOURCE_QUERIES, "timestamp")
NET_EXCLUDE = ("lo|veth.*|docker.*|br-.*|virbr.*|cni.*|flannel.*|cali.*|cilium.*|lxc.*|vxlan.*|genev.*|tun.*"
               "|tap.*|kube-.*|nodelocaldns.*|dummy.*|wg.*")
DISK_EXCLUDE = "loop.*|ram.*|zram.*|fd.*|dm-.*|md.*|sr.*|nbd.*"
_NET = f'device!~"{NET_EXCLUDE}"'
_DISK = f'device!~"{DISK_EXCLUDE}"'
DEFAULT_QUERIES: dict[str, str] = {
    "cpu": 'sum by ($label) (rate(node_cpu_seconds_total{mode!~"idle|iowait|steal"}[$window]))',
    "mem": "sum by ($label) (node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes) / 1073741824",
    "net": (f"sum by ($label) (rate(node_network_receive_bytes_total{{{_NET}}}[$window])"
            f" + rate(node_network_transmit_bytes_total{{{_NET}}}[$window])) / 1e6"),
    "disk": (f"sum by ($label) (rate(node_disk_read_bytes_total{{{_DISK}}}[$window])"
             f" + rate(node_disk_written_bytes_total{{{_DISK}}}[$window])) / 1e6"),
    "timestamp": "max by ($label) (timestamp(node_memory_MemAvailable_bytes))",
}


class PromError(UsageReadError):
    """A query answer the provider cannot use; ``reason`` is the usage-error label."""


def render(query: str, *, label: str, window: str) -> str:
    return query.replace("$label", label).replace("$window", window)


def queries(overrides: Mapping[str, str], *, label: str, window: str) -> dict[str, str]:
    """The effective, rendered queries (overrides replace defaults key by key; '' drops ``timestamp``)."""
    merged = {**DEFAULT_QUERIES, **overrides}
    return {k: render(q, label=label, window=window) for k, q in merged.items() if q}


@dataclass(frozen=True, slots=True)
class Vector:
    values: dict[str, float]          # node label value -> value (finite only)
    eval_ts: float | None             # Prometheus's evaluation time
    skipped: int                      # series without the label or with a non-finite value


def parse_vector(body: bytes | str | dict, *, label: str) -> Vector:
    """An instant-query answer (``/api/v1/query``) as label value -> value; raises ``PromError``."""
    body = json_object(body, PromError)
    if body.get("status") == "error":
        raise PromError("query_error", f"{body.get('errorType', '')}: {str(body.get('error', ''))[:200]}")
    data = body.get("data")
    if body.get("status") != "success" or not isinstance(data, dict):
        raise PromError("bad_response", "no 'status: success' with 'data'")
    if data.get("resultType") != "vector" or not isinstance(data.get("result"), list):
        raise PromError("bad_response", f"expected an instant vector, got {data.get('resultType')!r}")
    values: dict[str, float] = {}
    eval_ts, skipped = None, 0
    for item in data["result"]:
        metric = item.get("metric") if isinstance(item, dict) else None
        pair = item.get("value") if isinstance(item, dict) else None
        if not isinstance(metric, dict) or not isinstance(pair, list) or len(pair) != 2:
            raise PromError("bad_response", "a result is not {metric, value: [time, string]}")
        try:
            ts, value = float(pair[0]), float(pair[1])
        except (TypeError, ValueError):
            raise PromError("bad_response", f"value {pair!r} is not [time, number]") from None
        key = metric.get(label)
        if not isinstance(key, str) or not key or not math.isfinite(value):
            skipped += 1
            continue
        eval_ts = ts
        values[key] = values.get(key, 0.0) + value
    return Vector(values=values, eval_ts=eval_ts, skipped=skipped)


def host_of(value: str) -> str:
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else value
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value


class InstanceMapper:
    """Label value -> node name by the module's rule."""

    def __init__(self, explicit: Mapping[str, str], nodes: Iterable[str],
                 addresses: Mapping[str, str] | None = None) -> None:
        self.explicit, self.nodes, self.addresses = explicit, set(nodes), addresses or {}

    def node_for(self, value: str) -> str | None:
        host = host_of(value)
        for candidate in (self.explicit.get(value), self.explicit.get(host)):
            if candidate:
                return candidate
        for candidate in (value, host):
            if candidate in self.nodes:
                return candidate
        return self.addresses.get(host)


def combine(vectors: Mapping[str, Vector], *, mapper: InstanceMapper, now: float
            ) -> tuple[dict[str, NodeUsage], list[str]]:
    """Node samples from the per-query vectors, and the label values that mapped to no node.

    cpu and mem are required per node (a node missing either is left out: ``no_data``); net or disk
    missing count as 0. Sample time: ``now - (eval time - last scrape)`` with the ``timestamp`` query,
    else ``now``.
    """
    by_node: dict[str, dict[str, float]] = {}
    unmapped: set[str] = set()
    stamps: dict[str, float] = {}
    for key, vec in vectors.items():
        for value, x in vec.values.items():
            node = mapper.node_for(value)
            if node is None:
                unmapped.add(value)
                continue
            if key == "timestamp":
                if vec.eval_ts is not None:
                    stamps[node] = max(stamps.get(node, -math.inf), now - max(vec.eval_ts - x, 0.0))
                continue
            slot = by_node.setdefault(node, {})
            slot[key] = slot.get(key, 0.0) + max(x, 0.0)
    out = {}
    for node, v in by_node.items():
        if "cpu" not in v or "mem" not in v:
            continue
        out[node] = NodeUsage(v["cpu"], v["mem"], v.get("net", 0.0), v.get("disk", 0.0),
                              timestamp=stamps.get(node, now))
    return out, sorted(unmapped)
