"""The tenants scenario's draw (``policy.tenants``): determinism by seed, distinct seed-chosen nodes, use far above
request, and the duty cycle's levels and edges."""

from __future__ import annotations

import pytest

from policy.labworld import REAL_NODES
from policy.tenants import (
    TENANT_HIGH,
    TENANT_LOW,
    TENANT_REQUEST_SHARE,
    TENANTS,
    Tenant,
    draw_tenants,
)

QUOTAS = [s.cpu_millis for s in REAL_NODES]  # 250 / 500 / 500 / 1000
ISOLATED = [q * 2 // 5 for q in QUOTAS]  # 100 / 200 / 200 / 400 under host isolation


def test_a_seed_draws_the_same_tenants_every_time_and_seeds_differ() -> None:
    assert draw_tenants(7, QUOTAS) == draw_tenants(7, QUOTAS)
    assert len({draw_tenants(seed, QUOTAS) for seed in range(20)}) == 20


def test_tenants_go_on_distinct_seed_chosen_nodes() -> None:
    drawn = [draw_tenants(seed, QUOTAS) for seed in range(200)]
    assert all(len(ts) == TENANTS and len({t.node for t in ts}) == TENANTS for ts in drawn)
    assert {t.node for ts in drawn for t in ts} == set(range(len(QUOTAS)))  # every node is chosen by some seed
    assert len({tuple(t.node for t in ts) for ts in drawn}) == 6  # every pair of the four nodes


@pytest.mark.parametrize("quotas", [QUOTAS, ISOLATED])
def test_a_tenant_uses_much_more_than_it_asks_for_in_shares_of_its_own_node(quotas) -> None:
    for seed in range(100):
        for t in draw_tenants(seed, quotas):
            quota = quotas[t.node]
            assert t.request_m == max(1, round(quota * TENANT_REQUEST_SHARE))
            assert TENANT_HIGH[0] * quota - 1 <= t.high_m <= TENANT_HIGH[1] * quota
            assert TENANT_LOW[0] * quota - 1 <= t.low_m <= TENANT_LOW[1] * quota
            assert t.low_m >= 2 * t.request_m and t.high_m >= 10 * t.request_m  # use > request, always
            assert 0 < t.high_s < t.period_s and 0 <= t.phase_s <= t.period_s


def test_the_draw_follows_the_nodes_when_isolation_scales_them() -> None:
    for seed in range(20):
        full, scaled = draw_tenants(seed, QUOTAS), draw_tenants(seed, ISOLATED)
        assert [(t.node, t.period_s, t.high_s, t.phase_s) for t in full] == [
            (t.node, t.period_s, t.high_s, t.phase_s) for t in scaled]


@pytest.mark.parametrize("count", [-1, 5])
def test_more_tenants_than_nodes_is_refused(count) -> None:
    with pytest.raises(ValueError, match="node of its own"):
        draw_tenants(1, QUOTAS, count)


CYCLE = Tenant(node=0, request_m=10, high_m=300, low_m=80, period_s=40.0, high_s=10.0, phase_s=5.0)


@pytest.mark.parametrize(("t", "use_m", "next_change"), [
    (0.0, 300, 5.0),     # 5 s into the cycle: busy until 10 s into it
    (4.9, 300, 5.0),
    (5.0, 80, 35.0),     # quiet for the cycle's other 30 s
    (34.0, 80, 35.0),
    (35.0, 300, 45.0),   # the next cycle
    (75.0, 300, 85.0),
])  # fmt: skip
def test_the_duty_cycle_table(t, use_m, next_change) -> None:
    assert CYCLE.use_m(t) == use_m
    assert CYCLE.next_change(t) == pytest.approx(next_change)


def test_next_change_always_moves_on_even_at_an_edge_up_to_float_error() -> None:
    t = 0.0
    for _ in range(1000):
        after = CYCLE.next_change(t)
        assert after > t
        t = after
    assert t == pytest.approx(5.0 + 499 * 40.0 + 30.0, rel=1e-12)  # two changes a cycle, none lost or repeated
