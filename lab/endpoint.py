"""The protocol's primary endpoint: the per-seed log mean-JCT ratio to ``default``, paired, with its 95 % interval,
and the words a report may use for it. Pure.

Why it exists: a ratio of means over seeds, as ``lab.stats.ratios`` reports, is skewed (0.5x and 2x average to
1.25x) and its interval can reach below 0; the log ratio is symmetric, and a t-interval on it, turned back
with exp, stays positive. Per seed s with both arms:

    x_s  = ln(metric(arm, s) / metric(default, s))
    m    = mean_s x_s,   sd = stdev_s x_s (n - 1),   h = t_{0.975, n-1} * sd / sqrt(n)
    ratio = exp(m),   interval = [exp(m - h), exp(m + h)]

A claim is never stronger than its interval (``claim``): an interval that excludes 1 says lower or higher by
the interval's range; one that contains 1 says "no difference detected" and how large a difference it still
allows ("no difference detectable below X %", X = the farther end's distance from 1). One seed has no interval
and supports no claim.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from lab.power import t_quantile

LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """One arm's paired ratio to the baseline over seeds (``low``/``high`` NaN with fewer than two seeds)."""

    ratio: float
    low: float
    high: float
    seeds: int
    sd: float
    """Per-seed standard deviation of the log ratio (what ``lab.power`` sizes seeds from)."""

    @property
    def excludes_one(self) -> bool:
        return self.seeds >= 2 and (self.high < 1.0 or self.low > 1.0)

    def within(self, margin: float) -> bool:
        """Both ends inside [1 - margin, 1 + margin] (the A/A target: within +-5 %)."""
        return self.seeds >= 2 and self.low >= 1.0 - margin and self.high <= 1.0 + margin


def log_ratios(per_run: Mapping[tuple[int, str], Mapping[str, float]], arm: str, *, baseline: str = "default",
               metric: str = "mean_jct_s") -> list[float]:
    """ln(arm / baseline) per seed that has both, with finite positive values, in seed order."""
    out = []
    for seed in sorted({s for s, _ in per_run}):
        base, this = per_run.get((seed, baseline)), per_run.get((seed, arm))
        if base is None or this is None:
            continue
        b, a = base.get(metric, math.nan), this.get(metric, math.nan)
        if math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0:
            out.append(math.log(a / b))
    return out


def interval(logs: list[float]) -> Interval:
    """The paired ratio and its 95 % t-interval from per-seed log ratios (module docstring)."""
    n = len(logs)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, math.nan)
    m = sum(logs) / n
    if n == 1:
        return Interval(math.exp(m), math.nan, math.nan, 1, math.nan)
    sd = math.sqrt(sum((x - m) ** 2 for x in logs) / (n - 1))
    h = t_quantile(0.5 + LEVEL / 2.0, n - 1) * sd / math.sqrt(n)
    return Interval(math.exp(m), math.exp(m - h), math.exp(m + h), n, sd)


def _pct(x: float) -> str:
    return f"{100.0 * x:.0f} %"


def claim(iv: Interval, *, baseline: str = "default") -> str:
    """What may be said of an arm's ratio to ``baseline``, no stronger than its interval."""
    if iv.seeds == 0:
        return "no seed has both arms: no claim"
    if iv.seeds == 1:
        return f"{iv.ratio:.3f}x on one seed: one seed has no interval, so no claim"
    span = f"{iv.ratio:.3f}x `{baseline}`'s (95 % interval {iv.low:.3f}-{iv.high:.3f}, {iv.seeds} seeds)"
    if iv.high < 1.0:
        return f"{span}: lower, by {_pct(1.0 - iv.high)} to {_pct(1.0 - iv.low)}"
    if iv.low > 1.0:
        return f"{span}: higher, by {_pct(iv.low - 1.0)} to {_pct(iv.high - 1.0)}"
    return (f"{span}: no difference detected; no difference detectable below "
            f"{_pct(max(1.0 - iv.low, iv.high - 1.0))}")
