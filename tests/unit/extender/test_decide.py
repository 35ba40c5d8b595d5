"""Filter reasons, the 0-10 score rule and staleness, on hand-built snapshots."""

import numpy as np
import pytest

from extender.decide import Thresholds, filter_reasons, heuristic_policy, passes_filter, score, to_extender_scores
from policy.baselines import make_scorer
from policy.features import NODE_FEATURES
from policy.served import ScoreMapping
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
MINMAX = ScoreMapping("minmax")
"""The rule these tables were written for; the other mappings' tables: tests/unit/policy/test_served_mapping.py."""


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
    out = to_extender_scores(np.array(raw, float), np.array(allowed, bool), MINMAX)
    assert out.tolist() == expected and out.dtype == np.int64


def test_score_rule_is_monotone():
    rng = np.random.default_rng(0)
    for _ in range(200):
        raw = rng.normal(size=20)
        out = to_extender_scores(raw, np.ones(20, bool), MINMAX)
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


@pytest.mark.parametrize("mode, cool_node, expected", [
    ("prefer-cool", True, {1: "hot", 2: "hot"}),    # a cool node passes: the hot ones are filtered either way
    ("strict", True, {1: "hot", 2: "hot"}),
    ("prefer-cool", False, {}),                       # every fit node hot: prefer-cool filters none of them
    ("strict", False, {0: "hot", 1: "hot", 2: "hot"}),  # strict: the pod has nowhere to go
    ("off", True, {}),
])
def test_prefer_cool_never_filters_every_fit_node_for_heat(mode, cool_node, expected):
    usage = [[0 if cool_node else 6, 0, 0, 0], [6, 0, 0, 0], [7, 0, 0, 0], [0, 0, 0, 0]]
    s = snap(4, usage=usage, requested=[[0, 0], [0, 0], [0, 0], [7.5, 0]])  # n3 does not fit by requests
    reasons = filter_reasons(s, POD, Thresholds(mode=mode), max_usage_age=60)
    passing = passes_filter(s, POD, Thresholds(mode=mode), max_usage_age=60)
    assert set(np.flatnonzero(~passing).tolist()) == set(reasons)  # the shadow's mask: the same checks
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


@pytest.mark.parametrize("mode", ["prefer-cool", "prefer-fit", "strict", "off"])
def test_the_simulators_hot_filter_is_the_extenders(mode):
    """The simulator's served mode (policy.served.Served) refuses exactly the nodes filter_reasons refuses."""
    from policy.served import Served

    rng = np.random.default_rng(3)
    for _ in range(100):
        n = 6
        usage = rng.random((n, 4)) * [8.0, 32.0, 1000.0, 500.0]
        s = snap(n, usage=usage, age=rng.choice([0.0, 30.0, 120.0], size=n),
                 requested=rng.choice([0.0, 7.5], size=(n, 2), p=[0.8, 0.2]))
        pod = PodView(requests=[0.5, 1.0], demand=rng.random(4) * [4.0, 8.0, 300.0, 100.0], demand_source="learned")
        reasons = filter_reasons(s, pod, Thresholds(mode=mode), max_usage_age=60)
        served = Served(make_scorer("demand-aware"), 10, mode=mode, max_usage_age=60).score(s, pod)
        assert sorted(reasons) == np.flatnonzero(np.isneginf(served)).tolist()


@pytest.mark.parametrize("mode", ["prefer-cool", "prefer-fit", "strict", "off"])
def test_the_filter_from_the_encoder_s_mask_is_the_filter(mode):
    """Given the encoder's mask (readiness, a slot, requests), narrowed as shadow mode narrows readiness to the
    nodes a pod could be bound to, ``passes_filter`` judges heat alone and passes exactly the nodes it passes on
    the snapshot so narrowed."""
    from dataclasses import replace

    from policy.features import feasible_mask

    rng = np.random.default_rng(5)
    for _ in range(200):
        n = 8
        s = snap(n, usage=rng.random((n, 4)) * [8.0, 32.0, 1000.0, 500.0], age=rng.choice([0.0, 30.0, 120.0], size=n),
                 requested=rng.choice([0.0, 6.0, 7.0, 7.5, 8.0], size=(n, 2)), pods=rng.choice([0.0, 110.0], size=n),
                 ready=rng.random(n) > 0.2)
        pod = PodView(requests=[1.0, 1.0], demand=rng.random(4) * [4.0, 8.0, 300.0, 100.0], demand_source="learned")
        blocked = rng.random(n) < 0.3
        th = Thresholds(mode=mode)
        narrowed = replace(s, ready=s.ready & ~blocked)
        want = passes_filter(narrowed, pod, th, max_usage_age=60)
        got = passes_filter(s, pod, th, max_usage_age=60, feasible=feasible_mask(s, pod) & ~blocked)
        assert got.tolist() == want.tolist()


