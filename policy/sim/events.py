"""Events injected into a run: slow nodes (stragglers) and node failures.

Why it exists: the migration controller and a robust scheduler must be evaluated against nodes that slow
down or die, reproducibly. An event is an immutable record; the engine turns it into timed heap entries and
applies it. The module owns no state.

Effects (applied by ``policy.sim.engine``):
    ``Straggler(node, start, duration, factor)``: from ``start`` for ``duration`` seconds, the node's cpu,
        net and disk capacity is multiplied by ``factor`` (0 < factor <= 1), so every job on it slows through
        the contention model. Overlapping stragglers on one node multiply.
    ``NodeFailure(node, at, duration)``: at ``at`` the node goes down (not ready; no placements); every job
        on it goes back to its newest checkpoint (``SimConfig.checkpoint_interval``; none = from scratch) as a
        new pending pod (counted in ``RunResult.restarts``), and once placed restores for
        ``SimConfig.restore_cost`` seconds; its lost progress is added to ``RunResult.lost_work`` and to
        ``excess_integral`` at once so that the integral still sums to Σ(slowdown − 1). After ``duration``
        seconds (``inf`` = never) the node comes back empty.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from policy.sim.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Straggler:
    """Node ``node`` (index) runs at ``factor`` of its cpu/net/disk capacity during [start, start+duration)."""

    node: int
    start: float
    duration: float
    factor: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 < self.factor <= 1.0:
            raise ConfigError("events", f"straggler factor must be in (0, 1], got {self.factor}")
        if not (self.start >= 0 and self.duration > 0):
            raise ConfigError("events", f"straggler needs start >= 0 and duration > 0, got {self}")


@dataclass(frozen=True, slots=True)
class NodeFailure:
    """Node ``node`` (index) is down during [at, at+duration); its jobs restart elsewhere."""

    node: int
    at: float
    duration: float = math.inf

    def __post_init__(self) -> None:
        if not (self.at >= 0 and self.duration > 0):
            raise ConfigError("events", f"node failure needs at >= 0 and duration > 0, got {self}")


Event = Straggler | NodeFailure


def random_stragglers(n_nodes: int, horizon: float, rng: np.random.Generator, *, per_node: float = 0.1,
                      factor: float | tuple[float, float] = 0.3, duration: float = 120.0) -> list[Straggler]:
    """Each node independently becomes a straggler with probability ``per_node`` at a uniform time in
    [0, horizon), for ``duration`` seconds at ``factor`` speed (a ``(low, high)`` factor is drawn uniformly
    per straggler)."""
    hit = np.flatnonzero(rng.random(n_nodes) < per_node)
    starts = rng.uniform(0.0, horizon, size=hit.size)
    if isinstance(factor, tuple):
        factors = rng.uniform(factor[0], factor[1], size=hit.size)
        return [Straggler(int(i), float(s), duration, float(x)) for i, s, x in zip(hit, starts, factors, strict=True)]
    return [Straggler(int(i), float(s), duration, factor) for i, s in zip(hit, starts, strict=True)]
