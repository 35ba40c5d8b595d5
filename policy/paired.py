"""Paired per-seed log ratios: their interval, and how many seeds a protocol needs to see an effect. Pure (numpy).

One place for the statistics of the primary endpoint, shared by the real-node lab (``lab.endpoint`` words a
claim from ``interval``; ``lab.verdict`` sizes seeds with ``seeds_for_power``) and the simulator
(``policy.tables.jct_ratios``, which predicts a protocol's ratios by the same formula).

Power. Why: issue #21's lab ran 5 seeds whatever the noise, so it could only detect effects of 25-80 %.
A protocol instead sizes its seeds from an A/A pilot: two arms that differ in nothing give the per-seed
standard deviation ``sd`` of the log mean-JCT ratio, and the primary endpoint (``lab.endpoint``) is a
two-sided paired t-test of "mean log ratio = 0" at level ``alpha``. With ``n`` seeds and a true log ratio
``delta`` the test statistic is noncentral t, ``nu = n - 1`` degrees of freedom, noncentrality
``lam = delta * sqrt(n) / sd``:

    T = (Z + lam) / S,   Z ~ N(0, 1),   S = sqrt(V / nu),   V ~ chi2(nu)
    power(n) = P(T > c) + P(T < -c),   c = t_{1 - alpha/2, nu}
             = E_S[ Phi(lam - c S) + Phi(-lam - c S) ]

integrated numerically over the density of S (no scipy needed; ~1e-6 of the exact value). A "15 % effect"
is ``delta = ln(1.15)``: the smaller of ln(1.15) and -ln(0.85), so the seeds suffice for a 15 % change
either way. ``seeds_for_power`` is the least n >= 2 whose power reaches the target.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

_GRID = 4001


def _phi(x: np.ndarray) -> np.ndarray:
    """The standard normal CDF, elementwise (erfc through math: exact to double precision)."""
    return 0.5 * np.vectorize(math.erfc)(-np.asarray(x, dtype=float) / math.sqrt(2.0))


def _s_density(nu: int) -> tuple[np.ndarray, np.ndarray]:
    """Grid and density of S = sqrt(chi2(nu) / nu); its bulk is 1 +- 1/sqrt(2 nu). The grid is dense near 0,
    where the t's tails come from when nu is small."""
    s = (1.0 + 12.0 / math.sqrt(nu)) * np.linspace(0.0, 1.0, _GRID) ** 2
    with np.errstate(divide="ignore"):
        power_term = np.zeros_like(s) if nu == 1 else (nu - 1) * np.log(s)  # s**0 = 1, also at s = 0
    log_f = math.log(2.0) + (nu / 2.0) * math.log(nu / 2.0) - math.lgamma(nu / 2.0) + power_term - nu * s * s / 2.0
    return s, np.exp(log_f)


def t_cdf(x: float, nu: int) -> float:
    """P(T <= x) for Student's t with ``nu`` degrees of freedom."""
    s, f = _s_density(nu)
    return float(np.trapezoid(f * _phi(x * s), s))


def t_quantile(p: float, nu: int) -> float:
    """The ``p`` quantile of Student's t with ``nu`` degrees of freedom (bisection on ``t_cdf``)."""
    if not 0.0 < p < 1.0 or nu < 1:
        raise ValueError(f"t_quantile needs 0 < p < 1 and nu >= 1, got p={p}, nu={nu}")
    lo, hi = -1e3, 1e3
    for _ in range(80):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if t_cdf(mid, nu) < p else (lo, mid)
    return (lo + hi) / 2.0


def paired_power(n: int, *, delta: float, sd: float, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test with ``n`` seeds when the true mean log ratio is ``delta`` and
    the per-seed standard deviation of the log ratio is ``sd``."""
    if n < 2 or not sd > 0:
        raise ValueError(f"paired_power needs n >= 2 and sd > 0, got n={n}, sd={sd}")
    nu = n - 1
    c = t_quantile(1.0 - alpha / 2.0, nu)
    lam = abs(delta) * math.sqrt(n) / sd
    s, f = _s_density(nu)
    return float(np.trapezoid(f * (_phi(lam - c * s) + _phi(-lam - c * s)), s))


def effect_delta(effect: float) -> float:
    """The log ratio a relative ``effect`` (0.15: 15 %) means: ln(1 + effect), the smaller of the two ways."""
    if not 0.0 < effect < 1.0:
        raise ValueError(f"effect must be a fraction in (0, 1), got {effect}")
    return min(math.log1p(effect), -math.log1p(-effect))


def seeds_for_power(sd: float, *, effect: float = 0.15, power: float = 0.8, alpha: float = 0.05,
                    most: int = 10_000) -> int:
    """The least number of seeds (>= 2) for ``power`` at a relative ``effect``, given the A/A pilot's
    per-seed standard deviation ``sd`` of the log ratio; ``most`` + 1 if even ``most`` seeds fall short.
    The search starts just below the normal approximation ((z_{1-alpha/2} + z_power) sd / delta)^2."""
    delta = effect_delta(effect)
    start = ((normal_quantile(1.0 - alpha / 2.0) + normal_quantile(power)) * sd / delta) ** 2
    n = max(2, min(int(start) - 1, most + 1))
    while n <= most and paired_power(n, delta=delta, sd=sd, alpha=alpha) < power:
        n += 1
    return n


def normal_quantile(p: float) -> float:
    """The ``p`` quantile of the standard normal (bisection on its CDF)."""
    lo, hi = -40.0, 40.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if 0.5 * math.erfc(-mid / math.sqrt(2.0)) < p else (lo, mid)
    return (lo + hi) / 2.0


LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """One arm's paired ratio to the baseline over seeds (``low``/``high`` NaN with fewer than two seeds)."""

    ratio: float
    low: float
    high: float
    seeds: int
    sd: float
    """Per-seed standard deviation of the log ratio (what ``policy.paired`` sizes seeds from)."""

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