# A whole-core pod with flat requests (0.1 core), an idle quarter-core node and a busy 1-core node.
SMALL_AND_BUSY = ClusterSnapshot(
    names=("small", "big"), capacity=np.array([[0.25, 1.0, 1000.0, 500.0], [1.0, 4.0, 1000.0, 500.0]]),
    requested=np.zeros((2, 2)), usage=np.array([[0.0, 0.0, 0.0, 0.0], [0.7, 0.0, 0.0, 0.0]]),
    usage_age=np.zeros(2), assumed=np.zeros((2, 4)), pods=np.zeros(2), max_pods=np.full(2, 110.0),
    ready=np.ones(2, bool))
WHOLE_CORE = PodView(requests=[0.1, 0.1], demand=[1.0, 0.1, 0.0, 0.0], demand_source="learned", name="job")


def test_prefer_fit_does_not_send_a_whole_core_pod_to_an_idle_small_node():
    cool = filter_reasons(SMALL_AND_BUSY, WHOLE_CORE, Thresholds(mode="prefer-cool"), max_usage_age=60)
    assert cool == {1: "hot node: cpu usage 70% >= threshold 65%"}, "prefer-cool: only the small node is left"
    fit = filter_reasons(SMALL_AND_BUSY, WHOLE_CORE, Thresholds(mode="prefer-fit"), max_usage_age=60)
    assert fit == {}, "with the pod on it the small node is hot too (400%): the scores choose"
    strict = filter_reasons(SMALL_AND_BUSY, WHOLE_CORE, Thresholds(mode="strict"), max_usage_age=60)
    assert strict == {1: "hot node: cpu usage 70% >= threshold 65%"}, "strict judges the node as it is"


def test_prefer_fit_still_keeps_a_small_pod_off_the_hot_node():
    small_pod = PodView(requests=[0.1, 0.1], demand=[0.1, 0.1, 0.0, 0.0], demand_source="learned", name="tiny")
    reasons = filter_reasons(SMALL_AND_BUSY, small_pod, Thresholds(mode="prefer-fit"), max_usage_age=60)
    assert reasons == {1: "hot node: cpu usage 70% + pod 10% >= threshold 65%"}  # small node: 0% + 40%: cool


def test_an_ensemble_is_served_as_a_model_its_raw_values_the_members_mean(tmp_path):
    from extender.decide import model_policy
    from policy.ensemble import main as build
    from policy.features import encode
    from policy.model import N_INPUTS, load_model, save_model

    rng = np.random.default_rng(5)
    paths = [save_model(tmp_path / name, [rng.normal(size=(N_INPUTS, 8)), rng.normal(size=(8, 1))],
                        [np.zeros(8), np.zeros(1)], meta={"version": name}) for name in ("a", "b")]
    assert build(["--out", str(tmp_path / "e.npz"), *map(str, paths)]) == 0
    policy = model_policy(load_model(tmp_path / "e.npz"), MINMAX)
    assert policy.from_features and policy.version == "e-k2"
    s = snap(4, usage=[[1, 2, 10, 5], [6, 20, 500, 100], [2, 4, 50, 50], [7, 30, 900, 400]])
    got = score(s, POD, policy, max_usage_age=60.0)
    enc = encode(s, POD, max_usage_age=60.0)
    want = np.mean([load_model(p).q_values(enc) for p in paths], axis=0)
    np.testing.assert_array_equal(got.raw, want)
    assert got.scores.tolist() == to_extender_scores(want, enc.mask, MINMAX).tolist()


def test_top_positions_are_a_stable_argsorts_first_k():
    from extender.runtime import top_positions

    rng = np.random.default_rng(26)
    for n, k, hi in ((0, 10, 10), (3, 10, 10), (10, 10, 10), (5000, 10, 10), (50, 10, 2), (50, 10, 1), (40, 3, 1000)):
        scores = rng.integers(0, hi + 1, n)
        assert top_positions(scores, k) == np.argsort(-scores, kind="stable")[:k].tolist()
    assert top_positions(np.array([0, 10, 10, 3, 10]), 2) == [1, 2]
