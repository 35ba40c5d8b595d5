"""The evaluation tables' interval: ``t95`` gives a printed t table's values, and ``mean_ci95`` uses them."""

from __future__ import annotations

import math

import pytest

from policy.report import mean_ci95, t95


# A printed two-sided 95 % t table (3 decimals; the normal's 1.96 past 30 degrees of freedom): the values every
# committed summary was made with, so equality here is equality to the bit.
@pytest.mark.parametrize("df, q", [(1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (9, 2.262),
                                   (14, 2.145), (19, 2.093), (24, 2.064), (29, 2.045), (30, 2.042), (31, 1.96),
                                   (199, 1.96)])
def test_t95_is_the_printed_table(df, q) -> None:
    assert t95(df) == q


def test_mean_ci95_scales_the_standard_error_by_t95() -> None:
    assert mean_ci95([0.0, 2.0]) == (1.0, pytest.approx(12.706))  # sd sqrt(2), n 2: t * sd / sqrt(n) = t
    values = [float(i % 2) for i in range(40)]  # 39 degrees of freedom: the normal's 1.96
    mean, half = mean_ci95(values)
    assert mean == 0.5 and half == pytest.approx(1.96 * math.sqrt(40 / 39 / 4) / math.sqrt(40))


def test_mean_ci95_leaves_out_non_finite_values_and_has_no_interval_for_one() -> None:
    assert mean_ci95([3.0, float("nan")]) == (3.0, pytest.approx(float("nan"), nan_ok=True))
    assert all(math.isnan(x) for x in mean_ci95([]))
