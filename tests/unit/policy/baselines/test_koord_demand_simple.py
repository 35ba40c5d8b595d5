import numpy as np
import pytest

from policy.baselines import UnknownScorer, make_scorer, pick
from policy.baselines.demand_aware import DemandAware
from policy.baselines.koord import Koord
from policy.baselines.simple import RoundRobin
from policy.state import PodView
from tests.unit.policy.helpers import snapshot


@pytest.mark.parametrize(
    "usage,expected",
    [
        # P = est + request*(.85, .7) = (1.425, 2.7); least (64.375, 83.125) -> mean 73.75
        ([1, 2, 0, 0], (100 * (4 - 1.425) / 4 + 100 * (16 - 2.7) / 16) / 2),
        ([2.6, 0, 0, 0], -np.inf),   # 65 % cpu: hot, refused
        ([0, 15.2, 0, 0], -np.inf),  # 95 % memory: hot, refused
    ],
)
def test_koord_hand_computed(usage, expected):
    snap = snapshot([[4, 16, 1, 1]], usage=[usage])
    assert Koord().score(snap, PodView.from_requests(0.5, 1))[0] == pytest.approx(expected)


def test_demand_aware_avoids_the_node_whose_bottleneck_the_pod_hits():
    # n0 is idle on cpu but its network is busy; the pod is network-heavy, so n1 wins despite more cpu load.
    snap = snapshot([[4, 16, 125, 200]] * 2, usage=[[0.2, 1, 100, 0], [3, 1, 0, 0]])
    pod = PodView(requests=[0.5, 1], demand=[0.3, 0.5, 60, 2], demand_source="learned")
    scores = DemandAware().score(snap, pod)
    assert scores[0] == pytest.approx(-(160 / 125) - 1e-3 * np.mean([0.5 / 4, 1.5 / 16, 160 / 125, 2 / 200]))
    assert int(np.argmax(scores)) == 1


def test_pick_skips_infeasible_and_refused_and_breaks_ties_at_random():
    scores = np.array([5.0, 9.0, 9.0, -np.inf, 9.0])
    mask = np.array([True, True, True, True, False])
    seen = {pick(scores, mask, np.random.default_rng(s)) for s in range(40)}
    assert seen == {1, 2}
    assert pick(np.array([-np.inf, 1.0]), np.array([True, False])) is None


def test_round_robin_walks_the_ring_by_name():
    rr = RoundRobin()
    snap = snapshot([[1, 1, 1, 1]] * 3)
    mask = np.ones(3, dtype=bool)
    chosen = [pick(rr.score(snap, PodView.from_requests(0, 0)), mask) for _ in range(4)]
    assert chosen == [0, 1, 2, 0]


def test_make_scorer_unknown_name_lists_known_ones():
    with pytest.raises(UnknownScorer, match="unknown scorer 'nope'.*default-k8s"):
        make_scorer("nope")


@pytest.mark.parametrize("name", ["tlp", "lvrb", "koord", "demand-aware"])
def test_load_aware_scorers_honour_max_usage_age(name):
    from tests.unit.policy.helpers import snapshot as snap_of

    # n0's (busy) sample is 100 s old: fresh under a 300 s limit, stale (scored from its idle requests) under 60 s.
    snap = snap_of([[4, 16, 125, 200]] * 2, usage=[[3.9, 15, 120, 190], [1, 4, 30, 50]], age=[100, 0])
    pod = PodView(requests=[0.5, 1], demand=[1, 1, 10, 10], demand_source="learned")
    strict, lenient = make_scorer(name, max_usage_age=60), make_scorer(name, max_usage_age=300)
    assert not np.allclose(strict.score(snap, pod)[0], lenient.score(snap, pod)[0])
