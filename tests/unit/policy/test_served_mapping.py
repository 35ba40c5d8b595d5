"""The value-to-score mappings of policy.served: one table per mapping, parsing, and what a band leaves to k8s."""

import numpy as np
import pytest

from policy.baselines.default_k8s import DefaultK8s
from policy.served import MAPPINGS, ScoreMapping, Served, to_extender_scores
from policy.state import PodView
from tests.unit.policy.helpers import snapshot

ALL = [True] * 5


def _scores(mapping: str, raw, allowed=ALL) -> list[int]:
    return to_extender_scores(np.array(raw, float), np.array(allowed, bool), ScoreMapping.parse(mapping)).tolist()


@pytest.mark.parametrize("raw,allowed,expected", [
    ([-0.30, -0.31, -0.40, -0.80, -1.30], ALL, [10, 10, 9, 5, 0]),   # a 0.01 near-tie still spreads 0..10
    ([-0.300, -0.301, -0.301, -0.301, -0.301], ALL, [10, 0, 0, 0, 0]),  # ... however small it is
    ([-1.0, -1.0, -1.0, -1.0, -1.0], ALL, [10, 10, 10, 10, 10]),
    ([-0.3, 5.0, -0.4, -np.inf, -0.5], [True, False, True, True, True], [10, 0, 5, 0, 0]),
])
def test_minmax(raw, allowed, expected):
    assert _scores("minmax", raw, allowed) == expected


@pytest.mark.parametrize("raw,allowed,expected", [
    ([-0.30, -0.31, -0.40, -0.80, -1.30], ALL, [10, 10, 9, 5, 0]),   # band 0.05: -0.31 tied; 0..9 on [-1.3, -0.35]
    ([-0.300, -0.301, -0.301, -0.301, -0.301], ALL, [10, 10, 10, 10, 10]),  # all within the band
    ([-0.30, -0.35, -0.36, -0.36, -0.36], ALL, [10, 10, 0, 0, 0]),   # exactly at the band edge: tied
    ([-0.3, 5.0, -0.4, -np.inf, -0.5], [True, False, True, True, True], [10, 0, 6, 0, 0]),
])
def test_band(raw, allowed, expected):
    assert _scores("band:0.05", raw, allowed) == expected


@pytest.mark.parametrize("raw,allowed,expected", [
    ([-0.30, -0.31, -0.40, -0.80, -1.30], ALL, [10, 10, 8, 0, 0]),   # 0.05 per point; -0.31 is 0.2 of one
    ([-0.300, -0.301, -0.301, -0.301, -0.301], ALL, [10, 10, 10, 10, 10]),
    ([-0.300, -0.325, -0.3251, -0.55, -0.9], ALL, [10, 10, 9, 5, 0]),  # half a point rounds up to a tie
    ([-0.3, 5.0, -0.4, -np.inf, -0.5], [True, False, True, True, True], [10, 0, 8, 0, 6]),
])
def test_linear(raw, allowed, expected):
    assert _scores("linear:0.05", raw, allowed) == expected


@pytest.mark.parametrize("mapping", ["minmax", "band:0.05", "linear:0.05", "linear:0.5"])
def test_every_mapping_is_monotone_keeps_the_best_at_10_and_zeroes_what_is_not_allowed(mapping):
    rng = np.random.default_rng(1)
    for _ in range(200):
        raw = rng.normal(scale=rng.choice([0.01, 0.3, 3.0]), size=12)
        allowed = rng.random(12) < 0.8
        out = to_extender_scores(raw, allowed, ScoreMapping.parse(mapping))
        if not allowed.any():
            assert not out.any()
            continue
        order = np.argsort(raw[allowed])
        assert np.all(np.diff(out[allowed][order]) >= 0)
        assert out[allowed].max() == 10 and not out[~allowed].any() and out.dtype == np.int64


def test_no_allowed_node_scores_zero_everywhere():
    for kind in MAPPINGS:
        mapping = ScoreMapping.parse(kind if kind == "minmax" else f"{kind}:0.1")
        assert to_extender_scores(np.array([1.0, 2.0]), np.zeros(2, bool), mapping).tolist() == [0, 0]


@pytest.mark.parametrize("text,kind,band", [("minmax", "minmax", 0.0), ("band:0.05", "band", 0.05),
                                            (" linear:0.2 ", "linear", 0.2)])
def test_parse_and_print_round_trip(text, kind, band):
    m = ScoreMapping.parse(text)
    assert (m.kind, m.band) == (kind, band) and ScoreMapping.parse(str(m)) == m


@pytest.mark.parametrize("text,message", [
    ("cubic", "must be one of minmax, band, linear"), ("linear", "needs a band > 0"),
    ("band:0", "needs a band > 0"), ("band:-1", "needs a band > 0"), ("linear:nan", "needs a band > 0"),
    ("linear:x", "band must be a number"), ("minmax:0.1", "takes no band"),
])
def test_bad_mappings_are_refused_naming_the_problem(text, message):
    with pytest.raises(ValueError, match=message):
        ScoreMapping.parse(text)


def test_a_near_tie_decides_under_minmax_but_is_left_to_kube_scheduler_within_a_band():
    # Two cool nodes; k8s prefers n1 (fewer requests); the policy prefers n0 by a hair.
    snap = snapshot([[4, 16, 125, 200]] * 2, requested=[[2, 8], [0, 0]])
    pod = PodView(requests=[0.5, 1], demand=[0.5, 1, 0, 0], demand_source="learned")

    class NearTie:
        name = "near-tie"

        def score(self, snap, pod):
            return np.array([-0.100, -0.101])

    k8s = DefaultK8s().score(snap, pod)
    assert np.argmax(k8s) == 1
    assert np.argmax(Served(NearTie(), 1, mapping=ScoreMapping("minmax")).score(snap, pod)) == 0
    for mapping in (ScoreMapping("band", 0.01), ScoreMapping("linear", 0.01)):
        served = Served(NearTie(), 10, mapping=mapping).score(snap, pod)
        assert np.argmax(served) == 1 and served[0] - k8s[0] == served[1] - k8s[1] == 10 * 10 * 10
