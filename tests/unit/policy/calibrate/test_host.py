"""The replay's host models: when the measured usage says the host held the nodes back and what a limit does;
how the system CPUs' recorded load slows a node CPU-second."""

from __future__ import annotations

import pytest

from policy.calibrate.host import HELD_MARGIN_M, HostLimit, held_back, quotas_at, system_busy, system_speed
from policy.calibrate.labdata import LabEvent
from policy.calibrate.replay import Machine, replay
from policy.errors import ConfigError
from policy.sim.calibration import DEFAULT_PATH, read
from policy.sim.sharing import ORIGINAL

from .synthetic import NODES, job

BOUND = ("cpu",)


def limits(jobs, samples, *, margin=25.0, per_node=False, events=()) -> list[HostLimit]:
    return held_back(jobs, NODES, list(events), samples, cpu_bound=BOUND, margin_m=margin, per_node=per_node)


@pytest.mark.parametrize(("jobs", "used", "margin", "total"), [
    # a cpu-bound job through the interval wants the large node's core; 600m used: the host held it back
    ([job("a", "large", start=0, finish=10)], {"large": 600}, 25, 600),
    # it got nearly its core: a deficit under the margin is no limit
    ([job("a", "large", start=0, finish=10)], {"large": 990}, 25, None),
    # it finished inside the interval: the low reading is a job ending, not the host
    ([job("a", "large", start=0, finish=3)], {"large": 300}, 25, None),
    # it started inside the interval: the reading covers time before it ran
    ([job("a", "large", start=3, finish=10)], {"large": 300}, 25, None),
    # an io job wants its use alone (400m): 100m used is 300m short
    ([job("a", "large", kind="io", start=0, finish=10)], {"large": 100}, 25, 100),
    ([job("a", "large", kind="io", start=0, finish=10)], {"large": 100}, 500, None),
    # the small node wants at most its 250m quota, however many jobs it runs
    ([job("a", start=0, finish=10), job("b", start=0, finish=10)], {"small": 240}, 25, None),
    # a zero reading is no reading
    ([job("a", "large", start=0, finish=10)], {"large": 0}, 25, None),
    # nothing running: nothing held back
    ([], {"large": 5}, 0, None),
])
def test_the_nodes_usage_limits_them_only_where_the_host_held_them_back(jobs, used, margin, total) -> None:
    out = limits(jobs, [(2.0, {}), (4.0, used)], margin=margin)
    assert [(h.t_s, h.total_m, dict(h.nodes_m)) for h in out] == [(2.0, None, {}), (4.0, total, {})]


def test_per_node_limits_only_the_node_held_back() -> None:
    jobs = [job("a", "large", start=0, finish=10), job("b", "small", start=0, finish=10)]
    out = limits(jobs, [(2.0, {}), (4.0, {"large": 600, "small": 250})], per_node=True)
    assert [(h.total_m, dict(h.nodes_m)) for h in out] == [(None, {}), (None, {"large": 600})]
    together = limits(jobs, [(2.0, {}), (4.0, {"large": 600, "small": 250})])
    assert together[1].total_m == 850


def test_a_quota_cut_lowers_what_the_node_wants() -> None:
    cut = [LabEvent(1, "default", 1.0, "large", "cpu_quota_cut", "1000->200", 200.0)]
    assert quotas_at(NODES, cut, 0.5) == {"small": 250, "large": 1000}
    assert quotas_at(NODES, cut, 1.0) == {"small": 250, "large": 200}
    jobs = [job("a", "large", start=0, finish=10)]
    assert limits(jobs, [(2.0, {}), (4.0, {"large": 190})], events=cut)[1].total_m is None
    assert limits(jobs, [(2.0, {}), (4.0, {"large": 190})])[1].total_m == 190


