"""The protocol's primary endpoint: the per-seed log mean-JCT ratio to ``default``, paired, with its 95 % interval,
and the words a report may use for it. Pure. The arithmetic (``Interval``, ``log_ratios``, ``interval``) lives in
``policy.paired``, which the simulator's ``policy.evaluate`` uses for the same endpoint; the words live here.

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

from policy.paired import LEVEL, Interval, interval, log_ratios

__all__ = ["LEVEL", "Interval", "claim", "interval", "log_ratios"]


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
