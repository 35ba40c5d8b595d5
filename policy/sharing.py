"""The contention model's parameters, and the rates of co-located jobs under any of them.

Why it exists: ``policy.sim.contention.fair_rates`` is one fixed rule (every job on a node rises to the same
rate until a resource saturates). Real nodes divide a saturated resource their own way: the kernel's CFS
splits a cgroup's CPU quota by ``cpu.shares``, which kubelet sets from each pod's cpu request; a shaped link
splits bandwidth roughly equally between flows. To compare those rules against measurements and fit them,
the rule is a parameter here, and ``ContentionParams()`` is today's rule exactly (``shared_rates`` then
calls ``fair_rates``). The module owns no state. It lives outside ``policy.sim`` (which re-exports it as
``policy.sim.sharing``) because shadow mode predicts a pod's slowdown with it in the extender, and the serving
path never loads the simulator (``policy.predicted``).

Model. Each rate resource r (cpu, net, disk) is divided by **weighted max-min fairness**: among the jobs
still rising, a resource's free capacity goes in proportion to a weight, no job taking more than it can use
at rate 1. The weight of job j is its demand ``d[j][r]`` (share ``rate``: equal rates, today's rule), 1
(``equal``: equal amounts, CFS with equal shares) or its cpu request to the power ``request_exponent``
(``requests``: ``cpu.shares`` when 1). Share ``none`` is no sharing loss at all: each job gets what it would
alone, up to the node's capacity (a job whose demand exceeds the node still runs at capacity / demand), however
many others use the resource: the "no contention" model, with node speed kept. Jobs are
frozen one at a time at their tightest resource (the least rate any resource would give them), and the
capacity they leave is shared again, so the result is work-conserving; with ``rate`` everywhere it is
``fair_rates``' progressive filling. Then, on a node with k jobs, every rate is multiplied by
``1 / (1 + interference · (k − 1))`` (cache, context switches, the host's other nodes), and by
``(capacity / demand) ** mem_exponent`` when memory is oversubscribed. ``*_efficiency`` scales a resource's
usable capacity (a quota enforced per 100 ms period is not a perfectly divisible core).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from policy.errors import ConfigError
from policy.fairshare import fair_rates

SHARES = ("rate", "equal", "requests", "none")
_EPS = 1e-12
_MIN_WEIGHT = 0.002  # kubelet's minimum cpu.shares (2 of 1024 per core) for a pod that requests no cpu


@dataclass(frozen=True, slots=True)
class ContentionParams:
    """How co-located jobs share a node. The defaults are the simulator's original rule."""

    cpu_share: str = "rate"
    """How saturated cpu is divided: ``rate`` (equal rates), ``equal`` (equal cores), ``requests`` or ``none`` (not
    divided: each job as if alone, capped by the node)."""
    net_share: str = "rate"
    """How saturated network bandwidth is divided (same choices)."""
    disk_share: str = "rate"
    """How saturated disk bandwidth is divided (same choices)."""
    cpu_efficiency: float = 1.0
    """Fraction of the cpu capacity the jobs can use together, in (0, 1]."""
    net_efficiency: float = 1.0
    """Fraction of the link bandwidth the jobs can use together, in (0, 1]."""
    interference: float = 0.0
    """Slowdown per co-located job, >= 0: rates × 1 / (1 + interference · (k − 1))."""
    mem_exponent: float = 1.0
    """Oversubscribed memory multiplies rates by (capacity / demand) ** this, >= 0."""
    request_exponent: float = 1.0
    """Under ``requests`` shares a job's weight is its request ** this, >= 0: 1 is ``cpu.shares`` exactly;
    below 1 the split is more even (single-threaded jobs on different cores only meet at the quota)."""

    def __post_init__(self) -> None:
        for name in ("cpu_share", "net_share", "disk_share"):
            if getattr(self, name) not in SHARES:
                raise ConfigError(name, f"unknown {getattr(self, name)!r}; known: {', '.join(SHARES)}")
        for name in ("cpu_efficiency", "net_efficiency"):
            if not 0 < getattr(self, name) <= 1:
                raise ConfigError(name, f"must be in (0, 1], got {getattr(self, name)}")
        if not (self.interference >= 0 and self.mem_exponent >= 0 and self.request_exponent >= 0):
            raise ConfigError("interference/mem_exponent/request_exponent", "must be >= 0, got "
                              f"{self.interference}, {self.mem_exponent}, {self.request_exponent}")

    @property
    def is_original(self) -> bool:
        """Whether these are the original rule's parameters (``fair_rates`` applies unchanged)."""
        return self == ORIGINAL

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


ORIGINAL = ContentionParams()


def _weight(share: str, demand: float, request: float, exponent: float) -> float:
    if share == "rate":
        return demand
    if share == "equal":
        return 1.0
    return max(request, _MIN_WEIGHT) ** exponent


def water_fill(free: float, caps: dict, weights: dict) -> dict:
    """Weighted water-filling of ``free`` among jobs with use ``caps`` at rate 1: each job's amount."""
    out: dict[int, float] = {}
    rest = dict(caps)
    while rest:
        w = sum(weights[j] for j in rest)
        level = free / w if w > _EPS else float("inf")
        capped = [j for j in rest if rest[j] <= level * weights[j]]
        if not capped:
            return {**out, **{j: level * weights[j] for j in rest}}
        for j in capped:
            out[j] = rest.pop(j)
            free -= out[j]
    return out


def shared_rates(demands: Sequence[Sequence[float]], requests: Sequence[Sequence[float]],
                 capacity: Sequence[float], params: ContentionParams = ORIGINAL) -> list[float]:
    """Progress rate in [0, 1] of each job (``demands[j]`` 4 values, ``requests[j]`` cpu and memory) on a
    node of ``capacity`` under ``params`` (module doc)."""
    k = len(demands)
    if k == 0:
        return []
    if params.is_original:
        return fair_rates(demands, capacity)
    cap = (capacity[0] * params.cpu_efficiency, capacity[2] * params.net_efficiency, capacity[3])
    shares = (params.cpu_share, params.net_share, params.disk_share)
    dem = [(d[0], d[2], d[3]) for d in demands]
    rates = [1.0] * k
    active = set(range(k))
    used = [0.0, 0.0, 0.0]
    while active:
        best: dict[int, float] = {j: 1.0 for j in active}
        for r in range(3):
            users = {j: dem[j][r] for j in active if dem[j][r] > _EPS}
            if shares[r] == "none":  # no one else's use counts: the node's capacity alone caps the job
                for j, d in users.items():
                    best[j] = min(best[j], cap[r] / d)
                continue
            if not users or sum(users.values()) <= cap[r] - used[r]:
                continue
            weights = {j: _weight(shares[r], dem[j][r], requests[j][0], params.request_exponent) for j in users}
            for j, amount in water_fill(max(cap[r] - used[r], 0.0), users, weights).items():
                best[j] = min(best[j], amount / users[j])
        low = min(best.values())
        if low >= 1.0 - 1e-12:
            break  # nothing left saturates: the rest run at full speed
        for j in [j for j in active if best[j] <= low * (1 + 1e-9)]:
            rates[j] = low
            active.discard(j)
            for r in range(3):
                used[r] += low * dem[j][r]
    slow = 1.0 / (1.0 + params.interference * (k - 1))
    mem = sum(d[1] for d in demands)
    if mem > capacity[1]:
        slow *= (capacity[1] / mem) ** params.mem_exponent
    return [x * slow for x in rates]