@pytest.mark.parametrize(("limit", "slowdown"), [
    # 500m for both nodes: equal shares, the small node's 250m and 250m for a until 30 s (7.5 s of work),
    # then no limit: 52.5 s more
    (HostLimit(30.0, 500.0), 82.5 / 60),
    # 500m for the large node alone: 15 s of work by 30 s, then 45 s more
    (HostLimit(30.0, None, {"large": 500.0}), 75 / 60),
])
def test_a_limit_holds_its_interval_only(limit, slowdown) -> None:
    out = replay([job("a", "large"), job("b", "small")], NODES, [], ORIGINAL, machine=Machine(), limits=[limit])
    assert {p.job.job: p.predicted for p in out} == pytest.approx({"a": slowdown, "b": 1.0})


def test_a_node_limit_and_the_host_limit_both_hold() -> None:
    # large limited to 600m, the host to 700m for both: equal shares of 350m, small needs only its 250m
    # quota, so large gets the other 450m until 30 s (13.5 s of work), then runs free: 46.5 s more
    out = replay([job("a", "large"), job("b", "small")], NODES, [], ORIGINAL,
                 limits=[HostLimit(30.0, 700.0, {"large": 600.0})])
    assert {p.job.job: p.predicted for p in out} == pytest.approx({"a": 76.5 / 60, "b": 1.0})


def test_the_default_margin_is_the_recorded_lab_host() -> None:
    assert read(DEFAULT_PATH)["hosts"]["lab"]["host_cpu_m"] == f"held:{HELD_MARGIN_M:g}"


@pytest.mark.parametrize(("ticks", "busy"), [
    # cumulative (t_s, busy, idle) of the system CPUs: each interval's busy share, stamped at its end
    ([(0.0, 100, 100), (1.0, 150, 150), (2.0, 240, 160)], [(1.0, 0.5), (2.0, 0.9)]),
    # no tick passed: no reading
    ([(0.0, 100, 100), (1.0, 100, 100), (2.0, 200, 100)], [(2.0, 1.0)]),
    # a counter went back (a reset): no reading
    ([(0.0, 100, 100), (1.0, 50, 150), (2.0, 60, 240)], [(2.0, 0.1)]),
    ([(0.0, 100, 100)], []),
    ([], []),
])
def test_system_busy_is_the_share_of_ticks_between_reads(ticks, busy) -> None:
    out = system_busy(ticks)
    assert [t for t, _ in out] == [t for t, _ in busy]
    assert [b for _, b in out] == pytest.approx([b for _, b in busy])


@pytest.mark.parametrize(("slowdown", "speed"), [(0.0, [1.0, 1.0]), (0.3, [0.97, 0.7]), (0.5, [0.95, 0.5])])
def test_system_speed_is_one_minus_k_times_busy(slowdown, speed) -> None:
    assert [s for _, s in system_speed([(1.0, 0.1), (2.0, 1.0)], slowdown)] == pytest.approx(speed)


@pytest.mark.parametrize("slowdown", [-0.1, 1.0, 2.0])
def test_system_speed_refuses_a_slowdown_outside_0_1(slowdown) -> None:
    with pytest.raises(ConfigError, match="slowdown"):
        system_speed([(1.0, 0.5)], slowdown)


@pytest.mark.parametrize(("speed", "slowdown"), [
    # half speed throughout: twice the solo time
    ([(100.0, 0.5)], 2.0),
    # half speed until 30 s (15 s of work), then full: 45 s more
    ([(30.0, 0.5), (100.0, 1.0)], 75 / 60),
    # the first interval holds from 0 s (5 s of work by 10 s, then 55 s); the last after its end (10 s of
    # work by 10 s, 50 s more at 0.8)
    ([(10.0, 0.5), (20.0, 1.0)], 65 / 60),
    ([(10.0, 1.0), (20.0, 0.8)], (10 + 50 / 0.8) / 60),
    ([], 1.0),
])
def test_a_slower_cpu_second_slows_compute_jobs_only(speed, slowdown) -> None:
    for jobs, want in (([job("a", "large"), job("b", "small", kind="io")], {"a": slowdown, "b": 1.0}),
                       ([job("c", "large", kind="net")], {"c": 1.0})):
        out = replay(jobs, NODES, [], ORIGINAL, machine=Machine(cpu_bound=BOUND), speed=speed)
        assert {p.job.job: p.predicted for p in out} == pytest.approx(want)
