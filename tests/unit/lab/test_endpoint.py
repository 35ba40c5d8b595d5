"""The primary endpoint: per-seed log ratios, their t-interval turned back with exp, and claims no stronger
than the interval."""

from __future__ import annotations

import math

import pytest

from lab.endpoint import Interval, claim, interval, log_ratios


def _runs(pairs):
    out = {}
    for seed, (arm, base) in enumerate(pairs, start=1):
        out[(seed, "default")] = {"mean_jct_s": base}
        out[(seed, "model")] = {"mean_jct_s": arm}
    return out


def test_log_ratios_pair_seeds_and_skip_missing_or_bad_values() -> None:
    runs = _runs([(10.0, 20.0), (30.0, 15.0), (math.nan, 10.0), (0.0, 10.0)])
    runs[(9, "model")] = {"mean_jct_s": 5.0}  # no default on seed 9
    assert log_ratios(runs, "model") == pytest.approx([math.log(0.5), math.log(2.0)])


@pytest.mark.parametrize("logs, ratio, low, high", [
    # mean 0, sd 2 / sqrt(3), n 4: h = 3.18245 * sd / 2
    ([1.0, -1.0, 1.0, -1.0], 1.0, math.exp(-3.18245 / math.sqrt(3)), math.exp(3.18245 / math.sqrt(3))),
    # ratios 0.8, 0.9 (n = 2, t = 12.706): a wide interval around their geometric mean
    ([math.log(0.8), math.log(0.9)], math.sqrt(0.72), math.sqrt(0.72) * math.exp(-12.7062 * 0.0832827 / math.sqrt(2)),
     math.sqrt(0.72) * math.exp(12.7062 * 0.0832827 / math.sqrt(2))),
    # 0.5x and 2x: the log ratio is symmetric, so they average to 1, not 1.25
    ([math.log(0.5), math.log(2.0)], 1.0, None, None),
])
def test_interval_is_a_t_interval_on_the_log_ratio(logs, ratio, low, high) -> None:
    iv = interval(logs)
    assert iv.ratio == pytest.approx(ratio, rel=1e-6)
    if low is not None:
        assert (iv.low, iv.high) == (pytest.approx(low, rel=1e-4), pytest.approx(high, rel=1e-4))
    assert iv.low * iv.high == pytest.approx(iv.ratio ** 2)  # symmetric on the log scale


def test_one_seed_or_none_has_no_interval() -> None:
    assert math.isnan(interval([0.1]).low) and interval([0.1]).seeds == 1
    assert interval([]).seeds == 0 and not interval([0.1]).excludes_one


@pytest.mark.parametrize("iv, says", [
    (Interval(0.8, 0.7, 0.9, 10, 0.1), "0.800x `default`'s (95 % interval 0.700-0.900, 10 seeds): lower, by 10 % "
                                       "to 30 %"),
    (Interval(1.3, 1.1, 1.5, 6, 0.1), "higher, by 10 % to 50 %"),
    (Interval(0.97, 0.88, 1.07, 8, 0.1), "no difference detected; no difference detectable below 12 %"),
    (Interval(1.01, 0.99, 1.04, 8, 0.1), "no difference detectable below 4 %"),
    (Interval(0.9, math.nan, math.nan, 1, math.nan), "one seed has no interval, so no claim"),
    (Interval(math.nan, math.nan, math.nan, 0, math.nan), "no claim"),
])
def test_claims_are_no_stronger_than_the_interval(iv, says) -> None:
    assert says in claim(iv)


@pytest.mark.parametrize("iv, excludes, within5", [
    (Interval(1.0, 0.97, 1.03, 5, 0.1), False, True),
    (Interval(1.0, 0.94, 1.03, 5, 0.1), False, False),
    (Interval(1.3, 1.1, 1.5, 5, 0.1), True, False),
    (Interval(0.8, 0.7, 0.99, 5, 0.1), True, False),
])
def test_detection_and_the_aa_target(iv, excludes, within5) -> None:
    assert (iv.excludes_one, iv.within(0.05)) == (excludes, within5)
