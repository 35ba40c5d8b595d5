"""Table tests of ``lookahead-time``: the marginal excess over the newcomer's stay, knowing who leaves when."""

import math
from dataclasses import replace

import numpy as np
import pytest

from policy.baselines import make_scorer
from policy.baselines.lookahead import Lookahead, LookaheadTime, marginal_excess, timed_marginal_excess
from policy.state import PodView, RunningProgress
from tests.unit.policy.helpers import snapshot

STD = (4.0, 16.0, 125.0, 200.0)
FULL = (4.0, 0.0, 0.0, 0.0)  # one whole node's cpu: beside another such, both run at 0.5


@pytest.mark.parametrize("name,left,work,expected", [
    # unknown: the pod there outlasts the newcomer (20 s at 0.5): it loses 10 of its 10 -> 1, the newcomer 20/10-1 -> 1
    ("nothing known", [], [], 2.0),
    ("a report without a usable time left", [math.nan], [10.0], 2.0),
    ("it outlasts the newcomer", [100.0], [10.0], 2.0),
    # it leaves at 4 s: loses 0.5 * 4 = 2 of 10 -> 0.2; the newcomer did 2, then 8 alone: 12 / 10 - 1 = 0.2
    ("it leaves at 4 s", [4.0], [10.0], 0.4),
    ("it leaves at 4 s, its own run time unknown (the newcomer's 10)", [4.0], [math.nan], 0.4),
    # its run time 40: the same 2 lost count 2 / 40
    ("it leaves at 4 s, a 40 s job", [4.0], [40.0], 0.25),
    ("it is done already", [0.0], [10.0], 0.0),
])
def test_timed_marginal_excess_hand_computed(name, left, work, expected):
    assert timed_marginal_excess(FULL, STD, FULL, 1, 10.0, left, work) == pytest.approx(expected)


def test_two_pods_leaving_in_turn():
    # two pods of 2 cores each (one aggregate of 4) and a 4-core newcomer on 4 cores: aggregate and newcomer
    # at 0.5 each. Pod A leaves at 2 s, B at 6 s (both 10 s jobs), the newcomer's run time is 10 s.
    # 0-2 s: both pods lose 0.5 * 2 = 1; newcomer does 1. 2-6 s: B alone (2 cores) beside the newcomer (4):
    # max-min fair on 4 cores: both at 4/6 -> B loses (1 - 2/3) * 4 = 4/3, newcomer does 8/3.
    # 6 s on: the newcomer alone, 10 - 1 - 8/3 = 19/3 s more, finishing at 6 + 19/3.
    cost = timed_marginal_excess(FULL, STD, FULL, 2, 10.0, [2.0, 6.0], [10.0, 10.0])
    expected = 1 / 10 + (1 + 4 / 3) / 10 + (6 + 19 / 3) / 10 - 1
    assert cost == pytest.approx(expected)


@pytest.mark.parametrize("est,pods,demand", [
    ((3.0, 1.0, 0.0, 0.0), 2, (2.0, 1.0, 0.0, 0.0)),
    ((1.0, 1.0, 100.0, 0.0), 1, (0.5, 1.0, 60.0, 0.0)),
    ((1.0, 12.0, 0.0, 0.0), 3, (1.0, 8.0, 0.0, 0.0)),
    ((0.0, 0.0, 0.0, 0.0), 0, (8.0, 1.0, 0.0, 0.0)),
])
def test_with_nothing_known_it_is_lookaheads_cost(est, pods, demand):
    assert timed_marginal_excess(est, STD, demand, pods, 30.0, [], []) == pytest.approx(
        marginal_excess(est, STD, demand, float(pods)))
    assert timed_marginal_excess(est, STD, demand, pods, math.nan, [5.0], [5.0]) == pytest.approx(
        marginal_excess(est, STD, demand, float(pods)))


def _two_busy_nodes(progress):
    usage = np.array([FULL, FULL])
    return replace(snapshot(np.array([STD, STD]), usage=usage, pods=np.array([1.0, 1.0])), progress=progress)


def test_it_prefers_the_node_whose_pod_leaves_soon_where_lookahead_cannot_tell():
    pod = PodView(requests=[1.0, 1.0], demand=FULL, demand_source="sim", expected_duration=10.0)
    snap = _two_busy_nodes(RunningProgress(node=[0, 1], time_left=[50.0, 3.0], duration=[60.0, 30.0]))
    timed = make_scorer("lookahead-time").score(snap, pod)
    plain = make_scorer("lookahead").score(snap, pod)
    assert plain[0] == plain[1]
    assert timed[1] > timed[0]


def test_without_progress_or_a_run_time_it_scores_as_lookahead():
    with_time = PodView(requests=[1.0, 1.0], demand=FULL, expected_duration=10.0)
    without = PodView(requests=[1.0, 1.0], demand=FULL)
    known = _two_busy_nodes(RunningProgress(node=[1], time_left=[3.0], duration=[30.0]))
    for snap, pod in ((_two_busy_nodes(None), with_time), (known, without)):
        assert np.array_equal(LookaheadTime().score(snap, pod), Lookahead().score(snap, pod))
