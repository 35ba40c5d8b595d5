"""A bandwidth cap for the io and net jobs (``--bandwidth`` MiB/s), so a copy behaves like a slow disk or link.

Sleeps just enough that bytes moved since the process started never run ahead of ``rate * elapsed``;
a resumed process starts its own budget, so the cap never "catches up" on work done by a predecessor.
"""

from __future__ import annotations

import time

MIB = 1024 * 1024


class Throttle:
    def __init__(self, mib_per_s: float, *, clock=time.monotonic, sleep=time.sleep) -> None:
        self.bytes_per_s = mib_per_s * MIB
        self._clock, self._sleep = clock, sleep
        self._start: float | None = None
        self._moved = 0

    def account(self, nbytes: int) -> None:
        """Record ``nbytes`` moved; block until the cap allows the next transfer."""
        if self.bytes_per_s <= 0:
            return
        if self._start is None:
            self._start = self._clock()
        self._moved += nbytes
        ahead = self._start + self._moved / self.bytes_per_s - self._clock()
        if ahead > 0:
            self._sleep(ahead)
