"""What the simulator shows of running pods' progress and the incoming pod's run time (issue #22)."""

import math

import numpy as np
import pytest

from policy.sim import ConfigError, SimConfig, Simulator
from policy.sim.progress import MIN_REPORT_AGE, DurationLearner, report_time_left
from policy.state import ClusterSnapshot, PodView, RunningProgress, SnapshotError


def test_report_time_left_from_fraction_done_and_time_running():
    assert report_time_left(done=25.0, work=100.0, running_for=10.0) == pytest.approx(30.0)  # 1/4 in 10 s
    assert math.isnan(report_time_left(done=25.0, work=100.0, running_for=MIN_REPORT_AGE / 2))
    assert math.isnan(report_time_left(done=0.0, work=100.0, running_for=60.0))
    assert report_time_left(done=100.0, work=100.0, running_for=60.0) == 0.0


def test_duration_learner_is_the_median_per_class_and_unknown_before_any():
    d = DurationLearner()
    assert math.isnan(d.expected("cpu"))
    for t in (10.0, 30.0, 20.0):
        d.completed("cpu", t)
    d.completed("cpu", math.inf)  # ignored
    assert d.expected("cpu") == 20.0 and math.isnan(d.expected("io"))


def _walk(cfg, seed=3, decisions=60):
    sim = Simulator(cfg, seed=seed)
    seen = []
    for _ in range(decisions):
        pending = sim.next_decision()
        if pending is None:
            break
        snap = sim.snapshot()
        seen.append((snap, pending.pod, sim))
        sim.place(int(np.flatnonzero(sim.feasible_mask())[0]))
    return seen


def test_oracle_shows_each_running_job_with_its_true_time_left_and_work():
    cfg = SimConfig(cluster="standard:2", load=1.3, n_jobs=80, progress_shown="oracle")
    checked = 0
    sim = Simulator(cfg, seed=3)
    for _ in range(40):
        pending = sim.next_decision()
        if pending is None:
            break
        snap, f = sim.snapshot(), sim.fleet
        running = sorted((i, j) for i, js in enumerate(f.on_node) for j in js)
        assert sorted(snap.progress.node.tolist()) == [i for i, _ in running]
        for i, j in running:
            left, work = snap.progress.on(i)
            assert any(w == f.work[j] for w in work)
            assert any(t == pytest.approx((f.work[j] - f.done(j, sim.now)) / f.rate[j]) for t in left)
            checked += 1
        assert pending.pod.expected_duration == sim.jobs[pending.job_id].work
        sim.place(int(np.flatnonzero(sim.feasible_mask())[0]))
    assert checked > 20


def test_reports_learn_run_times_and_hide_young_processes():
    cfg = SimConfig(cluster="standard:2", load=1.3, n_jobs=120, progress_shown="reports")
    seen = _walk(cfg, decisions=120)
    durations = [pod.expected_duration for _, pod, _ in seen]
    assert math.isnan(durations[0]) and any(math.isfinite(d) for d in durations)
    lefts = np.concatenate([snap.progress.time_left for snap, _, _ in seen])
    assert np.isnan(lefts).any() and np.isfinite(lefts).any()


def test_none_shows_nothing():
    snap, pod, _ = _walk(SimConfig(cluster="standard:2", n_jobs=20), decisions=5)[-1]
    assert snap.progress is None and math.isnan(pod.expected_duration)


def test_bad_values_are_refused():
    with pytest.raises(ConfigError, match="progress_shown"):
        SimConfig(progress_shown="psychic")
    with pytest.raises(SnapshotError, match="expected_duration"):
        PodView(requests=[1, 1], demand=[1, 1, 0, 0], expected_duration=0.0)
    with pytest.raises(SnapshotError, match="time_left"):
        RunningProgress(node=[0, 0], time_left=[1.0], duration=[1.0, 2.0])
    with pytest.raises(SnapshotError, match="duration"):
        RunningProgress(node=[0], time_left=[1.0], duration=[-1.0])
    with pytest.raises(SnapshotError, match="outside"):
        ClusterSnapshot(("a",), [[1, 1, 1, 1]], [[0, 0]], [[0, 0, 0, 0]], [0.0], [[0, 0, 0, 0]], [0.0], [10.0],
                        [True], progress=RunningProgress(node=[1], time_left=[1.0], duration=[1.0]))


def test_subset_keeps_and_renumbers_the_chosen_nodes_entries():
    snap = ClusterSnapshot(("a", "b", "c"), [[1, 1, 1, 1]] * 3, [[0, 0]] * 3, [[0, 0, 0, 0]] * 3, [0.0] * 3,
                           [[0, 0, 0, 0]] * 3, [1.0] * 3, [10.0] * 3, [True] * 3,
                           progress=RunningProgress(node=[0, 2, 2], time_left=[1.0, 2.0, 3.0], duration=[4, 5, 6]))
    sub = snap.subset(np.array([2, 1]))
    assert sub.progress.node.tolist() == [0, 0] and sub.progress.time_left.tolist() == [2.0, 3.0]
