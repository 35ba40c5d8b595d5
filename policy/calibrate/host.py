"""How much CPU the measuring host left to the nodes, per usage sample, judged from what the lab measured.

Why it exists: the lab's four nodes are cgroups with CPU quotas (2.25 cores together) on a two-core machine
that also runs the control plane, the kubelets and containerd (outside every quota), so a node can get less
than its quota, by an amount that changes with everything else on the machine and that the lab does not
record. The simulator has no such host: this is a replay-only model of the lab machine, never of the
clusters the policy serves. What the lab does record is each node's pods' CPU use per sample
(``usage.csv``) and which jobs were running (``jobs.csv``). Taking the measured use as the host's limit in
every sample (``Machine.host_from_usage``) also limits the nodes when they simply had less to do — a job
that had just finished, an io job sleeping on the disk — and the replay then starves jobs that are, in the
replay, still running. Here the measured use counts as a limit only where the measurement shows the host
held the nodes back: the jobs that ran through the whole sample interval wanted at least ``margin_m``
millicores more than their nodes used. Elsewhere the host is no limit.

A job's want is a core (capped at its node's quota) for the ``cpu_bound`` kinds, else its CPU use alone;
a node wants at most its quota. ``per_node`` limits each held-back node to its own measured use; otherwise
the nodes' summed use limits them together (the replay then splits it between busy nodes in equal shares,
as cgroup v1 ``cpu.shares`` of 1024 on every node does). A zero reading is no reading (the monitor missed
the sample), never a limit.

Under host isolation the nodes have their own CPU set and get their quotas in CPU time, but not always the
work per CPU-second their solo runs measured: in the isolated pilots whole-core jobs ran further below their
fair share the busier the *system* CPU set was (``results/policy/calibration/isolated/``), through what a
cpuset does not separate (caches, memory bandwidth, a physical core two vCPUs may share). ``system_speed``
models that from host state the lab records once a second (``system.csv``: the system CPUs' ``/proc/stat``
busy and idle ticks), never from the jobs' outcome: a CPU-second on the node CPUs does ``1 − K · b`` of its
solo-run work while the system CPUs are ``b`` busy. The module owns no state.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from policy.calibrate.labdata import LabEvent, LabJob, LabNode
from policy.errors import ConfigError

HELD_MARGIN_M = 25.0
"""Default ``margin_m``: the lab machine's, as the calibration file records it (``hosts: lab``, fitted on the
lab-quiet runs' seeds 1-2 among 0 to 300 millicores, per node or together, with the active contention set)."""


@dataclass(frozen=True, slots=True)
class HostLimit:
    """The host's limit over the sample interval ending at ``t_s``: on all nodes together (``total_m``,
    None: no limit) and on single nodes (``nodes_m``), millicores."""

    t_s: float
    total_m: float | None = None
    nodes_m: Mapping[str, float] = field(default_factory=dict)


def job_want_m(job: LabJob, quota_m: float, cpu_bound: Sequence[str]) -> float:
    """What a job would use if its node and the host let it, millicores."""
    return min(1000.0, quota_m) if job.kind in cpu_bound else min(job.cpu_use_m, quota_m)


def quotas_at(nodes: Mapping[str, LabNode], events: Sequence[LabEvent], t_s: float) -> dict[str, float]:
    """Each node's cpu quota in effect at ``t_s`` (``cpu_quota*`` events up to then applied in time order)."""
    quota = {n: node.cpu_quota_m for n, node in nodes.items()}
    for e in sorted((e for e in events if e.quota_m is not None and e.node in quota), key=lambda e: e.t_s):
        if e.t_s <= t_s:
            quota[e.node] = e.quota_m
    return quota


def held_back(jobs: Sequence[LabJob], nodes: Mapping[str, LabNode], events: Sequence[LabEvent],
              samples: Sequence[tuple[float, Mapping[str, float]]], *, cpu_bound: Sequence[str] = (),
              margin_m: float = HELD_MARGIN_M, per_node: bool = False) -> list[HostLimit]:
    """One ``HostLimit`` per sample of one run (``samples``: time-ordered (t_s, node -> measured cpu_m))."""
    out = []
    prev = 0.0
    for t, used in samples:
        quota = quotas_at(nodes, events, prev)
        want = dict.fromkeys(nodes, 0.0)
        for j in jobs:
            finish = j.finish_s if math.isfinite(j.finish_s) else math.inf
            if j.node in want and math.isfinite(j.start_s) and j.start_s <= prev and finish >= t:
                want[j.node] += job_want_m(j, quota[j.node], cpu_bound)
        want = {n: min(w, quota[n]) for n, w in want.items()}
        got = {n: used.get(n, 0.0) for n in nodes}
        if per_node:
            limits = {n: got[n] for n in nodes if got[n] > 0 and want[n] - got[n] >= margin_m}
            out.append(HostLimit(t, None, limits))
        else:
            total = sum(got.values())
            limited = total > 0 and sum(want.values()) - total >= margin_m
            out.append(HostLimit(t, total if limited else None))
        prev = t
    return out


def system_busy(ticks: Sequence[tuple[float, int, int]]) -> list[tuple[float, float]]:
    """The system CPUs' busy share per interval between consecutive reads: ``ticks`` time-ordered (t_s, busy
    ticks, idle ticks), cumulative and summed over the system CPUs; out (t_s at the interval's end, share). An
    interval in which no tick passed, or a counter went back, carries no reading and is left out."""
    out = []
    for (_, b0, i0), (t, b1, i1) in itertools.pairwise(ticks):
        busy, idle = b1 - b0, i1 - i0
        if busy >= 0 and idle >= 0 and busy + idle > 0:
            out.append((t, busy / (busy + idle)))
    return out


def system_speed(busy: Sequence[tuple[float, float]], slowdown: float) -> list[tuple[float, float]]:
    """Host ``sys:K``: per interval of ``system_busy``, (t_s at its end, ``1 − K · b``) with K = ``slowdown``,
    the work a node CPU-second does against the solo runs' (module doc)."""
    if not 0 <= slowdown < 1:
        raise ConfigError("slowdown", f"the system CPU's slowdown K must be in [0, 1), got {slowdown}")
    return [(t, 1.0 - slowdown * b) for t, b in busy]
