"""Issue #22's bar for the shipped model: scored as served on validation, its excess slowdown is at most 0.9x
the best heuristic's (geometric mean over the cases of the committed ``results/policy/validation-served``,
which ``make evaluate`` regenerates; best heuristic per case = the lowest of ``policy.comparison.HEURISTICS``,
default-k8s, demand-aware and lookahead; the ratio rule is ``policy.comparison``'s, tested beside it)."""

from pathlib import Path

import pytest

from policy.comparison import DQN, HEURISTICS, excess_by_case, geometric_mean, ratios, read_summary

ROOT = Path(__file__).resolve().parents[3]
BAR = 0.9


@pytest.mark.xfail(strict=True, reason="measured 2026-12-07: the shipped model, the distilled student, is 0.964x "
                                       "the best heuristic's served validation excess (band:0.02 at weight 5; "
                                       "geometric mean, 12 cases, seeds 0-4; the DQN it replaced 0.966x); the bar is "
                                       "0.9x. Its 0.872x on the fresh seeds 20-59 is no pass: those episodes chose it "
                                       "among eleven candidates (results/policy/fresh-validation)")
def test_shipped_model_served_validation_excess_is_at_most_0_9x_the_best_heuristics():
    ex = excess_by_case(read_summary(ROOT / "results" / "policy" / "validation-served" / "summary.csv"))
    assert {p for _, _, p in ex} >= {DQN, *HEURISTICS}
    assert len({(f, ld) for f, ld, _ in ex}) == 12  # six families at two loads
    assert geometric_mean(ratios(ex, DQN, HEURISTICS).values()) <= BAR
