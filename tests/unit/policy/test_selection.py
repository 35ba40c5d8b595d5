"""``policy.selection``: the figure a selection rule reads, and when a check replaces the kept one."""

import math

import pytest

from policy.selection import RULES, case_means, improves, served_ratio

NAN = float("nan")


@pytest.mark.parametrize(("figure", "best", "kept"), [
    (0.5, None, True),     # nothing kept yet: the first check is, so a run always exports
    (NAN, None, True),     # ... even a check without a figure
    (0.4, 0.5, True),      # lower is better
    (0.5, 0.5, False),     # a tie keeps the earlier check
    (0.6, 0.5, False),
    (NAN, 0.5, False),     # no figure never replaces one
    (0.9, NAN, True),      # a figure replaces a kept check that had none
    (math.inf, 0.5, False),
])
def test_a_check_replaces_the_kept_one_only_when_its_figure_is_lower(figure, best, kept):
    assert improves(figure, best) is kept


def test_the_rules_name_the_figure_they_minimise():
    assert RULES == {"argmax": "dqn", "served": "served_ratio"}


def _rows(policy, excess_by_case):
    """Per-episode rows: two seeds per case, the given figures as their mean."""
    return [{"scenario": fam, "load": load, "policy": policy, "excess_slowdown": x + d}
            for (fam, load), x in excess_by_case.items() for d in (-0.01, 0.01)]


def test_case_means_average_a_policys_episodes_per_family_and_load():
    ex = case_means(_rows("dqn:m", {("a", 0.9): 0.10, ("a", 1.3): 0.30}))
    assert ex == pytest.approx({("a", 0.9, "dqn:m"): 0.10, ("a", 1.3, "dqn:m"): 0.30})


def test_the_served_ratio_is_the_geometric_mean_over_cases_of_the_excess_over_the_best_heuristics():
    # case a/0.9: best heuristic lookahead 0.05, model 0.10 -> 2; case a/1.3: best default-k8s 0.20, model 0.10
    # -> 0.5; case b/0.9: every heuristic below the noise floor (0.005) -> left out
    heuristics = {"default-k8s": {("a", 0.9): 0.20, ("a", 1.3): 0.20, ("b", 0.9): 0.002},
                  "demand-aware": {("a", 0.9): 0.08, ("a", 1.3): 0.40, ("b", 0.9): 0.003},
                  "lookahead": {("a", 0.9): 0.05, ("a", 1.3): 0.30, ("b", 0.9): 0.004}}
    rows = [r for name, cases in heuristics.items() for r in _rows(name, cases)]
    rows += _rows("dqn:m", {("a", 0.9): 0.10, ("a", 1.3): 0.10, ("b", 0.9): 0.5})
    assert served_ratio(case_means(rows), "dqn:m") == pytest.approx(1.0)
    rows += _rows("dqn:n", {("a", 0.9): 0.05, ("a", 1.3): 0.05, ("b", 0.9): 0.0})
    assert served_ratio(case_means(rows), "dqn:n") == pytest.approx(0.5)
