"""Reading one node agent's ``GET /usage`` (``monitor.models.UsageReport``) into policy units. Pure.

Node usage: ``scheduler_units.<stat>`` (``monitor_stat``, default ``ewma``) -- already cores, GiB, MB/s,
MB/s. Its time is the extender's receive time minus the agent's ``age_seconds``, so the nodes' clocks
never matter. ``node.capacity_cores`` (the cores the agent measured: the host's CPUs, or an emulated node's
CPU quota) rides along as ``NodeUsage.cpu_capacity``: the cache counts capacity lost below the node's
allocatable CPU as CPU in use (``kube.cache.NodeUsage.row``). Missing data, decided here:

* ``age_seconds`` null, or cpu / mem null: the agent has no sample yet -> ``no_data`` (node not updated).
* net or disk null (no interface / disk counted yet): 0 -- an unmeasured bandwidth counts as idle, so the
  node keeps its fresh cpu and memory instead of going stale as a whole.
* anything else malformed (not JSON, wrong types, negative, NaN) -> ``bad_response``; a report naming
  another node -> ``wrong_node`` (an address reused by another node's agent).

Pod readings (for learned profiles), from ``pods[uid]`` with the per-pod stat ``monitor_pod_stat``
(default ``mean``, the window mean): cpu ``cpu_cores``; memory ``memory_working_set_bytes`` (what the
node's MemAvailable-based usage also leaves out: reclaimable cache), else ``memory_bytes``; net rx + tx;
disk read + write. A field that is null or malformed is NaN (not measured); a pod with nothing
measured, or an entry of the wrong shape, is skipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from extender.profile_learning import PodSample
from extender.providers.reading import UsageReadError, json_object
from kube.cache import NodeUsage

NODE_STATS = ("current", "ewma", "window_mean", "window_max")
POD_STATS = ("current", "ewma", "mean", "max")
UNITS = ("cpu_cores", "mem_gib", "net_mb_per_second", "disk_mb_per_second")
GIB, MB = float(2**30), 1e6


class BadReport(UsageReadError):
    """A ``/usage`` body the extender cannot use; ``reason`` is the usage-error label."""


@dataclass(frozen=True, slots=True)
class AgentReading:
    node: str
    usage: NodeUsage
    pods: list[PodSample] = field(default_factory=list)
    skipped_pods: int = 0


def _number(value: Any) -> float | None:
    """A finite number >= 0, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) and value >= 0 else None


def _pod_stat(entry: dict, key: str, stat: str) -> float:
    block = entry.get(key)
    if not isinstance(block, dict):
        return math.nan
    value = _number(block.get(stat))
    return math.nan if value is None else value


def _pod_usage(entry: dict, stat: str) -> np.ndarray:
    cpu = _pod_stat(entry, "cpu_cores", stat)
    mem = _pod_stat(entry, "memory_working_set_bytes", stat)
    if math.isnan(mem):
        mem = _pod_stat(entry, "memory_bytes", stat)
    net = _pod_stat(entry, "net_rx_bytes_per_second", stat) + _pod_stat(entry, "net_tx_bytes_per_second", stat)
    disk = (_pod_stat(entry, "disk_read_bytes_per_second", stat)
            + _pod_stat(entry, "disk_write_bytes_per_second", stat))
    return np.array([cpu, mem / GIB, net / MB, disk / MB])


def _capacity(node: Any) -> float | None:
    """``node.capacity_cores``: None when absent or null; anything but a number > 0 is a bad report."""
    if node is None:
        return None
    if not isinstance(node, dict):
        raise BadReport("bad_response", f"node {type(node).__name__} is not an object")
    raw = node.get("capacity_cores")
    if raw is None:
        return None
    value = _number(raw)
    if not value:
        raise BadReport("bad_response", f"node.capacity_cores {raw!r} is not a number > 0")
    return value


def parse_report(body: bytes | str | dict, *, node: str, received_at: float, stat: str = "ewma",
                 pod_stat: str = "mean", with_pods: bool = True) -> AgentReading:
    """One agent's report as a node sample (+ pod readings); raises ``BadReport`` (see module docstring)."""
    body = json_object(body, BadReport)
    name = body.get("node_name")
    if not isinstance(name, str) or not name:
        raise BadReport("bad_response", "node_name missing")
    if name != node:
        raise BadReport("wrong_node", f"agent reports node {name!r}, expected {node!r}")
    raw_age = body.get("age_seconds")
    if raw_age is None:
        raise BadReport("no_data", "agent has no sample yet")
    age = _number(raw_age)
    if age is None:
        raise BadReport("bad_response", f"age_seconds {raw_age!r} is not a number >= 0")
    units_all = body.get("scheduler_units")
    units = units_all.get(stat) if isinstance(units_all, dict) else None
    if not isinstance(units, dict):
        raise BadReport("bad_response", f"scheduler_units.{stat} missing")
    values = []
    for i, key in enumerate(UNITS):
        raw = units.get(key)
        if raw is None:
            if i < 2:
                raise BadReport("no_data", f"scheduler_units.{stat}.{key} not measured yet")
            values.append(0.0)
            continue
        value = _number(raw)
        if value is None:
            raise BadReport("bad_response", f"scheduler_units.{stat}.{key} {raw!r} is not a number >= 0")
        values.append(value)
    ts = received_at - age
    usage = NodeUsage(*values, timestamp=ts, cpu_capacity=_capacity(body.get("node")))
    if not with_pods:
        return AgentReading(node=node, usage=usage)
    pods_raw = body.get("pods")
    pods, skipped = [], 0
    if isinstance(pods_raw, dict):
        for uid, entry in pods_raw.items():
            if not isinstance(entry, dict) or not isinstance(uid, str) or not uid:
                skipped += 1
                continue
            vec = _pod_usage(entry, pod_stat)
            if not np.isfinite(vec).any():
                skipped += 1
                continue
            pods.append(PodSample(uid=uid, node=node, usage=vec, timestamp=ts))
    elif pods_raw is not None:
        skipped = 1
    return AgentReading(node=node, usage=usage, pods=pods, skipped_pods=skipped)
