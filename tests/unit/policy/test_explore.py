"""Exploration draws the top node uniformly among near-tied nodes, the same for every replica and retry."""

from collections import Counter

import numpy as np
import pytest

from policy.explore import explore

NAMES = ["n-c", "n-a", "n-b", "n-d"]


@pytest.mark.parametrize(("scores", "margin", "tied", "propensity"), [
    ([10, 3, 0, 5], 1.0, {"n-c"}, 1.0),                 # one clear best: nothing to draw
    ([10, 10, 0, 5], 0.0, {"n-c", "n-a"}, 0.5),         # exact ties
    ([10, 9, 0, 5], 1.0, {"n-c", "n-a"}, 0.5),          # within the margin
    ([10, 9, 0, 5], 5.0, {"n-c", "n-a", "n-d"}, 1 / 3),
    ([10, 9, 0, 5], 10.0, {"n-c", "n-a", "n-d"}, 1 / 3),  # a 0 (possibly refused) node is never drawn
])
def test_the_drawn_node_is_the_unique_best_and_its_propensity_is_one_over_the_tied(scores, margin, tied, propensity):
    out = explore(np.array(scores), NAMES, uid="pod-1", margin=margin)
    assert {NAMES[i] for i in out.tied} == tied and out.propensity == pytest.approx(propensity)
    best = out.scores[out.chosen]
    assert best == max(scores) and (out.scores == best).sum() == 1 and NAMES[out.chosen] in tied
    untied = [i for i in range(len(NAMES)) if NAMES[i] not in tied]
    assert out.scores[untied].tolist() == np.array(scores)[untied].tolist()


def test_the_draw_is_uniform_over_pods_and_the_same_for_one_pod():
    scores = np.array([10, 10, 10, 0])
    drawn = Counter(NAMES[explore(scores, NAMES, uid=f"uid-{i}", margin=0).chosen] for i in range(3000))
    assert set(drawn) == {"n-c", "n-a", "n-b"} and all(900 < n < 1100 for n in drawn.values())
    rev_names, rev_scores = list(reversed(NAMES)), scores[::-1].copy()
    forward = NAMES[explore(scores, NAMES, uid="uid-7", margin=0).chosen]
    backward = {rev_names[explore(rev_scores, rev_names, uid="uid-7", margin=0).chosen] for _ in range(3)}
    assert backward == {forward}  # the same pod draws the same node, whatever the request's order


def test_nothing_allowed_draws_nothing():
    assert explore(np.zeros(3, dtype=np.int64), NAMES[:3], uid="u", margin=1) is None
    assert explore(np.zeros(0, dtype=np.int64), [], uid="u", margin=1) is None
