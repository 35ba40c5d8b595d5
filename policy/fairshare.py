"""Max-min fair progress rates of jobs sharing one node: the arithmetic of the contention model, alone.

Why it exists apart from ``policy.sim.contention`` (which owns the model, documents it and re-exports
this function): the ``lookahead`` scorer applies the same rule when it serves in the extender, and the
serving path must not load the simulator package. Pure: plain floats in, plain floats out, no numpy.

Job j alone uses ``d[j][r]`` of cpu, memory, net, disk (r = 0..3) and progresses at rate 1; at rate x it
uses ``x · d[j][r]`` of the rate resources cpu, net and disk. Rates rise together from 0 (progressive
filling); when a rate resource saturates, the jobs using it freeze at the current level; the others keep
rising until frozen or at 1. Memory is held whatever the speed: demand above capacity thrashes the node,
and every rate is multiplied by ``capacity / demand``.
"""

from __future__ import annotations

from collections.abc import Sequence

_EPS = 1e-12


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
