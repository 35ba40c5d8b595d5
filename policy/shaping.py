"""Potential-based reward shaping for ``ClusterEnv``: the same objective, with credit where it is due.

The plain slowdown reward charges each step with every job's lost progress between two decisions, most
of which no single placement caused, so a DQN learns from very noisy returns. The potential

    Phi(s) = the excess slowdown the jobs running in s will still accrue if no other pod arrives

is computed exactly by projecting each node forward with the simulator's own contention model
(``policy.sim.contention.fair_rates``) on the *true* demands. The shaped reward

    r' = r + Phi(s) - gamma * Phi(s')

is potential-based (Ng, Harada & Russell, 1999), so it keeps the optimal policy of the slowdown objective
(Phi is 0 once every job has finished), while each step's reward becomes, up to queueing and stragglers,
the marginal excess that *this* placement adds to the node it chose. The agent still observes only
stale usage and noisy expected demands: it learns what the true cost of a choice is from what it can see.

State owned: a per-node cache of projected trajectories, keyed by the node's job set, capacity and time
of its last change, so unchanged nodes cost a lookup per decision.
"""

from __future__ import annotations

import bisect

from policy.sim.contention import fair_rates
from policy.sim.fleet import Fleet

_EPS = 1e-12


def project(demands: list, remaining: list[float], inv_work: list[float],
            capacity) -> tuple[list[float], list[float]]:
    """Breakpoints (seconds from now) and the cumulative excess accrued at each, until every job finishes.

    Excess accrues at sum_j (1 - rate_j) / work_j; between two completions the rates are constant.
    """
    times, cum = [0.0], [0.0]
    dem, rem, inv = list(demands), [max(r, 0.0) for r in remaining], list(inv_work)
    t = total = 0.0
    while dem:
        rates = fair_rates(dem, capacity)
        if max(rates) <= _EPS:  # nothing can progress (zero capacity): no finite projection
            break
        dt = min(r / x for r, x in zip(rem, rates, strict=True) if x > _EPS)
        total += dt * sum((1.0 - x) * w for x, w in zip(rates, inv, strict=True))
        t += dt
        times.append(t)
        cum.append(total)
        keep = []
        for k, (r, x) in enumerate(zip(rem, rates, strict=True)):
            left = r - x * dt
            if left > 1e-9 * max(1.0, r):
                keep.append(k)
                rem[k] = left
        dem, rem, inv = [dem[k] for k in keep], [rem[k] for k in keep], [inv[k] for k in keep]
    return times, cum


def _remaining_excess(times: list[float], cum: list[float], elapsed: float) -> float:
    total = cum[-1]
    if elapsed <= 0.0:
        return total
    k = bisect.bisect_right(times, elapsed)
    if k >= len(times):
        return 0.0
    t0, t1, c0, c1 = times[k - 1], times[k], cum[k - 1], cum[k]
    return total - (c0 + (c1 - c0) * (elapsed - t0) / (t1 - t0))


class Potential:
    """Phi over a simulator's fleet, cached per node."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self._cache: dict[int, tuple[tuple, float, list[float], list[float]]] = {}

    def __call__(self, now: float) -> float:
        f = self.fleet
        phi = 0.0
        for i, jobs in enumerate(f.on_node):
            if not jobs:
                continue
            capacity, since = f.effective_capacity(i), f.last_change(i)
            key = (tuple(jobs), capacity, since)
            hit = self._cache.get(i)
            if hit is None or hit[0] != key:
                times, cum = project([f.demand[j] for j in jobs], [f.remaining[j] for j in jobs],
                                     [f.inv_work[j] for j in jobs], capacity)
                hit = (key, since, times, cum)
                self._cache[i] = hit
            phi += _remaining_excess(hit[2], hit[3], now - hit[1])
        return phi
