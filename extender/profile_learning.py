"""The learning rule for workload demand profiles. Pure: numbers in, numbers out, no clock, no I/O.

A *profile* is a workload's expected demand per pod, in policy units (cores, GiB, MB/s, MB/s), learned
from the per-pod readings the node agents report. Each usage poll gives, per pod, one reading (the
agent's window mean by default, ``monitor_pod_stat``); the rule is:

1. **Over pods** (``aggregate``): the readings of one workload's pods in one poll are averaged per
   resource, ignoring the fields an agent could not measure (NaN: e.g. network of a hostNetwork pod).
   That mean is one *sample* of the workload.
2. **Over time** (``update``): per resource, an EWMA whose weight depends on the time since the last
   update, with a cumulative-mean start so the first reading does not dominate::

       alpha = max(1 - 2 ** (-dt / half_life_s), 1 / n)        n = samples including this one
       demand = demand + alpha * (x - demand)

   With ``1/n`` the first ``~1/alpha`` samples are a plain mean; after that a reading's weight halves
   every ``half_life_s`` seconds (default 600 s), however irregular the polls are.
3. **Trust** (``served_demand``): a profile is served only once cpu and memory each have at least
   ``min_samples`` samples (default 6: a minute of 10 s polls). Net or disk with fewer samples are
   served as 0, like a key left out of the ``drsched.io/profile`` annotation.

Profiles are values (frozen); ``update`` returns a new one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

N_RESOURCES = 4


@dataclass(frozen=True, slots=True)
class PodSample:
    """One pod's reading from one agent poll; ``usage`` is (4,) policy units, NaN where not measured."""

    uid: str
    node: str
    usage: np.ndarray
    timestamp: float


@dataclass(frozen=True, slots=True)
class Profile:
    """A workload's learned demand. ``demand`` is NaN for a resource with no sample yet."""

    demand: tuple[float, float, float, float]
    samples: tuple[int, int, int, int]
    first_seen: float
    updated_at: float
    pods: int = 0                   # pods averaged in the last sample

    def as_dict(self) -> dict:
        return {"demand": [None if not np.isfinite(d) else round(d, 6) for d in self.demand],
                "samples": list(self.samples), "first_seen": self.first_seen, "updated_at": self.updated_at,
                "pods": self.pods}


def aggregate(samples: Iterable[PodSample], workload_of: Callable[[str], str | None]
              ) -> dict[str, tuple[np.ndarray, int, float]]:
    """Workload -> (per-resource mean over its pods (NaN where no pod measured it), pods, newest time).

    Pods whose UID maps to no workload (standalone pods, pods not in the index yet) are left out.
    """
    groups: dict[str, list[PodSample]] = {}
    for s in samples:
        key = workload_of(s.uid)
        if key is not None:
            groups.setdefault(key, []).append(s)
    out = {}
    for key, group in groups.items():
        rows = np.array([np.asarray(s.usage, dtype=np.float64).reshape(N_RESOURCES) for s in group])
        measured = np.isfinite(rows)
        counts = measured.sum(axis=0)
        sums = np.where(measured, rows, 0.0).sum(axis=0)
        mean = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        out[key] = (mean, len(group), max(s.timestamp for s in group))
    return out


def update(prev: Profile | None, x: np.ndarray, *, pods: int, at: float, half_life_s: float) -> Profile:
    """Fold one sample ``x`` (4,) taken at ``at`` into ``prev`` by the module's rule."""
    x = np.asarray(x, dtype=np.float64).reshape(N_RESOURCES)
    if prev is None:
        demand = np.full(N_RESOURCES, np.nan)
        counts = np.zeros(N_RESOURCES, dtype=np.int64)
        first, dt = at, 0.0
    else:
        demand = np.array(prev.demand, dtype=np.float64)
        counts = np.array(prev.samples, dtype=np.int64)
        first, dt = prev.first_seen, max(at - prev.updated_at, 0.0)
    ok = np.isfinite(x) & (x >= 0)
    n = counts + ok
    time_alpha = 1.0 - 2.0 ** (-dt / half_life_s)
    alpha = np.maximum(time_alpha, 1.0 / np.maximum(n, 1))
    fresh = ok & (counts == 0)
    demand = np.where(fresh, x, demand)
    step = ok & ~fresh
    demand = np.where(step, demand + alpha * (np.where(ok, x, 0.0) - demand), demand)
    updated = at if prev is None else max(at, prev.updated_at)
    return Profile(demand=tuple(float(d) for d in demand), samples=tuple(int(c) for c in n),
                   first_seen=first, updated_at=updated, pods=int(pods))


def trusted(profile: Profile, min_samples: int) -> bool:
    """Cpu and memory each have ``min_samples`` samples."""
    return profile.samples[0] >= min_samples and profile.samples[1] >= min_samples


def served_demand(profile: Profile, min_samples: int) -> np.ndarray | None:
    """(4,) demand to serve, or None while the profile is not trusted (net/disk under the minimum: 0)."""
    if not trusted(profile, min_samples):
        return None
    demand = np.array(profile.demand, dtype=np.float64)
    enough = np.array(profile.samples) >= min_samples
    return np.where(enough & np.isfinite(demand), demand, 0.0)
