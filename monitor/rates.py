"""Pure rate and window math: cumulative counters to per-second rates, and smoothing.

Kernel counters only grow, except when they are reset (an interface re-created, a cgroup
re-created under the same name, a 32-bit counter wrapping on an old kernel). The rule
here: a counter that went backwards gives *no* rate for that interval (``None``), never a
negative or a made-up one; the next interval measures from the new value. With several
counters (interfaces, disks) the reset ones are left out of the sum and the rest count.

``SeriesStats`` owns the state of one series: the last value, an EWMA and the last N
values for the window mean and max.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass


def counter_rate(prev: int, cur: int, dt: float) -> float | None:
    """Per-second rate of a cumulative counter over ``dt`` seconds; ``None`` on reset or dt <= 0."""
    if dt <= 0 or cur < prev:
        return None
    return (cur - prev) / dt


def summed_rate(prev: Mapping[str, int], cur: Mapping[str, int], dt: float) -> float | None:
    """Sum of per-key rates over the keys present in both samples.

    A key that reset is left out; a key that appeared or vanished between the samples
    has no rate this interval. ``None`` when no key gives a rate (nothing to measure).
    """
    rates = [counter_rate(prev[k], cur[k], dt) for k in cur.keys() & prev.keys()]
    valid = [r for r in rates if r is not None]
    return sum(valid) if valid else None


def ratio(part: float | None, whole: float | None) -> float | None:
    """``part / whole`` or ``None`` when either is missing or ``whole`` is not positive."""
    if part is None or whole is None or whole <= 0:
        return None
    return part / whole


@dataclass(frozen=True, slots=True)
class Stat:
    """One series at one instant: the last value, its EWMA and the window mean and max."""

    current: float | None
    ewma: float | None
    mean: float | None
    max: float | None


class SeriesStats:
    """Last value, EWMA (weight ``alpha`` on the newest value) and mean/max of the last ``window`` values.

    ``add(None)`` records a missing sample: ``current`` becomes ``None`` while the EWMA and
    the window keep what they had, so one failed read does not erase the history.

    ``add`` and ``stat`` are O(1) amortised (a running sum, and a deque of candidate maxima
    in decreasing order), since every pod has several series and the agent budget is <1 %
    of a core.
    """

    __slots__ = ("_alpha", "_window", "_values", "_maxima", "_sum", "_count", "_current", "_ewma")

    def __init__(self, *, window: int, alpha: float) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha must be in (0, 1], got {alpha}")
        self._alpha = alpha
        self._window = window
        self._values: deque[float] = deque()
        self._maxima: deque[tuple[int, float]] = deque()  # (sequence number, value), values decreasing
        self._sum = 0.0
        self._count = 0  # values ever added; the sequence number of the next one
        self._current: float | None = None
        self._ewma: float | None = None

    def add(self, value: float | None) -> None:
        self._current = value
        if value is None:
            return
        self._values.append(value)
        self._sum += value
        if len(self._values) > self._window:
            self._sum -= self._values.popleft()
        while self._maxima and self._maxima[-1][1] <= value:
            self._maxima.pop()
        self._maxima.append((self._count, value))
        if self._maxima[0][0] <= self._count - self._window:
            self._maxima.popleft()
        self._count += 1
        self._ewma = value if self._ewma is None else self._alpha * value + (1 - self._alpha) * self._ewma
        if self._count % (self._window * 64) == 0:
            self._sum = sum(self._values)  # re-anchor the running sum against float drift

    @property
    def filled(self) -> int:
        return len(self._values)

    def stat(self) -> Stat:
        n = len(self._values)
        return Stat(
            current=self._current,
            ewma=self._ewma,
            mean=self._sum / n if n else None,
            max=self._maxima[0][1] if n else None,
        )
