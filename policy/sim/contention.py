"""The contention model: how fast each job on one node progresses when their demands collide.

Why it exists: it is the one formula the whole simulator's realism hangs on, so it lives alone, is pure
(plain floats in, plain floats out, no numpy on the hot path) and is table-tested, ready to be calibrated
against real processes. It owns no state.

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
(``scaled_capacity``); memory capacity is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

RATE_RESOURCES = (0, 2, 3)  # cpu, net, disk in policy.state.RESOURCES order
MEM = 1
_EPS = 1e-12


def scaled_capacity(capacity: Sequence[float], factor: float) -> tuple[float, float, float, float]:
    """Capacity of a node slowed by ``factor`` (1 = healthy): cpu, net and disk scaled, memory kept."""
    return (capacity[0] * factor, capacity[1], capacity[2] * factor, capacity[3] * factor)


def fair_rates(demands: Sequence[Sequence[float]], capacity: Sequence[float]) -> list[float]:
    """Progress rate in [0, 1] of each job (``demands[j]`` = 4 values) on a node of ``capacity``."""
    k = len(demands)
    if k == 0:
        return []
    c0, c1, c2, c3 = capacity[0], capacity[1], capacity[2], capacity[3]
    s0 = s1 = s2 = s3 = 0.0
    for d in demands:
        s0 += d[0]
        s1 += d[1]
        s2 += d[2]
        s3 += d[3]
    thrash = c1 / s1 if s1 > c1 else 1.0
    if s0 <= c0 and s2 <= c2 and s3 <= c3:  # the common case: nothing saturates
        return [thrash] * k
    caps = (c0, c2, c3)
    rates = [1.0] * k
    active = list(range(k))
    frozen_use = [0.0, 0.0, 0.0]
    while active:
        level = 1.0
        wants = [0.0, 0.0, 0.0]
        for i, r in enumerate(RATE_RESOURCES):
            want = 0.0
            for j in active:
                want += demands[j][r]
            wants[i] = want
            if want > _EPS:
                t = (caps[i] - frozen_use[i]) / want
                if t < level:
                    level = t
        if level >= 1.0:
            break  # every remaining job runs at full speed
        level = max(level, 0.0)
        saturated = [r for i, r in enumerate(RATE_RESOURCES)
                     if wants[i] > _EPS and frozen_use[i] + level * wants[i] >= caps[i] * (1.0 - 1e-9)]
        still = []
        for j in active:
            d = demands[j]
            if any(d[r] > _EPS for r in saturated):
                rates[j] = level
                for i, r in enumerate(RATE_RESOURCES):
                    frozen_use[i] += level * d[r]
            else:
                still.append(j)
        if len(still) == len(active):  # only demands below _EPS saturate: stop rather than spin
            for j in still:
                rates[j] = level
            break
        active = still
    if thrash < 1.0:
        rates = [x * thrash for x in rates]
    return rates


def node_usage(demands: Sequence[Sequence[float]], rates: Sequence[float],
               capacity: Sequence[float]) -> tuple[float, float, float, float]:
    """What a monitor measures on the node: Σ rate·demand for cpu/net/disk, memory held capped at capacity."""
    u0 = u1 = u2 = u3 = 0.0
    for d, x in zip(demands, rates, strict=True):
        u0 += x * d[0]
        u1 += d[1]
        u2 += x * d[2]
        u3 += x * d[3]
    return (min(u0, capacity[0]), min(u1, capacity[1]), min(u2, capacity[2]), min(u3, capacity[3]))
