"""The contention model: how fast each job on one node progresses when their demands collide.

Why it exists: it is the one formula the whole simulator's realism hangs on, so it lives alone, is pure
(plain floats in, plain floats out, no numpy on the hot path) and is table-tested, ready to be calibrated
against real processes. It owns no state. The max-min fair rule itself is ``policy.fairshare.fair_rates``
(re-exported here), so the serving path's ``lookahead`` scorer can use it without loading the simulator.

Model. Job j alone uses ``d[j][r]`` of resource r and progresses at rate 1 (work seconds per second). At
rate x it uses ``x · d[j][r]`` of the *rate* resources cpu, net and disk. Rates are **max-min fair by
progressive filling**: every job's rate rises together from 0; when a resource reaches its capacity, the
jobs using it (d > 0) freeze at the current level; the others keep rising until every job is frozen or at
rate 1. This is work-conserving per resource: a job throttled by disk only takes the cpu it can use, and
the cpu it leaves goes to the others. A job progresses at the rate of its most-starved resource because it
freezes at the first resource that saturates among those it uses.

Memory is not shared by rate: a job holds its memory whatever its speed. If the memory demand on a node
exceeds capacity, the node thrashes and **every** job's rate is multiplied by ``capacity / demand``
(reported memory use is then capped at capacity).

A straggler (slow node) multiplies the rate capacities by its factor before calling ``fair_rates``
(``scaled_capacity``); memory capacity is unchanged. Its monitor shows the slowdown: each unit of progress
costs it ``1 / factor`` of the resource (a throttled cpu, a noisy neighbour), so ``node_usage`` reports the
rate resources divided by the factor, and a saturated straggler reads as busy as it is, not idle.
"""

from __future__ import annotations

from collections.abc import Sequence

from policy.fairshare import fair_rates as fair_rates  # the rule itself; re-exported for the simulator


def scaled_capacity(capacity: Sequence[float], factor: float) -> tuple[float, float, float, float]:
    """Capacity of a node slowed by ``factor`` (1 = healthy): cpu, net and disk scaled, memory kept."""
    return (capacity[0] * factor, capacity[1], capacity[2] * factor, capacity[3] * factor)


def node_usage(demands: Sequence[Sequence[float]], rates: Sequence[float],
               capacity: Sequence[float], factor: float = 1.0) -> tuple[float, float, float, float]:
    """What a monitor measures on the node: Σ rate·demand / factor for cpu/net/disk (``factor`` < 1 on a
    straggler), memory held; each capped at the nominal ``capacity``."""
    u0 = u1 = u2 = u3 = 0.0
    for d, x in zip(demands, rates, strict=True):
        u0 += x * d[0]
        u1 += d[1]
        u2 += x * d[2]
        u3 += x * d[3]
    if factor != 1.0:
        u0, u2, u3 = u0 / factor, u2 / factor, u3 / factor
    return (min(u0, capacity[0]), min(u1, capacity[1]), min(u2, capacity[2]), min(u3, capacity[3]))
