"""Replaying one measured run in the simulator's contention model: each job's predicted run slowdown.

Why it exists: to say how wrong the simulator is, a real run is replayed with everything the scheduler and
the arrivals decided held fixed — the same nodes (their measured quotas), each job on its measured node
from its measured start — so that only the contention model is left to predict how long each job runs.

Units: cpu millicores → cores, memory MiB → GiB, Mbit/s → MB/s (``policy.state`` units). A job's work is
its measured solo runtime on that node type, and its demand is its use when alone, capped at the node's
capacity (alone on a 250m node a job cannot use more than 250m, and ``solo_s`` was measured that way), so
a job alone progresses at rate 1. Without ``links`` a node's link is no constraint (the lab's net jobs
stream to a sink in their own pod, never across the shaped link). Disk bandwidth is not in ``nodes.csv``:
every node gets ``disk_mbps``.

Jobs whose run cannot be compared (not exit 0, migrated, no solo runtime) still occupy their node from
their measured start to their measured finish (or the run's end), as background load. A ``cpu_quota*``
event sets the node's cpu capacity to its new quota from ``t_s`` on; other events (migrations, restores)
change nothing here. What the measuring host left to the nodes (``Machine``: a fixed amount, the measured
usage, or ``policy.calibrate.host``'s limits where the host held the nodes back) caps them on top of their
quotas, split between busy nodes in equal shares. How much work a node CPU-second does against the solo runs
(``speed``: ``policy.calibrate.host.system_speed``, from the system CPUs' recorded load) multiplies the
progress of compute jobs (``policy.labworld.COMPUTE_KINDS``: limited by CPU time, their node's quota or their
own cap), not their CPU use, so the sharing between jobs is unchanged; io and net jobs, paced by bandwidth,
keep their rates. The module owns no state.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from policy.calibrate.host import HELD_MARGIN_M, HostLimit
from policy.calibrate.labdata import LabEvent, LabJob, LabNode
from policy.labworld import COMPUTE_KINDS
from policy.sim.sharing import ContentionParams, shared_rates, water_fill

log = logging.getLogger(__name__)

DISK_MBPS = 200.0
"""Default per-node disk bandwidth for replays, MB/s (the simulator's ``standard`` node)."""
UNSHAPED_MBIT = 10_000.0
"""A node whose link is not shaped (``net_mbit`` 0) is given this many Mbit/s."""


@dataclass(frozen=True, slots=True)
class Machine:
    """What a replay must know about the machine the runs were measured on, which the simulator does not model."""

    disk_mbps: float = DISK_MBPS
    """Disk bandwidth of every node, MB/s (``nodes.csv`` has none)."""
    links: bool = True
    """Whether jobs' traffic crosses their node's shaped link (False: a sink in the pod, as the lab's net jobs)."""
    host_cpu_m: float | None = None
    """CPU the host leaves to all nodes together, millicores (None: unlimited). Nodes on one machine compete
    for its cores beyond their own quotas: busy nodes then get equal shares of this, each capped at its want."""
    cpu_bound: tuple[str, ...] = ()
    """Job kinds that would use a whole core (capped at the quota) if the host let them: their solo run is
    kept as CPU work (solo_s × use alone), so on a host less busy than at solo time a run can beat solo_s."""
    host_from_usage: bool = False
    """Take the host's CPU for the nodes from the run's measured usage instead: in each sample interval, what
    all nodes' pods used together, but never less than ``host_cpu_m`` (a monitor reads little while jobs
    start or sleep on I/O, which says nothing about what the host would have given them)."""
    host_held: str = ""
    """'' (off), 'total' or 'node': take the measured usage as the host's limit only in the samples where it
    shows the host held the nodes back (``policy.calibrate.host``), on all nodes together or per node."""
    held_margin_m: float = HELD_MARGIN_M
    """With ``host_held``: how many millicores the jobs running through a sample must have wanted beyond what
    their nodes used for the host to count as holding them back."""
    system_slowdown: float = 0.0
    """K of host speed ``sys:K``: a node CPU-second does ``1 − K · b`` of its solo-run work while the system
    CPUs are ``b`` busy (``policy.calibrate.host.system_speed``); 0: every CPU-second the same."""

    @property
    def host(self) -> str:
        """The host model as ``--host-cpu-m`` writes it."""
        if self.host_held:
            return f"{'node-held' if self.host_held == 'node' else 'held'}:{self.held_margin_m:g}"
        if self.host_from_usage:
            return "usage" if self.host_cpu_m is None else f"usage:{self.host_cpu_m:g}"
        return "none" if self.host_cpu_m is None else f"{self.host_cpu_m:g}"

    @property
    def speed(self) -> str:
        """The host speed model as ``--host-speed`` writes it."""
        return f"sys:{self.system_slowdown:g}" if self.system_slowdown else "none"


PLAIN = Machine()


@dataclass(frozen=True, slots=True)
class Prediction:
    """A scored job's measured and predicted run slowdown."""

    job: LabJob
    predicted: float

    @property
    def error(self) -> float:
        """Absolute error relative to the measurement: |predicted − measured| / measured."""
        return abs(self.predicted - self.job.run_slowdown) / self.job.run_slowdown


def capacity(node: LabNode, machine: Machine) -> list[float]:
    net = node.net_mbit if node.net_mbit > 0 and machine.links else UNSHAPED_MBIT
    return [node.cpu_quota_m / 1000.0, node.mem_mi / 1024.0, net / 8.0, machine.disk_mbps]


def demand(job: LabJob, cap: list[float], machine: Machine = PLAIN) -> tuple[tuple[float, ...], float]:
    """A job's demand vector and its work in seconds at that demand."""
    use = min(job.cpu_use_m / 1000.0, cap[0])
    cpu = min(1.0, cap[0]) if job.kind in machine.cpu_bound else use
    work = job.solo_s * use / cpu if cpu > 0 and math.isfinite(job.solo_s) else job.solo_s
    return (cpu, job.mem_use_mi / 1024.0, min(job.net_mbit / 8.0, cap[2]), min(job.io_mbps, cap[3])), work


def replay(jobs: list[LabJob], nodes: dict[str, LabNode], events: list[LabEvent], params: ContentionParams, *,
           machine: Machine = PLAIN, usage: list[tuple[float, float]] = (),
           limits: list[HostLimit] = (), speed: list[tuple[float, float]] = ()) -> list[Prediction]:
    """Predicted run slowdown of every scored job of one run (``jobs`` all of one seed/arm/variant); ``usage``
    (with ``machine.host_from_usage``) or ``limits`` (``policy.calibrate.host``) say what the host left,
    ``speed`` (time-ordered (t_s, factor) per interval ending then; none: 1) how fast its CPU-seconds were."""
    ran = [j for j in jobs if math.isfinite(j.start_s) and j.node in nodes]
    if not ran:
        return []
    end = max((j.finish_s for j in ran if math.isfinite(j.finish_s)), default=max(j.start_s for j in ran))
    caps = {n: capacity(node, machine) for n, node in nodes.items()}
    dem, work = zip(*(demand(j, caps[j.node], machine) for j in ran), strict=True)
    req = [(j.cpu_request_m / 1000.0, j.mem_request_mi / 1024.0) for j in ran]
    scored = [j.scored for j in ran]
    remaining = [w if s else math.inf for w, s in zip(work, scored, strict=True)]
    stop = [math.inf if s else (j.finish_s if math.isfinite(j.finish_s) else end)
            for j, s in zip(ran, scored, strict=True)]
    quota = sorted((e.t_s, e.node, e.quota_m) for e in events if e.quota_m is not None and e.node in caps)
    finish = [math.nan] * len(ran)
    t, qi = 0.0, 0
    present: set[int] = set()
    pending = sorted(range(len(ran)), key=lambda k: ran[k].start_s)
    pi = 0
    series = list(usage) if machine.host_from_usage else []
    si, li, vi = 0, 0, 0
    last_key, base = None, {}
    while pi < len(pending) or present:
        while qi < len(quota) and quota[qi][0] <= t:
            caps[quota[qi][1]][0] = quota[qi][2] / 1000.0
            qi += 1
        while si < len(series) and series[si][0] <= t:
            si += 1  # the sample that ends next covers the time from now to it
        while li < len(limits) and limits[li].t_s <= t:
            li += 1
        while vi < len(speed) and speed[vi][0] <= t:
            vi += 1
        # outside the samples the nearest interval holds
        factor = speed[min(vi, len(speed) - 1)][1] if speed else 1.0
        host = machine.host_cpu_m
        if si < len(series) and series[si][1] > 0:  # a zero sample says nothing (nodes idle, or no reading)
            host = max(series[si][1], machine.host_cpu_m or 0.0)
        node_m: dict[str, float] = {}
        if li < len(limits):
            host = limits[li].total_m if limits[li].total_m is not None else host
            node_m = dict(limits[li].nodes_m)
        while pi < len(pending) and ran[pending[pi]].start_s <= t:
            present.add(pending[pi])
            pi += 1
        # a new speed sample alone changes no share: reuse the shares (most steps, at one sample a second)
        key = (frozenset(present), qi, si, li)
        if key != last_key:
            base, last_key = _rates(present, ran, dem, req, caps, params, host, node_m), key
        rates = base
        if factor != 1.0:
            rates = {k: x * factor if ran[k].kind in COMPUTE_KINDS else x for k, x in rates.items()}
        nxt = min(ran[pending[pi]].start_s if pi < len(pending) else math.inf,
                  quota[qi][0] if qi < len(quota) else math.inf, series[si][0] if si < len(series) else math.inf,
                  limits[li].t_s if li < len(limits) else math.inf, speed[vi][0] if vi < len(speed) else math.inf)
        for k in present:
            nxt = min(nxt, stop[k], t + remaining[k] / rates[k] if rates[k] > 0 else math.inf)
        if not math.isfinite(nxt):
            raise RuntimeError(f"replay stalls at t={t:.1f}: jobs present with rate 0 and nothing to come")
        for k in present:
            remaining[k] -= rates[k] * (nxt - t)
        t = nxt
        for k in list(present):
            if stop[k] <= t + 1e-9 or remaining[k] <= 1e-9 * max(ran[k].solo_s, 1.0):
                present.discard(k)
                finish[k] = t
    return [Prediction(j, (finish[k] - j.start_s) / j.solo_s) for k, j in enumerate(ran) if scored[k]]


def _rates(present: set[int], ran: list[LabJob], dem, req, caps, params: ContentionParams,
           host_cpu_m: float | None, node_m: dict[str, float]) -> dict[int, float]:
    by_node: dict[str, list[int]] = {}
    for k in present:
        by_node.setdefault(ran[k].node, []).append(k)
    # a node the host held back gets what it was measured to use, never more than its quota
    node_caps = {n: [min(caps[n][0], node_m[n] / 1000.0), *caps[n][1:]] if n in node_m else caps[n] for n in by_node}
    if host_cpu_m is not None:
        want = {n: min(node_caps[n][0], sum(dem[k][0] for k in ks)) for n, ks in by_node.items()}
        if sum(want.values()) > host_cpu_m / 1000.0:
            got = water_fill(host_cpu_m / 1000.0, want, dict.fromkeys(want, 1.0))
            node_caps = {n: [min(node_caps[n][0], got[n]), *caps[n][1:]] for n in by_node}
    out = {}
    for node, ks in by_node.items():
        for k, x in zip(ks, shared_rates([dem[k] for k in ks], [req[k] for k in ks], node_caps[node], params),
                        strict=True):
            out[k] = x
    return out
