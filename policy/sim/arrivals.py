"""When jobs arrive: seeded Poisson and bursty processes at a given load, and load rescaling of traces.

Why it exists: "load 0.9" must mean the same thing for every workload and cluster, so the definition lives
here once. The module owns no state; every draw comes from the caller's ``np.random.Generator``.

Load. A job's *dominant share* is ``max_r demand_r / C_r`` where ``C_r`` is the cluster's total capacity of
resource r (all four resources, true demand). Its *offered work* is ``work × dominant share`` — the fraction
of the whole cluster's bottleneck resource it would occupy for one second if it ran alone at full speed. For
an arrival rate λ (jobs/s) the offered load is

    load = λ · E[work · max_r(demand_r / C_r)]

so load 1.0 keeps the cluster's dominant resource exactly busy on average with perfect packing and no
contention; 0.6 leaves head-room; 1.2 and 1.5 are overloads (queues and contention grow during the run).
E[·] is the mean over the episode's own drawn jobs, so the realised load is exact for that sample.

``at-once`` submits every job at time 0 (a batch, as in SpeCon's experiments); load does not apply.

Bursty arrivals are on/off-modulated Poisson: exponential "on" periods (mean ``on``) at rate
λ·(on+off)/on alternate with silent exponential "off" periods (mean ``off``); the long-run rate stays λ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from policy.sim.errors import ConfigError
from policy.sim.jobs import JobSpec

ARRIVALS = ("poisson", "bursty", "at-once")


def offered_work(jobs: Sequence[JobSpec], total_capacity: Sequence[float]) -> float:
    """Mean of ``work × max_r(demand_r / total_capacity_r)`` over ``jobs`` (module doc)."""
    if not jobs:
        return 0.0
    cap = np.asarray(total_capacity, dtype=np.float64)
    dem = np.array([j.demand for j in jobs]) / cap
    return float(np.mean(np.array([j.work for j in jobs]) * dem.max(axis=1)))


def poisson_times(n: int, rate: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` arrival times of a Poisson process of ``rate`` jobs/s starting at 0."""
    return np.cumsum(rng.exponential(1.0 / rate, size=n))


def bursty_times(n: int, rate: float, rng: np.random.Generator, *, on: float = 30.0, off: float = 90.0) -> np.ndarray:
    """``n`` arrival times of an on/off-modulated Poisson process with long-run ``rate`` jobs/s."""
    if not (on > 0 and off >= 0):
        raise ConfigError("burst", f"on must be > 0 and off >= 0, got on={on} off={off}")
    busy = poisson_times(n, rate * (on + off) / on, rng)  # times measured in "on" seconds only
    out = np.empty(n)
    on_end, shift, i = 0.0, 0.0, 0
    while i < n:
        on_start = on_end
        on_end = on_start + rng.exponential(on)
        while i < n and busy[i] < on_end:
            out[i] = busy[i] + shift
            i += 1
        shift += rng.exponential(off) if off > 0 else 0.0
    return out


def with_arrivals(jobs: Sequence[JobSpec], kind: str, load: float, total_capacity: Sequence[float],
                  rng: np.random.Generator, *, on: float = 30.0, off: float = 90.0) -> list[JobSpec]:
    """Give ``jobs`` submit times from a ``kind`` process whose rate makes the offered load ``load``."""
    if kind not in ARRIVALS:
        raise ConfigError("arrival", f"unknown arrival process {kind!r}; known: {', '.join(ARRIVALS)}, trace")
    if not load > 0:
        raise ConfigError("load", f"must be > 0, got {load}")
    if kind == "at-once":
        return [replace(j, submit=0.0) for j in jobs]
    per_job = offered_work(jobs, total_capacity)
    if not jobs or per_job <= 0:
        return list(jobs)
    rate = load / per_job
    times = (poisson_times(len(jobs), rate, rng) if kind == "poisson"
             else bursty_times(len(jobs), rate, rng, on=on, off=off))
    return [replace(j, submit=float(t)) for j, t in zip(jobs, times, strict=True)]


def rescale_to_load(jobs: Sequence[JobSpec], load: float, total_capacity: Sequence[float]) -> list[JobSpec]:
    """Compress or stretch trace submit times (keeping order and the first at 0) so the offered load over the
    trace's span is ``load``. A trace with a zero span is returned with its first submit shifted to 0."""
    if not jobs:
        return []
    t0 = min(j.submit for j in jobs)
    span = max(j.submit for j in jobs) - t0
    if span <= 0:
        return [replace(j, submit=0.0) for j in jobs]
    actual = offered_work(jobs, total_capacity) * len(jobs) / span
    scale = actual / load
    return [replace(j, submit=(j.submit - t0) * scale) for j in jobs]
