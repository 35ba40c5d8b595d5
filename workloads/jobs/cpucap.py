"""A CPU cap for the compute jobs (``--cores``), so a job uses a fraction of a core, as most pods do.

After each unit the job sleeps just long enough that the CPU time its process has used never runs ahead
of ``cores * elapsed``. A job that gets less CPU than its cap (a busy node) never sleeps and simply runs
slower, so contention still shows; alone on a node with room it uses ``cores`` and no more. A resumed
process starts its own budget, like the io and net bandwidth cap.
"""

from __future__ import annotations

import time


class CpuCap:
    def __init__(self, cores: float, *, clock=time.monotonic, cpu=time.process_time, sleep=time.sleep) -> None:
        self.cores = cores
        self._clock, self._cpu, self._sleep = clock, cpu, sleep
        self._start: tuple[float, float] | None = None

    def account(self) -> None:
        """Call after each unit: block until the process is back under its cap (no-op when uncapped)."""
        if self.cores <= 0:
            return
        if self._start is None:
            self._start = (self._clock(), self._cpu())
            return
        wall0, cpu0 = self._start
        ahead = (self._cpu() - cpu0) / self.cores - (self._clock() - wall0)
        if ahead > 0:
            self._sleep(ahead)
