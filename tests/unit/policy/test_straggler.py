"""The straggler scenario's fault rules: the pilot's draw kept seed for seed, the main protocol's where the work is."""

from __future__ import annotations

from collections import Counter

import pytest

from policy.labworld import REAL_NODES
from policy.straggler import CUT_SEEN, RULES, Fault, break_even_s, draw_fault

NODES = [(s.name, s.cpu_millis) for s in REAL_NODES]
ISOLATED = [(name, cpu * 0.4) for name, cpu in NODES]  # host isolation's 100/200/200/400 m


def test_the_pilot_rule_draws_the_faults_the_pilot_ran() -> None:
    # results/lab/straggler-pilot-2026-12-07/events.csv: 100->27 on rn-small for good, 200->50 on rn-medium
    # restored at 61.2-61.9 s, 400->191 on rn-large restored at 69.6-70.6 s (the drawn times, as the arms met them)
    ran = {501: ("rn-small", 27, None), 502: ("rn-medium", 50, 60.9), 503: ("rn-large", 191, 69.4)}
    for seed, (node, quota_m, restore) in ran.items():
        f = draw_fault("seed", seed, ISOLATED, at_s=20.0)
        assert (f.node, f.quota_m(dict(ISOLATED)[f.node]), f.restore_s) == (node, quota_m, restore)


@pytest.mark.parametrize("rule", list(RULES))
def test_a_rule_draws_within_its_ranges_the_same_for_a_seed_on_scaled_nodes(rule: str) -> None:
    r = RULES[rule]
    drawn = [draw_fault(rule, seed, NODES, at_s=20.0) for seed in range(2000)]
    for f in drawn:
        assert r.cut[0] <= f.cut <= r.cut[1]
        assert f.restore_s is None or r.restore_after_s[0] - 0.1 <= f.restore_s - 20.0 <= r.restore_after_s[1] + 0.1
    assert 0.45 < sum(f.restore_s is None for f in drawn) / len(drawn) < 0.55  # permanent in about half
    assert [draw_fault(rule, s, ISOLATED, at_s=20.0) for s in range(200)] == drawn[:200]


def test_the_loaded_rule_hits_the_nodes_that_carry_the_work_by_their_cpu_never_the_smallest() -> None:
    share = Counter(draw_fault("seed-loaded", seed, NODES, at_s=20.0).node for seed in range(4000))
    assert "rn-small" not in share
    assert share["rn-large"] / 4000 == pytest.approx(0.5, abs=0.03)
    assert share["rn-medium"] / 4000 == pytest.approx(0.25, abs=0.03)
    assert share["rn-medium-mem"] / 4000 == pytest.approx(0.25, abs=0.03)
    assert RULES["seed-loaded"].cut[0] == CUT_SEEN


def test_the_rules_draw_apart_and_an_unknown_rule_is_a_key_error() -> None:
    pilot = [draw_fault("seed", s, NODES, at_s=20.0) for s in range(50)]
    assert pilot != [draw_fault("seed-loaded", s, NODES, at_s=20.0) for s in range(50)]
    with pytest.raises(KeyError):
        draw_fault("seed-heavy", 1, NODES, at_s=20.0)


def test_a_quota_is_the_node_s_cpu_over_the_cut_at_least_the_floor() -> None:
    f = Fault("rn-large", 20.0, 2.5, None)
    assert (f.quota_m(400), f.quota_m(400, floor_m=200), f.quota_m(30, floor_m=10)) == (160, 200, 12)


@pytest.mark.parametrize(("cut", "check_s", "slow_checks", "restart_s", "expected"), [
    (2.0, 5.0, 2, 10.0, 12.0 + (10.0 + 2.5) / 0.5),   # 37 s
    (4.0, 5.0, 2, 10.0, 12.0 + (10.0 + 1.25) / 0.75),  # 27 s
    (2.5, 10.0, 3, 20.0, 32.0 + (20.0 + 2.0) / 0.6),  # the shipped controller's knobs: 68.7 s
])
def test_break_even_is_the_detection_delay_plus_the_move_s_cost_over_what_the_cut_takes(
        cut, check_s, slow_checks, restart_s, expected) -> None:
    got = break_even_s(check_s=check_s, slow_checks=slow_checks, rate_lag_s=2.0, restart_s=restart_s,
                       checkpoint_s=5.0, cut=cut)
    assert got == pytest.approx(expected)
