"""worst-fit, the lab's positive control: hand-computed scores, and it picks what demand-aware avoids."""

from __future__ import annotations

import numpy as np
import pytest

from policy.baselines import make_scorer, pick
from policy.baselines.demand_aware import DemandAware
from policy.baselines.worst_fit import SIZE_WEIGHT, TIE_WEIGHT, WorstFit
from policy.state import PodView
from tests.unit.policy.helpers import snapshot

POD = PodView(requests=[0.5, 1], demand=[1.0, 0.5, 0, 0], demand_source="learned")


@pytest.mark.parametrize("capacity, usage, expected", [
    # after = (usage + demand) / capacity; score = max + 1e-3 mean - 1e-6 cpu capacity
    ([4, 16, 100, 100], [0, 0, 0, 0], 0.25 + TIE_WEIGHT * (0.25 + 0.5 / 16) / 4 - SIZE_WEIGHT * 4),
    ([1, 2, 100, 100], [0, 0, 0, 0], 1.0 + TIE_WEIGHT * (1.0 + 0.25) / 4 - SIZE_WEIGHT * 1),
    ([4, 16, 100, 100], [3, 1, 50, 0], 1.0 + TIE_WEIGHT * (1.0 + 1.5 / 16 + 0.5) / 4 - SIZE_WEIGHT * 4),
])
def test_worst_fit_hand_computed(capacity, usage, expected) -> None:
    snap = snapshot([capacity], usage=[usage])
    assert WorstFit().score(snap, POD)[0] == pytest.approx(expected)


@pytest.mark.parametrize("capacity, usage, best", [
    ([[4, 16, 100, 100], [1, 2, 100, 100]], [[0, 0, 0, 0], [0, 0, 0, 0]], 1),  # idle: the smallest node
    ([[4, 16, 100, 100], [4, 16, 100, 100]], [[0.5, 0, 0, 0], [2, 0, 0, 0]], 1),  # the busier of two equals
    ([[1, 2, 100, 100], [4, 16, 100, 100]], [[0, 0, 0, 0], [3.5, 0, 0, 0]], 1),  # fuller after, though larger
])
def test_worst_fit_picks_the_node_demand_aware_avoids(capacity, usage, best) -> None:
    snap = snapshot(capacity, usage=usage)
    mask = np.ones(len(capacity), dtype=bool)
    assert pick(make_scorer("worst-fit").score(snap, POD), mask) == best
    assert pick(DemandAware().score(snap, POD), mask) != best
