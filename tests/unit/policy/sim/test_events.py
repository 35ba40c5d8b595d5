"""Stragglers and node failures have their documented effect."""

import numpy as np
import pytest

from policy.sim import ConfigError, JobSpec, NodeFailure, Nodes, SimConfig, Simulator, Straggler, first_feasible, run
from policy.sim.events import random_stragglers

NODE = (1.0, 8.0, 100.0, 100.0)


def sim_of(jobs, events, n_nodes=1, **cfg):
    cap = np.array([NODE] * n_nodes)
    nodes = Nodes(tuple(f"n{i}" for i in range(n_nodes)), ("t",) * n_nodes, cap, np.full(n_nodes, 110.0))
    return Simulator(SimConfig(events=tuple(events), **cfg), seed=0, nodes=nodes, jobs=jobs)


def job(submit=0.0, work=20.0):
    return JobSpec("cpu", work, (0.1, 0.1), (1.0, 0.5, 0.0, 0.0), submit=submit)


@pytest.mark.parametrize("events,finish", [
    ([], 20.0),
    ([Straggler(0, 0.0, 1000.0, 0.5)], 40.0),                       # whole run at half speed
    ([Straggler(0, 5.0, 10.0, 0.5)], 25.0),                         # 5 full + 10 at half (5) + 10 full
    ([Straggler(0, 5.0, 10.0, 0.5), Straggler(0, 5.0, 10.0, 0.5)], 27.5),  # overlapping: factor 0.25
    ([Straggler(0, 100.0, 10.0, 0.5)], 20.0),                       # after the job ended
])
def test_straggler_slows_the_node(events, finish):
    result = run(sim_of([job()], events), first_feasible)
    assert result.jct.tolist() == pytest.approx([finish])
    assert result.excess_integral == pytest.approx(finish / 20.0 - 1.0)


def test_failure_restarts_jobs_elsewhere_from_scratch():
    sim = sim_of([job(work=10.0)], [NodeFailure(0, at=5.0)], n_nodes=2)
    result = run(sim, first_feasible)
    assert result.restarts == 1 and result.finished == 1
    assert result.jct.tolist() == pytest.approx([15.0])  # 5 lost, then 10 on node 1
    assert result.excess_integral == pytest.approx(0.5)
    assert not sim.fleet.ready[0]


def test_failed_node_comes_back_and_waiting_pods_use_it():
    sim = sim_of([job(work=10.0)], [NodeFailure(0, at=5.0, duration=20.0)], n_nodes=1)
    result = run(sim, first_feasible)
    assert result.restarts == 1 and result.jct.tolist() == pytest.approx([35.0])
    assert result.excess_integral == pytest.approx(2.5)


def test_permanent_failure_of_the_only_node_leaves_pods_unschedulable():
    result = run(sim_of([job(work=10.0)], [NodeFailure(0, at=5.0)]), first_feasible)
    assert (result.finished, result.unschedulable, result.restarts) == (0, 1, 1)


@pytest.mark.parametrize("make", [
    lambda: Straggler(0, 0.0, 10.0, factor=0.0), lambda: Straggler(0, 0.0, 0.0), lambda: NodeFailure(0, at=-1.0),
])
def test_bad_events(make):
    with pytest.raises(ConfigError):
        make()


def test_event_on_a_missing_node_is_refused():
    with pytest.raises(ConfigError, match="node 3"):
        sim_of([job()], [Straggler(3, 0.0, 10.0)])


def test_random_stragglers_are_seeded():
    a = random_stragglers(50, 100.0, np.random.default_rng(1), per_node=0.2)
    assert a == random_stragglers(50, 100.0, np.random.default_rng(1), per_node=0.2) and 3 < len(a) < 20
