import numpy as np
import pytest

from policy.baselines.trimaran import LoadVariationRiskBalancing, TargetLoadPacking
from policy.state import PodView
from tests.unit.policy.helpers import snapshot

POD = PodView.from_requests(0.5, 1)  # tlp predicts 0.75 cores


@pytest.mark.parametrize(
    "cpu_cap,cpu_used,expected",
    [
        (4, 2.0, 40 * (100 - 68.75) / 60),   # U = 68.75 > target: spread
        (8, 0.0, 60 * 9.375 / 40 + 40),      # U = 9.375 <= target: pack
        (4, 0.85, 100.0),                    # U = 40 exactly: the peak
        (4, 4.0, 0.0),                       # U > 100
    ],
)
def test_tlp_hand_computed(cpu_cap, cpu_used, expected):
    snap = snapshot([[cpu_cap, 16, 1, 1]], usage=[[cpu_used, 0, 0, 0]])
    assert TargetLoadPacking().score(snap, POD)[0] == pytest.approx(expected)


def test_tlp_prefers_the_node_nearest_the_target():
    snap = snapshot([[4, 16, 1, 1]] * 3, usage=[[0, 0, 0, 0], [0.85, 0, 0, 0], [3, 0, 0, 0]])
    assert int(np.argmax(TargetLoadPacking().score(snap, POD))) == 1


@pytest.mark.parametrize(
    "usage,expected",
    [
        ([2, 4, 0, 0], 100 * (1 - ((2.5 / 4) / 2))),    # cpu risk .3125 beats mem risk (5/16)/2
        ([0, 12, 0, 0], 100 * (1 - ((13 / 16) / 2))),   # mem dominates
        ([8, 0, 0, 0], 0.0),                             # risk clipped at 1
    ],
)
def test_lvrb_hand_computed(usage, expected):
    snap = snapshot([[4, 16, 1, 1]], usage=[usage])
    assert LoadVariationRiskBalancing().score(snap, POD)[0] == pytest.approx(expected)
