"""Learning a workload's expected demand from its earlier pods: the rule a deployment serves profiles by.

Why it exists: in a cluster the expected demand of a new pod is not its own true demand plus noise; it is
what the extender learned from the usage of earlier pods of the same workload, and a workload seen too
briefly has no profile at all (the pod is scored from its requests, ``demand_known`` 0). The simulator
learns profiles with this rule so training and evaluation see the profiles a deployment would.

The rule is the extender's (``extender/profile_learning.py``): each usage poll gives one sample per
workload (the mean over its pods' readings), folded in per resource by an EWMA whose weight depends on the
time since the last sample, starting as a cumulative mean::

    alpha = max(1 - 2 ** (-dt / half_life_s), 1 / n)        n = samples including this one
    demand = demand + alpha * (x - demand)

A profile is served once cpu and memory each have ``min_samples`` samples. Pure: numbers in, numbers out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

HALF_LIFE_S = 600.0
"""A reading's weight halves every this many seconds (the extender's default)."""
MIN_SAMPLES = 6
"""Samples before a profile is served (the extender's default: a minute of 10 s polls)."""


@dataclass(frozen=True, slots=True)
class Profile:
    """A workload's learned demand (cores, GiB, MB/s, MB/s) and how many samples each resource has had."""

    demand: tuple[float, float, float, float]
    samples: tuple[int, int, int, int]
    updated_at: float


def update(prev: Profile | None, x: np.ndarray, *, at: float, half_life_s: float = HALF_LIFE_S) -> Profile:
    """Fold one sample ``x`` (4,) taken at ``at`` into ``prev``; NaN or negative readings are skipped."""
    x = np.asarray(x, dtype=np.float64).reshape(4)
    if prev is None:
        demand, counts, dt = np.full(4, np.nan), np.zeros(4, dtype=np.int64), 0.0
    else:
        demand, counts = np.array(prev.demand), np.array(prev.samples, dtype=np.int64)
        dt = max(at - prev.updated_at, 0.0)
    ok = np.isfinite(x) & (x >= 0)
    n = counts + ok
    alpha = np.maximum(1.0 - 2.0 ** (-dt / half_life_s), 1.0 / np.maximum(n, 1))
    first = ok & (counts == 0)
    step = ok & ~first
    demand = np.where(first, x, demand)
    demand = np.where(step, demand + alpha * (np.where(ok, x, 0.0) - demand), demand)
    return Profile(tuple(map(float, demand)), tuple(map(int, n)),
                   at if prev is None else max(at, prev.updated_at))


def served_demand(profile: Profile | None, min_samples: int = MIN_SAMPLES) -> np.ndarray | None:
    """(4,) demand to serve, or ``None`` while cpu or memory has fewer than ``min_samples`` samples (net or
    disk under the minimum are served as 0)."""
    if profile is None or min(profile.samples[0], profile.samples[1]) < min_samples:
        return None
    demand = np.array(profile.demand)
    return np.where((np.array(profile.samples) >= min_samples) & np.isfinite(demand), demand, 0.0)
