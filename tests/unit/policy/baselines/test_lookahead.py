"""Table tests of the ``lookahead`` scorer: predicted marginal excess, hand-computed from the contention model."""

import numpy as np
import pytest

from policy.baselines import make_scorer, pick
from policy.baselines.demand_aware import DemandAware
from policy.baselines.lookahead import Lookahead, marginal_excess
from policy.state import PodView
from tests.unit.policy.helpers import snapshot

STD = (4.0, 16.0, 125.0, 200.0)

CASES = [
    # (name, estimated usage, pods already there, pod demand, expected cost)
    ("nothing saturates", (1.0, 2.0, 10.0, 10.0), 2, (1.0, 1.0, 10.0, 10.0), 0.0),
    # cpu 3 + 2 = 5 on 4: both freeze at 0.8 -> pod 0.2 / 0.8 = 0.25, two pods 2 * 0.2 / 0.8 = 0.5
    ("cpu saturates", (3.0, 1.0, 0.0, 0.0), 2, (2.0, 1.0, 0.0, 0.0), 0.75),
    # net 100 + 60 = 160 on 125: both at 125/160 -> (1 - x) / x = 0.28, once for the pod, once for the pod there
    ("net saturates", (1.0, 1.0, 100.0, 0.0), 1, (0.5, 1.0, 60.0, 0.0), 0.56),
    # disk 150 + 100 on 200: both at 0.8 -> 0.25 + 3 * 0.25
    ("disk saturates, three pods there", (0.0, 1.0, 0.0, 150.0), 3, (0.0, 1.0, 0.0, 100.0), 1.0),
    ("disk-bound node, cpu-only pod: no interference", (0.0, 1.0, 0.0, 200.0), 1, (2.0, 1.0, 0.0, 0.0), 0.0),
    # already over (assumed pods): 5 cores on 4 runs at 0.8; with one more core both run at 4/6
    # -> pod (1/3)/(2/3) = 0.5, the pod there loses (0.8 - 2/3)/(2/3) = 0.2
    ("already oversubscribed", (5.0, 1.0, 0.0, 0.0), 1, (1.0, 1.0, 0.0, 0.0), 0.7),
    # memory 12 + 8 = 20 GiB on 16: every rate x 0.8 -> 0.25 for the pod and for each of the two there
    ("memory thrash", (1.0, 12.0, 0.0, 0.0), 2, (1.0, 8.0, 0.0, 0.0), 0.75),
    # an 8-core pod alone on a 4-core node runs at 0.5: slowdown 2
    ("pod alone too big", (0.0, 0.0, 0.0, 0.0), 0, (8.0, 1.0, 0.0, 0.0), 1.0),
]


@pytest.mark.parametrize("name,est,pods,demand,expected", CASES, ids=[c[0] for c in CASES])
def test_marginal_excess_hand_computed(name, est, pods, demand, expected):
    assert marginal_excess(est, STD, demand, pods) == pytest.approx(expected)


@pytest.mark.parametrize("name,est,pods,demand,expected", CASES, ids=[c[0] for c in CASES])
def test_scorer_costs_match_the_pure_function(name, est, pods, demand, expected):
    snap = snapshot([STD], usage=[est], pods=[pods])
    pod = PodView(requests=[0.5, 0.5], demand=demand, demand_source="learned")
    assert Lookahead().costs(snap, pod)[0] == pytest.approx(expected)


def test_slowing_many_pods_costs_more_than_a_higher_peak():
    # n0: 3 cores used by six pods; n1: 3.5 cores used by one. The pod wants 1.5 cores.
    # demand-aware minimises the peak (4.5/4 < 5/4) and picks n0, slowing seven pods to 4/4.5:
    #   lookahead cost n0 = 7 * (1 - 8/9) / (8/9) = 0.875;  n1 = 2 * (1 - 0.8) / 0.8 = 0.5  -> n1.
    snap = snapshot([STD] * 2, usage=[[3.0, 1, 0, 0], [3.5, 1, 0, 0]], pods=[6, 1])
    pod = PodView(requests=[0.5, 0.5], demand=[1.5, 0.5, 0, 0], demand_source="learned")
    mask = np.ones(2, dtype=bool)
    assert Lookahead().costs(snap, pod) == pytest.approx([0.875, 0.5])
    assert pick(Lookahead().score(snap, pod), mask) == 1
    assert pick(DemandAware().score(snap, pod), mask) == 0


def test_uncontended_nodes_tie_break_toward_the_lowest_bottleneck():
    snap = snapshot([STD] * 3, usage=[[2, 4, 50, 0], [1, 4, 10, 0], [0.5, 4, 80, 0]], pods=[1, 1, 1])
    pod = PodView(requests=[0.5, 0.5], demand=[0.5, 0.5, 5, 5], demand_source="learned")
    scores = Lookahead().score(snap, pod)
    assert np.all(Lookahead().costs(snap, pod) == 0.0)
    assert int(np.argmax(scores)) == 1  # peaks after: 2.5/4, 1.5/4 (n1), 85/125


def test_stale_node_is_estimated_from_requests():
    # n0's sample is too old: its usage (nearly idle) is replaced by requests, 3.5 cores -> contended.
    snap = snapshot([STD] * 2, requested=[[3.5, 1], [1, 1]], usage=[[0.1, 1, 0, 0], [1, 1, 0, 0]],
                    age=[600, 0], pods=[1, 1])
    pod = PodView(requests=[0.5, 0.5], demand=[1.0, 0.5, 0, 0], demand_source="learned")
    costs = make_scorer("lookahead", max_usage_age=60).costs(snap, pod)
    assert costs[0] == pytest.approx(2 * (1 - 4 / 4.5) / (4 / 4.5)) and costs[1] == 0.0
