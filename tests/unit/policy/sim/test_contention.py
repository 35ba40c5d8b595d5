"""Table tests of the contention model (hand-computed)."""

import numpy as np
import pytest

from policy.sim.contention import fair_rates, node_usage, scaled_capacity

STD = (4.0, 16.0, 125.0, 200.0)
ONE_CORE = (1.0, 8.0, 100.0, 100.0)

CASES = [
    # (name, demands, capacity, expected rates)
    ("empty node", [], STD, []),
    ("alone, fits", [(2.0, 1.0, 1.0, 2.0)], STD, [1.0]),
    ("alone, wants 8 cores of 4", [(8.0, 1.0, 0.0, 0.0)], STD, [0.5]),
    ("two cpu jobs share one core", [(1.0, 1.0, 0, 0), (1.0, 1.0, 0, 0)], ONE_CORE, [0.5, 0.5]),
    ("three net jobs on 125 MB/s", [(0.5, 1, 60, 0)] * 3, STD, [125 / 180] * 3),
    ("cpu and net jobs do not interfere", [(2, 1, 1, 2), (0.5, 1, 60, 0.5)], STD, [1.0, 1.0]),
    # disk job frozen at 0.5 by disk (2 x 200 demand on 200); cpu left: 4 - 0.5*2*1 = 3 for the cpu job (wants 4)
    ("work conserving: disk-bound job leaves cpu",
     [(1.0, 1, 0, 200.0), (1.0, 1, 0, 200.0), (4.0, 1, 0, 0)], STD, [0.5, 0.5, 0.75]),
    # cpu saturates first at t = 4 / (2 + 4) = 2/3 -> both freeze (both use cpu)
    ("both on the saturated resource", [(2.0, 1, 0, 100.0), (4.0, 1, 0, 0)], STD, [2 / 3, 2 / 3]),
    # memory 24 GiB on 16: every rate x 16/24
    ("memory thrash", [(1.0, 12.0, 0, 0), (1.0, 12.0, 0, 0)], STD, [2 / 3, 2 / 3]),
    ("memory-only job is never frozen", [(0, 1, 0, 0), (8, 1, 0, 0)], STD, [1.0, 0.5]),
    # straggler halves cpu: 2 cores, job wants 2 -> full speed; two jobs -> 0.5
    ("straggler at 0.5", [(2.0, 1, 0, 0), (2.0, 1, 0, 0)], scaled_capacity(STD, 0.5), [0.5, 0.5]),
]


@pytest.mark.parametrize("name,demands,capacity,expected", CASES, ids=[c[0] for c in CASES])
def test_fair_rates(name, demands, capacity, expected):
    assert fair_rates(demands, capacity) == pytest.approx(expected)


@pytest.mark.parametrize("name,demands,capacity,expected", CASES, ids=[c[0] for c in CASES])
def test_usage_never_above_capacity(name, demands, capacity, expected):
    rates = fair_rates(demands, capacity)
    usage = node_usage(demands, rates, capacity)
    assert all(u <= c * (1 + 1e-9) for u, c in zip(usage, capacity, strict=True))
    assert all(0.0 <= x <= 1.0 for x in rates)


def test_max_min_fair_a_saturated_resource_is_fully_used():
    demands = [(3.0, 1, 10, 0), (1.0, 1, 100, 0), (2.0, 1, 50, 0)]
    rates = fair_rates(demands, STD)
    used = node_usage(demands, rates, STD)
    # some rate resource is saturated, or every job runs at full speed
    assert any(abs(used[r] - STD[r]) < 1e-9 for r in (0, 2, 3)) or rates == [1.0] * 3


def test_scaled_capacity_keeps_memory():
    assert scaled_capacity(STD, 0.25) == (1.0, 16.0, 31.25, 50.0)


@pytest.mark.parametrize("seed", range(20))
def test_every_slowed_job_has_a_bottleneck(seed):
    """The defining property of max-min fairness: a job below rate 1 uses a saturated resource on which no
    other job runs faster (memory kept below capacity so thrash does not apply)."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 12))
    demands = [tuple(float(v) for v in row) for row in rng.choice([0.0, 0.5, 1.0, 2.0, 60.0, 80.0], size=(k, 4))]
    demands = [(d[0], 0.1, d[2], d[3]) for d in demands]
    rates = fair_rates(demands, STD)
    used = node_usage(demands, rates, STD)
    for j, x in enumerate(rates):
        if x < 1.0 - 1e-9:
            assert any(demands[j][r] > 0 and used[r] >= STD[r] * (1 - 1e-6)
                       and all(rates[i] <= x + 1e-9 for i in range(k) if demands[i][r] > 0)
                       for r in (0, 2, 3)), (demands, rates)


def test_a_stragglers_monitor_reads_its_slowdown():
    cap = (4.0, 16.0, 100.0, 100.0)
    dem = [(2.0, 1.0, 10.0, 0.0), (2.0, 1.0, 0.0, 10.0)]
    slow = scaled_capacity(cap, 0.5)
    rates = fair_rates(dem, slow)
    assert rates == pytest.approx([0.5, 0.5])  # 2 effective cores for 4 cores of demand
    # Half speed on a half-speed node: the node reads as fully busy, as a normal node running at full speed.
    assert node_usage(dem, rates, cap, 0.5) == pytest.approx((4.0, 2.0, 10.0, 10.0))
    assert node_usage(dem, rates, cap) == pytest.approx((2.0, 2.0, 5.0, 5.0))  # the old, idle-looking reading
