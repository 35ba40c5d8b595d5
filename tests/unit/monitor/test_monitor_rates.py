"""Table tests for the rate and window math (monitor.rates): no negative rates, ever."""

import pytest

from monitor.rates import SeriesStats, Stat, counter_rate, ratio, summed_rate


@pytest.mark.parametrize(
    ("prev", "cur", "dt", "expected"),
    [
        (100, 300, 2.0, 100.0),
        (5, 5, 1.0, 0.0),
        (2**32 - 10, 5, 1.0, None),  # 32-bit wrap: no rate this interval, not a huge or negative one
        (10_000, 0, 1.0, None),  # reset (interface or cgroup re-created)
        (0, 10, 0.0, None),  # no time passed
        (0, 10, -1.0, None),  # clock went backwards
        (0, 2**63, 1.0, float(2**63)),
    ],
)
def test_counter_rate(prev, cur, dt, expected):
    assert counter_rate(prev, cur, dt) == expected


@pytest.mark.parametrize(
    ("prev", "cur", "dt", "expected"),
    [
        ({"a": 0, "b": 0}, {"a": 10, "b": 30}, 2.0, 20.0),
        ({"a": 100, "b": 0}, {"a": 0, "b": 30}, 1.0, 30.0),  # the reset key is left out, the rest count
        ({"a": 0}, {"a": 10, "new": 1_000_000}, 1.0, 10.0),  # a new key has no rate yet
        ({"a": 0, "gone": 5}, {"a": 10}, 1.0, 10.0),
        ({"a": 100}, {"a": 0}, 1.0, None),  # every key reset: no rate
        ({}, {"a": 1}, 1.0, None),
        ({}, {}, 1.0, None),
    ],
)
def test_summed_rate(prev, cur, dt, expected):
    assert summed_rate(prev, cur, dt) == expected


@pytest.mark.parametrize(
    ("part", "whole", "expected"),
    [(1, 4, 0.25), (None, 4, None), (1, None, None), (1, 0, None), (0, 5, 0.0)],
)
def test_ratio(part, whole, expected):
    assert ratio(part, whole) == expected


def test_series_stats_empty():
    assert SeriesStats(window=3, alpha=0.5).stat() == Stat(None, None, None, None)


@pytest.mark.parametrize(
    ("values", "alpha", "window", "expected"),
    [
        ([4.0], 0.5, 3, Stat(4.0, 4.0, 4.0, 4.0)),  # first value seeds the EWMA
        ([4.0, 8.0], 0.5, 3, Stat(8.0, 6.0, 6.0, 8.0)),
        ([4.0, 8.0, 0.0], 0.25, 3, Stat(0.0, (0.25 * 8 + 0.75 * 4) * 0.75, 4.0, 8.0)),
        ([9.0, 1.0, 2.0, 3.0], 1.0, 3, Stat(3.0, 3.0, 2.0, 3.0)),  # 9 fell out of the window; alpha 1 = no smoothing
        ([4.0, None], 0.5, 3, Stat(None, 4.0, 4.0, 4.0)),  # a missing sample keeps the history
        ([None, None], 0.5, 3, Stat(None, None, None, None)),
        ([2.0, None, 6.0], 0.5, 3, Stat(6.0, 4.0, 4.0, 6.0)),
    ],
)
def test_series_stats(values, alpha, window, expected):
    series = SeriesStats(window=window, alpha=alpha)
    for value in values:
        series.add(value)
    got = series.stat()
    for field in ("current", "ewma", "mean", "max"):
        want = getattr(expected, field)
        assert getattr(got, field) == (None if want is None else pytest.approx(want)), field


@pytest.mark.parametrize(("window", "alpha"), [(0, 0.5), (3, 0.0), (3, 1.5), (3, -0.1)])
def test_series_stats_rejects_bad_parameters(window, alpha):
    with pytest.raises(ValueError):
        SeriesStats(window=window, alpha=alpha)


def test_series_stats_window_matches_brute_force():
    import random

    rng = random.Random(7)
    for window in (1, 2, 5, 17):
        series = SeriesStats(window=window, alpha=0.3)
        kept: list[float] = []
        for _ in range(400):
            value = None if rng.random() < 0.1 else rng.choice([rng.uniform(0, 10), 5.0, 0.0])
            series.add(value)
            if value is not None:
                kept = (kept + [value])[-window:]
            stat = series.stat()
            if kept:
                assert stat.max == max(kept)
                assert stat.mean == pytest.approx(sum(kept) / len(kept))
                assert series.filled == len(kept)
