"""Issue #22's bar for the shipped model: scored as served on validation, its excess slowdown is at most 0.9x
the best heuristic's (geometric mean over the cases of the committed ``results/policy/validation-served``,
which ``make evaluate`` regenerates; best heuristic per case = the lowest of default-k8s, demand-aware and
lookahead; the ratio rule is ``results/policy/horizon/report.py``'s, i.e. ``scripts/readme_tables.py``'s)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("horizon_report", ROOT / "results" / "policy" / "horizon" / "report.py")
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

BAR = 0.9


def test_ratio_leaves_out_cases_at_the_physical_limit_and_floors_tiny_ratios():
    ex = {("a", 0.9, "dqn:m"): 0.05, ("a", 0.9, "default-k8s"): 0.2, ("a", 0.9, "demand-aware"): 0.1,
          ("a", 0.9, "lookahead"): 0.125,
          ("b", 1.3, "dqn:m"): 0.3, ("b", 1.3, "default-k8s"): 0.004, ("b", 1.3, "demand-aware"): 0.2,
          ("b", 1.3, "lookahead"): 0.2,
          ("c", 1.3, "dqn:m"): 0.0001, ("c", 1.3, "default-k8s"): 0.5, ("c", 1.3, "demand-aware"): 0.4,
          ("c", 1.3, "lookahead"): 0.3}
    r = report.ratios(ex, "dqn:m")
    assert r == {("a", 0.9): pytest.approx(0.5), ("b", 1.3): None, ("c", 1.3): pytest.approx(0.0001 / 0.3)}
    assert report.geomean(list(r.values())) == pytest.approx((0.5 * 0.01) ** 0.5)  # b out, c floored at 0.01


@pytest.mark.xfail(strict=True, reason="measured 2026-12-02: the shipped model's served validation excess is 0.97x "
                                       "the best heuristic's (band:0.02 at weight 5; 1.09x with min-max at weight "
                                       "10; geometric mean, 12 cases); the bar is 0.9x")
def test_shipped_model_served_validation_excess_is_at_most_0_9x_the_best_heuristics():
    summary = report.readme_tables._read(ROOT / "results" / "policy" / "validation-served" / "summary.csv")
    ex = report.readme_tables._excess(summary)
    assert {p for _, _, p in ex} >= {report.SHIPPED, *report.HEURISTICS}
    assert len({(f, ld) for f, ld, _ in ex}) == 12  # six families at two loads
    assert report.geomean(list(report.ratios(ex, report.SHIPPED).values())) <= BAR
