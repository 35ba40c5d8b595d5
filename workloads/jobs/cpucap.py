"""A CPU cap for the compute jobs (``--cores``), so a job uses a fraction of a core, as most pods do; and a cap that
alternates between two levels (``--cores-cycle``), for the lab's long-running tenants.

After each unit the job sleeps just long enough that the CPU time its process has used never runs ahead
of ``cores * elapsed``. A job that gets less CPU than its cap (a busy node) never sleeps and simply runs
slower, so contention still shows; alone on a node with room it uses ``cores`` and no more. A resumed
process starts its own budget, like the io and net bandwidth cap.

A cycle (``Cycle``: ``HIGH:LOW:PERIOD:HIGH_S:PHASE``) caps at ``HIGH`` cores while ``(t + PHASE) mod PERIOD <
HIGH_S`` and at ``LOW`` otherwise, ``t`` seconds after the process started: a service busy part of the time
(the lab's ``tenants`` scenario, ``policy.tenants.Tenant``, which draws the same five numbers). The budget starts
again at each edge, so CPU a busy node withheld in one phase is not made up in the next: the job's use follows
the cycle, never above it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Cycle:
    """A two-level cap in cores (module doc)."""

    high: float
    low: float
    period_s: float
    high_s: float
    phase_s: float

    @classmethod
    def parse(cls, text: str) -> Cycle:
        """``HIGH:LOW:PERIOD:HIGH_S:PHASE``; ``ValueError`` naming what is wrong."""
        parts = text.split(":")
        try:
            high, low, period, high_s, phase = (float(p) for p in parts)
        except ValueError:
            raise ValueError(f"{text!r} is not HIGH:LOW:PERIOD:HIGH_S:PHASE (five numbers)") from None
        if not (high > 0 and low > 0 and period > 0 and 0 < high_s < period and 0 <= phase and
                all(map(math.isfinite, (high, low, period, high_s, phase)))):
            raise ValueError(f"{text!r}: need HIGH, LOW, PERIOD > 0, 0 < HIGH_S < PERIOD and PHASE >= 0")
        return cls(high, low, period, high_s, phase)

    def segment(self, t: float) -> tuple[int, bool]:
        """Which stretch ``t`` seconds in falls in: (the cycle's number, busy or not)."""
        n, into = divmod(t + self.phase_s, self.period_s)
        return int(n), into < self.high_s

    def cores(self, t: float) -> float:
        return self.high if self.segment(t)[1] else self.low

    def until_edge(self, t: float) -> float:
        """Seconds from ``t`` to the next change of level."""
        into = (t + self.phase_s) % self.period_s
        return (self.high_s if into < self.high_s else self.period_s) - into


class CpuCap:
    def __init__(self, cores: float, *, cycle: Cycle | None = None, clock=time.monotonic, cpu=time.process_time,
                 sleep=time.sleep) -> None:
        self.cores = cores
        self.cycle = cycle
        self._clock, self._cpu, self._sleep = clock, cpu, sleep
        self._start: tuple[float, float] | None = None
        self._origin = clock()  # the cycle's t = 0: the process's start
        self._segment: tuple[int, bool] | None = None

    def account(self) -> None:
        """Call after each unit: block until the process is back under its cap (no-op when uncapped)."""
        cores = self.cores
        if self.cycle is not None:
            t = self._clock() - self._origin
            segment = self.cycle.segment(t)
            if segment != self._segment:  # an edge: the budget starts again at the new level
                self._segment, self._start = segment, None
            cores = self.cycle.cores(t)
        if cores <= 0:
            return
        if self._start is None:
            self._start = (self._clock(), self._cpu())
            return
        wall0, cpu0 = self._start
        ahead = (self._cpu() - cpu0) / cores - (self._clock() - wall0)
        if ahead > 0:
            if self.cycle is not None:  # never sleep past an edge: the level after it has its own budget
                ahead = min(ahead, self.cycle.until_edge(self._clock() - self._origin))
            self._sleep(ahead)
