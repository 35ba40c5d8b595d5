"""Table tests of the LATE formulas and the speed model."""

import math

import numpy as np
import pytest

from policy.migrate import checkpoint_progress_from_age, move_cost, predicted_speed, time_left, worth_moving


@pytest.mark.parametrize("progress,rate,expected", [
    (0.0, 0.01, 100.0), (0.5, 0.01, 50.0), (0.9, 0.001, 100.0), (1.0, 0.0, 0.0), (0.3, 0.0, math.inf),
])
def test_time_left(progress, rate, expected):
    assert time_left(progress, rate) == pytest.approx(expected)


@pytest.mark.parametrize("progress,ckpt,rate,expected", [
    (0.5, 0.5, 0.01, (0.0, 50.0)),      # checkpoint right now: nothing lost
    (0.5, 0.4, 0.01, (10.0, 50.0)),     # 0.1 progress to redo at 0.01/s
    (0.5, 0.0, 0.02, (25.0, 25.0)),     # no checkpoint: all progress redone
    (0.5, 0.0, 0.0, (math.inf, math.inf)),
])
def test_move_cost(progress, ckpt, rate, expected):
    assert move_cost(progress, ckpt, rate, 5.0) == pytest.approx(expected)


@pytest.mark.parametrize("here,restore,lost,target,margin,expected", [
    (100.0, 10.0, 10.0, 50.0, 0.25, True),    # 100 > 10 + 10 + 62.5
    (100.0, 10.0, 10.0, 70.0, 0.25, False),   # 100 < 10 + 10 + 87.5
    (82.5, 10.0, 10.0, 50.0, 0.25, False),    # a tie stays
    (math.inf, 10.0, 0.0, 1e6, 0.5, True),    # a stalled job moves to any node that progresses
    (100.0, 0.0, 0.0, 100.0, 0.0, False),     # same speed: no point
])
def test_worth_moving(here, restore, lost, target, margin, expected):
    assert worth_moving(here, restore, lost, target, margin) is expected


@pytest.mark.parametrize("progress,rate,age,expected", [
    (0.5, 0.01, 10.0, 0.4), (0.5, 0.01, 0.0, 0.5), (0.05, 0.01, 10.0, 0.0), (0.5, 0.01, math.inf, 0.0),
])
def test_checkpoint_progress_from_age(progress, rate, age, expected):
    assert checkpoint_progress_from_age(progress, rate, age) == pytest.approx(expected)


CAP = np.array([4.0, 16.0, 125.0, 200.0])


@pytest.mark.parametrize("demand,usage,pods,expected", [
    ([2, 1, 1, 2], [0, 0, 0, 0], 0, 1.0),          # idle node: full speed
    ([2, 1, 1, 2], [3, 1, 0, 0], 1, 1.0),          # 1 core free of 2 wanted, but an equal split gives 2 cores
    ([2, 1, 1, 2], [3.5, 1, 0, 0], 3, 0.5),        # 0.5 free, equal split 1 core of 4 pods+1 -> 1/2
    ([0.5, 1, 60, 0.5], [0, 0, 100, 0], 0, 125 / 2 / 60),  # net: free 25, floor 62.5 -> 62.5/60 capped at 1
    ([0.5, 1, 100, 0.5], [0, 0, 100, 0], 3, 125 / 4 / 100),  # net: floor 31.25 of 100 wanted
    ([1, 8, 0, 0], [0, 12, 0, 0], 0, 16 / 20),     # memory over-commit thrashes
])
def test_predicted_speed(demand, usage, pods, expected):
    got = predicted_speed(np.array(demand, float), CAP, np.array(usage, float), pods)
    assert got == pytest.approx(min(expected, 1.0))
