"""Scoring as served: the hot-node filter, the 0-10 rule and kube-scheduler's sum, as the extender does them."""

import numpy as np
import pytest

from policy.baselines import make_scorer
from policy.baselines.default_k8s import DefaultK8s
from policy.features import usage_is_fresh
from policy.served import (
    HOT_THRESHOLDS,
    ScoreMapping,
    Served,
    any_resource,
    heat,
    hot_nodes,
    hot_thresholds_text,
    parse_hot_thresholds,
    served_choice,
    to_extender_scores,
)
from policy.state import PodView
from tests.unit.policy.helpers import snapshot

STD = [4, 16, 125, 200]


@pytest.mark.parametrize("raw,allowed,expected", [
    ([1.0, 2.0, 3.0], [True, True, True], [0, 5, 10]),
    ([1.0, 1.04, 2.0], [True, True, True], [0, 0, 10]),       # 0.4 rounds down
    ([1.0, 1.05, 2.0], [True, True, True], [0, 1, 10]),       # 0.5 rounds half up
    ([5.0, 5.0], [True, True], [10, 10]),                     # all equal: 10
    ([1.0, 9.0, 3.0], [True, False, True], [0, 0, 10]),       # not allowed: 0, and not in min-max
    ([1.0, -np.inf, 3.0], [True, True, True], [0, 0, 10]),    # refused by the scorer: 0
])
def test_extender_scores(raw, allowed, expected):
    assert to_extender_scores(np.array(raw), np.array(allowed), ScoreMapping("minmax")).tolist() == expected


@pytest.mark.parametrize("raw,allowed,keep,expected", [
    ([1.0, 3.0, 2.0], [True, True, True], None, 1),     # the best allowed node
    ([1.0, 3.0, 2.0], [True, False, True], None, 2),    # a refused node is never chosen
    ([3.0, 3.0, 2.0], [True, True, True], 1, 1),        # a tie keeps the bound node (shadow mode)
    ([3.0, 3.0, 2.0], [True, True, True], 2, 0),        # ... only a tie
    ([3.0, 3.0, 2.0], [True, False, True], 1, 0),       # ... only if it is allowed
    ([1.0, 3.0], [False, False], 0, None),              # nothing allowed: no choice
])
def test_served_choice(raw, allowed, keep, expected):
    assert served_choice(np.array(raw), np.array(allowed), keep) == expected


def test_hot_nodes_are_fresh_nodes_at_a_threshold():
    snap = snapshot([STD] * 4, usage=[[2.6, 0, 0, 0], [2.5, 0, 0, 0], [2.6, 0, 0, 0], [0, 15.2, 0, 0]],
                    age=[0, 0, 120, 0])
    assert hot_nodes(snap, max_usage_age=60).tolist() == [True, False, False, True]  # 65 %, 62.5 %, stale, mem 95 %


@pytest.mark.parametrize(("text", "expected"), [
    ("0.65,0.95", (0.65, 0.95, np.inf, np.inf)),
    (" 0.9 , 0.95 ", (0.9, 0.95, np.inf, np.inf)),
    ("0.8,none", (0.8, np.inf, np.inf, np.inf)),
    ("0.9,0.95,0.8,NONE", (0.9, 0.95, 0.8, np.inf)),
])
def test_hot_thresholds_parse_as_the_extenders_four_settings(text, expected):
    assert parse_hot_thresholds(text) == expected
    assert parse_hot_thresholds(hot_thresholds_text(expected)) == expected


@pytest.mark.parametrize(("text", "match"), [
    ("0.65", "CPU,MEM"), ("0.6,0.7,0.8", "CPU,MEM"), ("0.65,hot", "mem must be a number"),
    ("0,0.95", "cpu must be > 0"), ("0.9,0.95,-1,none", "net must be > 0"), ("nan,0.95", "cpu must be > 0"),
])
def test_bad_hot_thresholds_are_refused_naming_the_resource(text, match):
    with pytest.raises(ValueError, match=match):
        parse_hot_thresholds(text)


def test_the_shipped_thresholds_read_as_cpu_and_mem_only_and_a_higher_cpu_threshold_passes_a_node():
    assert hot_thresholds_text(HOT_THRESHOLDS) == "0.65,0.95"
    snap = snapshot([STD] * 2, usage=[[3.2, 1, 0, 0], [3.8, 1, 0, 0]])  # 80 % and 95 % cpu
    assert hot_nodes(snap, parse_hot_thresholds("0.9,0.95")).tolist() == [False, True]
    assert hot_nodes(snap, parse_hot_thresholds("none,none")).tolist() == [False, False]


