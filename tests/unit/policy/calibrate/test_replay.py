"""Replaying a measured run: hand-checkable cases of the predicted run slowdown."""

from __future__ import annotations

import pytest

from policy.calibrate.labdata import LabEvent
from policy.calibrate.replay import Machine, replay
from policy.sim.sharing import ORIGINAL, ContentionParams

from .synthetic import NODES, job

EQUAL = ContentionParams(cpu_share="equal")
SHARES = ContentionParams(cpu_share="requests")


def predicted(jobs, params, events=()) -> dict[str, float]:
    return {p.job.job: p.predicted for p in replay(jobs, NODES, list(events), params)}


@pytest.mark.parametrize("params", [ORIGINAL, EQUAL, SHARES])
def test_two_cpu_jobs_on_a_node_that_fits_one_run_twice_as_long(params) -> None:
    # each uses a full core alone; the 250m node caps that at 250m, and solo_s was measured at 250m
    jobs = [job("a", cpu_request=100), job("b", cpu_request=100)]
    assert predicted(jobs, params) == pytest.approx({"a": 2.0, "b": 2.0})


def test_cpu_shares_follow_requests() -> None:
    # 100m vs 300m requests: b gets 3/4 of the quota and ends at 80 s; a has done 20 s of work and runs
    # the remaining 40 s alone, ending at 120 s
    jobs = [job("a", cpu_request=100), job("b", cpu_request=300)]
    assert predicted(jobs, SHARES) == pytest.approx({"a": 2.0, "b": 80 / 60})
    assert predicted(jobs, ORIGINAL) == pytest.approx({"a": 2.0, "b": 2.0})


def test_a_job_alone_on_a_larger_node_runs_at_its_solo_speed() -> None:
    assert predicted([job("a", "large"), job("b", "small", start=10)], ORIGINAL) == pytest.approx({"a": 1, "b": 1})


def test_a_quota_cut_slows_the_node_from_its_time_on() -> None:
    # alone at 1000m until 30 s, then 500m: the remaining 30 s of work take 60 s
    events = [LabEvent(1, "default", 30.0, "large", "cpu_quota_cut", "1000->500", 500.0)]
    assert predicted([job("a", "large")], ORIGINAL, events) == pytest.approx({"a": 1.5})
    events = [LabEvent(1, "default", 30.0, "large->small", "migration j1", "3.5")]
    assert predicted([job("a", "large")], ORIGINAL, events) == pytest.approx({"a": 1.0})


def test_an_unscored_job_is_background_load_for_its_measured_interval() -> None:
    # b migrated away: it is not predicted, but it shared the node for its measured 30 s
    jobs = [job("a"), job("b", migrations=1, finish=30.0)]
    assert predicted(jobs, ORIGINAL) == pytest.approx({"a": 1.25})


def test_later_start_and_staggered_jobs() -> None:
    # b joins at 30 s: a has 30 s left, both at 1/2 until a ends at 90 s; b has done 30 s and ends at 120 s
    jobs = [job("a"), job("b", start=30.0)]
    assert predicted(jobs, ORIGINAL) == pytest.approx({"a": 1.5, "b": 1.5})


def test_net_jobs_share_the_shaped_link_unless_links_are_ignored() -> None:
    # two 16 Mbit/s streams on a 20 Mbit/s link: each gets 10, 1.6x; with in-pod sinks only their cpu
    # (150m each on the 250m quota) is shared: 1.2x
    jobs = [job("a", kind="net"), job("b", kind="net")]
    shaped = {p.job.job: p.predicted for p in replay(jobs, NODES, [], ORIGINAL)}
    free = {p.job.job: p.predicted for p in replay(jobs, NODES, [], ORIGINAL, machine=Machine(links=False))}
    assert shaped == pytest.approx({"a": 1.6, "b": 1.6})
    assert free == pytest.approx({"a": 1.2, "b": 1.2})


def test_a_busy_host_shares_its_cpu_equally_between_busy_nodes() -> None:
    jobs = [job("a"), job("b", "large")]
    # 1.125 cores for nodes that want 0.25 and 1.0: the small one keeps its 0.25, the large one gets 0.875
    # until a ends at 60 s, then its whole core: 52.5 s of work done, 7.5 s to go
    host = {p.job.job: p.predicted for p in replay(jobs, NODES, [], ORIGINAL, machine=Machine(host_cpu_m=1125))}
    assert host == pytest.approx({"a": 1.0, "b": 67.5 / 60})
    # 0.4 cores: 0.2 each; a (0.25 alone) ends at 75 s, b has done 15 s of work and runs the other 45 s
    # at 0.4 of its core: 112.5 s more
    host = {p.job.job: p.predicted for p in replay(jobs, NODES, [], ORIGINAL, machine=Machine(host_cpu_m=400))}
    assert host == pytest.approx({"a": 1.25, "b": 187.5 / 60})


def test_the_host_share_can_follow_the_measured_usage() -> None:
    # the nodes used 500m together in the sample ending at 30 s: the job on the large node had half a core
    # (15 s of work); a zero sample says nothing, so from then on it runs at full speed: 45 s more
    usage = [(30.0, 500.0), (1000.0, 0.0)]
    by_usage = replay([job("a", "large")], NODES, [], ORIGINAL, machine=Machine(host_from_usage=True), usage=usage)
    assert [p.predicted for p in by_usage] == pytest.approx([75 / 60])
    ignored = replay([job("a", "large")], NODES, [], ORIGINAL, usage=usage)
    assert [p.predicted for p in ignored] == pytest.approx([1.0])
    # a floor of 750m: 0.75 of a core until 30 s (22.5 s of work), then the floor: 37.5 s / 0.75
    floor = Machine(host_from_usage=True, host_cpu_m=750)
    assert [p.predicted for p in replay([job("a", "large")], NODES, [], ORIGINAL, machine=floor, usage=usage)
            ] == pytest.approx([80 / 60])


def test_a_cpu_bound_job_keeps_its_cpu_work_and_beats_a_solo_run_on_a_busy_host() -> None:
    # alone it used only 500m of the large node's 1000m (the host was busy): 60 s are 30 CPU-seconds, so
    # with the whole core it needs 30 s, and with 500m again 60 s
    solo_on_busy_host = job("a", "large", use=(500, 64, 0, 0))
    bound = Machine(cpu_bound=("cpu",))
    assert [p.predicted for p in replay([solo_on_busy_host], NODES, [], ORIGINAL, machine=bound)] == [0.5]
    busy = Machine(cpu_bound=("cpu",), host_cpu_m=500)
    assert [p.predicted for p in replay([solo_on_busy_host], NODES, [], ORIGINAL, machine=busy)] == [1.0]
    assert [p.predicted for p in replay([solo_on_busy_host], NODES, [], ORIGINAL)] == [1.0]
