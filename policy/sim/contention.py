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
(``scaled_capacity``); memory capacity is unchanged. Its monitor shows the slowdown: each unit of progress
costs it ``1 / factor`` of the resource (a throttled cpu, a noisy neighbour), so ``node_usage`` reports the
rate resources divided by the factor, and a saturated straggler reads as busy as it is, not idle.
"""

from __future__ import annotations

from collections.abc import Sequence

_EPS = 1e-12


def scaled_capacity(capacity: Sequence[float], factor: float) -> tuple[float, float, float, float]:
    """Capacity of a node slowed by ``factor`` (1 = healthy): cpu, net and disk scaled, memory kept."""
    return (capacity[0] * factor, capacity[1], capacity[2] * factor, capacity[3] * factor)


def fair_rates(demands: Sequence[Sequence[float]], capacity: Sequence[float]) -> list[float]:
    """Progress rate in [0, 1] of each job (``demands[j]`` = 4 values) on a node of ``capacity``."""
    k = len(demands)
    if k == 0:
        return []
    c0, c1, c2, c3 = capacity
    s0 = s1 = s2 = s3 = 0.0
    for d0, d1, d2, d3 in demands:
        s0 += d0
        s1 += d1
        s2 += d2
        s3 += d3
    thrash = c1 / s1 if s1 > c1 else 1.0
    if s0 <= c0 and s2 <= c2 and s3 <= c3:  # the common case: nothing saturates
        return [thrash] * k
    rates = [1.0] * k
    active = range(k)
    f0 = f2 = f3 = 0.0  # use of the frozen jobs
    w0, w2, w3 = s0, s2, s3  # demand of the active jobs at rate 1
    while active:
        level = 1.0
        if w0 > _EPS:
            level = min(level, (c0 - f0) / w0)
        if w2 > _EPS:
            level = min(level, (c2 - f2) / w2)
        if w3 > _EPS:
            level = min(level, (c3 - f3) / w3)
        if level >= 1.0:
            break  # every remaining job runs at full speed
        level = max(level, 0.0)
        sat0 = w0 > _EPS and f0 + level * w0 >= c0 * (1.0 - 1e-9)
        sat2 = w2 > _EPS and f2 + level * w2 >= c2 * (1.0 - 1e-9)
        sat3 = w3 > _EPS and f3 + level * w3 >= c3 * (1.0 - 1e-9)
        still = []
        for j in active:
            d0, _, d2, d3 = demands[j]
            if (sat0 and d0 > _EPS) or (sat2 and d2 > _EPS) or (sat3 and d3 > _EPS):
                rates[j] = level
                f0 += level * d0
                f2 += level * d2
                f3 += level * d3
                w0 -= d0
                w2 -= d2
                w3 -= d3
            else:
                still.append(j)
        if len(still) == len(active):  # only demands below _EPS saturate: stop rather than spin
            for j in still:
                rates[j] = level
            break
        active = still
        if still:  # re-sum rather than trust the subtractions, which can leave float residue
            w0 = w2 = w3 = 0.0
            for j in still:
                d0, _, d2, d3 = demands[j]
                w0 += d0
                w2 += d2
                w3 += d3
    if thrash < 1.0:
        rates = [x * thrash for x in rates]
    return rates


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