def test_any_resource_is_any_along_the_resources_and_heat_given_fresh_is_heat():
    rng = np.random.default_rng(2)
    for n in (0, 1, 3, 1000):
        hot = rng.random((n, 4)) < 0.1
        assert np.array_equal(any_resource(hot), hot.any(axis=1))
        assert np.array_equal(any_resource(hot[::-1]), hot[::-1].any(axis=1))  # a view, not contiguous
        assert np.array_equal(any_resource(hot[:, :2]), hot[:, :2].any(axis=1))
    snap = snapshot([[4, 16, 125, 200]] * 3, usage=[[3.9, 1, 1, 1], [np.nan] * 4, [1, 15, 1, 1]], age=[1.0, 1.0, 500.0])
    pod = PodView(requests=np.array([1.0, 1.0]), demand=np.array([1.0, 1.0, 0.0, 0.0]), demand_source="requests")
    for mode in ("prefer-cool", "prefer-fit", "strict", "off"):
        a = heat(snap, pod, mode=mode, max_usage_age=60)
        b = heat(snap, pod, mode=mode, max_usage_age=60, fresh=usage_is_fresh(snap, 60))
        assert a.util.tobytes() == b.util.tobytes() and a.hot.tobytes() == b.hot.tobytes()


def test_served_filters_hot_nodes_and_adds_the_weighted_extender_score():
    # n0: hot; n1 and n2 differ in requests (k8s prefers n2) and in usage (demand-aware prefers n1).
    snap = snapshot([STD] * 3, requested=[[0, 0], [2, 8], [0, 0]], usage=[[3, 1, 0, 0], [0.2, 1, 0, 0], [2, 1, 0, 0]])
    pod = PodView(requests=[0.5, 1], demand=[1, 1, 0, 0], demand_source="learned")
    k8s = DefaultK8s().score(snap, pod)
    assert np.argmax(k8s[1:]) + 1 == 2
    heavy = Served(make_scorer("demand-aware"), 20, mapping=ScoreMapping("minmax")).score(snap, pod)
    assert heavy[0] == -np.inf and np.argmax(heavy) == 1          # weight 20: the extender decides
    assert heavy[1] - k8s[1] == 10 * 20 * 10 and heavy[2] == k8s[2]  # best 10, worst 0 (two allowed nodes)
    light = Served(make_scorer("demand-aware"), 0.01).score(snap, pod)
    assert np.argmax(light) == 2                                  # a tiny weight: kube-scheduler decides


def test_served_prefer_cool_scores_hot_nodes_when_no_fit_node_is_cool():
    snap = snapshot([STD] * 2, usage=[[3, 1, 0, 0], [2.8, 1, 0, 0]])  # both at or above 65 % cpu
    pod = PodView(requests=[0.5, 1], demand=[1, 1, 0, 0], demand_source="learned")
    soft = Served(make_scorer("demand-aware"), 10).score(snap, pod)
    assert np.isfinite(soft).all() and np.argmax(soft) == 1        # placed, on the cooler node
    strict = Served(make_scorer("demand-aware"), 10, mode="strict").score(snap, pod)
    assert np.isneginf(strict).all()                               # strict: the pod waits


def test_prefer_fit_judges_each_node_with_the_pod_on_it():
    # a quarter-core idle node and a 1-core node at 70 %; the pod's requests are flat, its demand a whole core
    snap = snapshot([[0.25, 1, 125, 200], [1, 4, 125, 200]], usage=np.array([[0, 0, 0, 0], [0.7, 0, 0, 0]]))
    big_job = PodView(requests=[0.1, 0.1], demand=[1, 0.1, 0, 0], demand_source="learned")
    assert hot_nodes(snap, max_usage_age=60).tolist() == [False, True]
    assert hot_nodes(snap, max_usage_age=60, pod=big_job, mode="prefer-fit").tolist() == [True, True]
    cool = Served(make_scorer("demand-aware"), 10, mode="prefer-cool").score(snap, big_job)
    assert cool[1] == -np.inf and np.isfinite(cool[0]), "prefer-cool leaves only the small node"
    fit = Served(make_scorer("demand-aware"), 10, mode="prefer-fit").score(snap, big_job)
    assert np.isfinite(fit).all(), "prefer-fit: both would be hot, so neither is filtered"
    small_job = PodView(requests=[0.1, 0.1], demand=[0.1, 0.1, 0, 0], demand_source="learned")
    fit_small = Served(make_scorer("demand-aware"), 10, mode="prefer-fit").score(snap, small_job)
    assert fit_small[1] == -np.inf and np.isfinite(fit_small[0]), "a small pod still avoids the hot node"


def test_off_filters_nothing_and_unknown_modes_are_refused():
    snap = snapshot([STD] * 2, usage=np.array([[4, 1, 0, 0], [0, 1, 0, 0]]))
    pod = PodView(requests=[0.5, 1], demand=[1, 1, 0, 0], demand_source="learned")
    assert np.isfinite(Served(make_scorer("demand-aware"), 10, mode="off").score(snap, pod)).all()
    with pytest.raises(ValueError, match="hot filter mode"):
        Served(make_scorer("demand-aware"), 10, mode="cool")


def test_served_refuses_a_non_positive_weight():
    with pytest.raises(ValueError, match="must be > 0"):
        Served(make_scorer("random"), 0)
