"""Filter reasons, the 0-10 score rule and staleness, on hand-built snapshots."""

import numpy as np
import pytest

from extender.decide import Thresholds, filter_reasons, heuristic_policy, score, to_extender_scores
from policy.baselines import make_scorer
from policy.features import NODE_FEATURES
from policy.state import ClusterSnapshot, PodView


def snap(n=3, *, usage=None, age=None, requested=None, pods=None, ready=None):
    return ClusterSnapshot(
        names=tuple(f"n{i}" for i in range(n)), capacity=np.tile([8.0, 32.0, 1000.0, 500.0], (n, 1)),
        requested=np.zeros((n, 2)) if requested is None else np.asarray(requested, float),
        usage=np.zeros((n, 4)) if usage is None else np.asarray(usage, float),
        usage_age=np.zeros(n) if age is None else np.asarray(age, float), assumed=np.zeros((n, 4)),
        pods=np.zeros(n) if pods is None else np.asarray(pods, float), max_pods=np.full(n, 110.0),
        ready=np.ones(n, bool) if ready is None else np.asarray(ready, bool))


POD = PodView.from_requests(1.0, 2.0, name="p")


@pytest.mark.parametrize("raw, allowed, expected", [
    ([1.0, 2.0, 3.0], [1, 1, 1], [0, 5, 10]),
    ([5.0, 5.0, 5.0], [1, 1, 1], [10, 10, 10]),
    ([1.0, 2.0, 3.0], [1, 0, 1], [0, 0, 10]),
    ([1.0, -np.inf, 3.0], [1, 1, 1], [0, 0, 10]),
    ([0.0, 0.25, 0.35, 1.0], [1, 1, 1, 1], [0, 3, 4, 10]),   # 2.5 rounds half up to 3
    ([1.0], [0], [0]),
    ([], [], []),
    ([-1e9, 1e9], [1, 1], [0, 10]),
])
def test_score_rule(raw, allowed, expected):
    out = to_extender_scores(np.array(raw, float), np.array(allowed, bool))
    assert out.tolist() == expected and out.dtype == np.int64


def test_score_rule_is_monotone():
    rng = np.random.default_rng(0)
    for _ in range(200):
        raw = rng.normal(size=20)
        out = to_extender_scores(raw, np.ones(20, bool))
        order = np.argsort(raw)
        assert np.all(np.diff(out[order]) >= 0) and out.max() == 10 and out.min() == 0


def test_filter_reasons_table():
    s = snap(6, usage=[[0, 0, 0, 0], [6, 0, 0, 0], [0, 31, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [7, 0, 0, 0]],
             requested=[[0, 0], [0, 0], [0, 0], [7.5, 0], [0, 0], [0, 0]],
             ready=[1, 1, 1, 1, 0, 1], age=[0, 0, 0, 0, 0, 999])
    reasons = filter_reasons(s, POD, Thresholds(), max_usage_age=60)
    assert 0 not in reasons
    assert reasons[1].startswith("hot node: cpu usage 75%")
    assert reasons[2].startswith("hot node: mem usage 97%")
    assert reasons[3].startswith("Insufficient cpu")
    assert reasons[4] == "node not ready or unschedulable"
    assert 5 not in reasons, "a stale node is not judged hot"


@pytest.mark.parametrize("strict, cool_node, expected", [
    (False, True, {1: "hot", 2: "hot"}),    # a cool node passes: the hot ones are filtered either way
    (True, True, {1: "hot", 2: "hot"}),
    (False, False, {}),                       # every fit node hot: prefer-cool filters none of them
    (True, False, {0: "hot", 1: "hot", 2: "hot"}),  # strict: the pod has nowhere to go
])
def test_prefer_cool_never_filters_every_fit_node_for_heat(strict, cool_node, expected):
    usage = [[0 if cool_node else 6, 0, 0, 0], [6, 0, 0, 0], [7, 0, 0, 0], [0, 0, 0, 0]]
    s = snap(4, usage=usage, requested=[[0, 0], [0, 0], [0, 0], [7.5, 0]])  # n3 does not fit by requests
    reasons = filter_reasons(s, POD, Thresholds(strict=strict), max_usage_age=60)
    assert reasons.pop(3).startswith("Insufficient cpu")  # other checks are never relaxed
    assert {i: r.split(" node")[0] for i, r in reasons.items()} == expected


def test_filter_too_many_pods_and_disabled_threshold():
    s = snap(2, pods=[110, 0], usage=[[0, 0, 0, 0], [7, 0, 0, 0]])
    reasons = filter_reasons(s, POD, Thresholds(cpu=None), max_usage_age=60)
    assert reasons == {0: "Too many pods: 110 of 110"}


def test_stale_nodes_scored_from_requests():
    s = snap(2, usage=[[7, 30, 900, 400], [7, 30, 900, 400]], age=[0, 120])
    out = score(s, POD, heuristic_policy(make_scorer("demand-aware")), max_usage_age=60)
    assert out.stale.tolist() == [False, True]
    assert out.scores.tolist() == [0, 10], "the stale node's load is unknown: estimated from requests (0)"
    assert out.enc.nodes[1, NODE_FEATURES.index("stale")] == 1.0


def test_empty_candidates():
    out = score(ClusterSnapshot.empty(), POD, heuristic_policy(make_scorer("koord")), max_usage_age=60)
    assert out.scores.tolist() == []


def test_the_simulators_hot_filter_is_the_extenders():
    """policy.served.hot_nodes (the simulator's served mode) marks exactly the nodes filter_reasons calls hot."""
    from policy.served import hot_nodes

    rng = np.random.default_rng(3)
    for _ in range(100):
        n = 6
        usage = rng.random((n, 4)) * [8.0, 32.0, 1000.0, 500.0]
        s = snap(n, usage=usage, age=rng.choice([0.0, 30.0, 120.0], size=n))
        reasons = filter_reasons(s, POD, Thresholds(strict=True), max_usage_age=60)
        hot = sorted(i for i, r in reasons.items() if r.startswith("hot node"))
        assert hot == np.flatnonzero(hot_nodes(s, max_usage_age=60)).tolist()
