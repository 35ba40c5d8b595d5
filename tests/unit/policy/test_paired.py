"""The protocol's power calculation: t quantiles, paired-t power and seeds needed, against published values
(scipy.stats.t / nct, and G*Power's one-sample t table)."""

from __future__ import annotations

import math

import pytest

from policy.paired import effect_delta, normal_quantile, paired_power, seeds_for_power, t_cdf, t_quantile


@pytest.mark.parametrize("nu, q", [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (29, 2.0452),
                                   (100, 1.9840)])
def test_t_quantile_matches_the_table(nu, q) -> None:
    assert t_quantile(0.975, nu) == pytest.approx(q, abs=2e-4)
    assert t_cdf(q, nu) == pytest.approx(0.975, abs=1e-5)


@pytest.mark.parametrize("n, delta, sd, power", [
    (10, 1.0, 1.0, 0.80310),   # G*Power: one-sample t, d = 1, n = 10
    (34, 0.5, 1.0, 0.80778),   # d = 0.5 needs 34
    (5, 0.14, 0.1, 0.65420),
    (3, 0.2, 0.3, 0.10979),
    (2, 1.0, 0.2, 0.42096),
])
def test_paired_power_matches_the_noncentral_t(n, delta, sd, power) -> None:
    assert paired_power(n, delta=delta, sd=sd) == pytest.approx(power, abs=1e-4)
    assert paired_power(n, delta=-delta, sd=sd) == pytest.approx(power, abs=1e-4)  # two-sided


@pytest.mark.parametrize("sd, seeds", [(0.05, 4), (0.1, 7), (0.12, 8), (0.2, 19), (0.3, 39), (0.5, 103)])
def test_seeds_for_80_percent_power_at_a_15_percent_effect(sd, seeds) -> None:
    assert seeds_for_power(sd) == seeds
    assert paired_power(seeds, delta=math.log(1.15), sd=sd) >= 0.8
    assert seeds == 2 or paired_power(seeds - 1, delta=math.log(1.15), sd=sd) < 0.8


def test_a_15_percent_effect_is_the_smaller_log_ratio_and_bad_inputs_are_refused() -> None:
    assert effect_delta(0.15) == pytest.approx(math.log(1.15))
    assert effect_delta(0.15) < -math.log(0.85)
    assert normal_quantile(0.975) == pytest.approx(1.959964, abs=1e-6)
    assert seeds_for_power(10.0, most=50) == 51
    for bad in (lambda: effect_delta(1.5), lambda: paired_power(1, delta=0.1, sd=0.1),
                lambda: t_quantile(1.0, 3)):
        with pytest.raises(ValueError):
            bad()
