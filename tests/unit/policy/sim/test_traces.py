"""Trace replay: the generic CSV, the Alibaba adapter on a small fixture (tasks joined to instances),
per-seed windows, and errors naming file/line/field."""

from pathlib import Path

import numpy as np
import pytest

from policy.sim.config import SimConfig, build_episode
from policy.sim.errors import ConfigError, TraceError
from policy.sim.traces import alibaba_use_per_request, load_alibaba, load_csv, sample_alibaba

FIX = Path(__file__).parent / "fixtures"


def test_generic_trace():
    trace = load_csv(FIX / "generic_trace.csv")
    assert [j.kind for j in trace.jobs] == ["cpu", "net", "io", "batch"]
    assert trace.jobs[1].submit == 5.0 and trace.jobs[1].demand == (0.5, 1.0, 60.0, 0.5)
    assert trace.jobs[3].requests == (1.0, 2.0) and trace.skipped == 0


ALI = FIX / "alibaba"


def test_alibaba_joins_instance_usage_to_the_task_plan():
    trace = load_alibaba(ALI)
    jobs = trace.jobs
    assert len(jobs) == 12 and trace.skipped == 0  # one pod per task by default
    first = jobs[0]  # task R23_22 (plan 50 = half a core, 0.3) and its first instance in file order
    assert first.requests == (0.5, pytest.approx(0.3))
    assert first.demand == (pytest.approx(0.74), pytest.approx(0.1), 0.0, 0.0)  # cpu_avg 74, mem_avg 0.1
    assert first.work == 250.0 and first.submit == 0.0  # the instance's runtime, not the task's 268 s
    works = {j.work for j in jobs}
    assert 1.0 in works and 900.0 in works  # a 0 s instance gets min_work, a 2000 s one max_work
    assert all(j.demand[2] == 0.0 and j.demand[3] == 0.0 for j in jobs)  # no net/disk in the trace
    assert jobs[-1].submit == 11.0 and jobs[-1].demand[0] == pytest.approx(0.45)


def test_alibaba_net_disk_only_as_an_explicit_axis():
    jobs = load_alibaba(ALI, io_per_core=(5.0, 10.0)).jobs  # no generator: exactly the median per core
    assert jobs[0].demand[2:] == (pytest.approx(0.74 * 5), pytest.approx(0.74 * 10))
    drawn = load_alibaba(ALI, io_per_core=(5.0, 10.0), rng=np.random.default_rng(0)).jobs
    per_core = {round(j.demand[2] / j.demand[0], 6) for j in drawn if j.demand[0] > 0}
    assert len(per_core) == len([j for j in drawn if j.demand[0] > 0])  # pods differ in I/O intensity
    with pytest.raises(ConfigError, match="trace_io"):
        load_alibaba(ALI, io_per_core=(-1.0, 0.0))


def test_alibaba_time_window_instances_and_limit():
    window = load_alibaba(ALI, start=10.0)
    assert len(window.jobs) == 4 and window.jobs[0].submit == 0.0
    expanded = load_alibaba(ALI, max_instances=3)
    assert len(expanded.jobs) == 13  # R23_22 has two instances in the file
    assert [j.work for j in expanded.jobs[:2]] == [250.0, 300.0]
    assert len(load_alibaba(ALI, start=0.0, limit=5).jobs) == 5


def test_each_seed_replays_a_different_window():
    firsts = set()
    for seed in range(10):
        jobs = load_alibaba(ALI, rng=np.random.default_rng(seed), limit=4).jobs
        assert len(jobs) == 4 and jobs[0].submit == 0.0
        firsts.add((jobs[0].work, jobs[0].demand))
    assert len(firsts) >= 3
    config_a = SimConfig(arrival="trace", trace=f"alibaba:{ALI}", n_jobs=4, cluster="standard:2")
    works = {tuple(j.work for j in build_episode(config_a, np.random.default_rng(s))[1]) for s in range(6)}
    assert len(works) >= 2


def test_alibaba_tasks_file_path_finds_instances_beside_it():
    assert len(load_alibaba(ALI / "sample_tasks.csv").jobs) == 12


@pytest.mark.parametrize("text,line,field", [
    ("0,j_769579,M1,i,3,50.0,0.1\n0,j_nope,M1,i,3,50.0,0.1\n", 2, "task_name"),
    ("0,j_769579,M1,i,3,-1,0.1\n", 1, "cpu_avg"),
    ("0,j_769579,M1,i,3,50.0,abc\n", 1, "mem_avg"),
    ("0,j_769579,M1,i,nan,50.0,0.1\n", 1, "duration_s"),
    ("0,j_769579,M1,i,3\n", 1, "cpu_avg"),
])
def test_bad_instance_rows_name_file_line_field(tmp_path, text, line, field):
    (tmp_path / "sample_tasks.csv").write_text((ALI / "sample_tasks.csv").read_text())
    (tmp_path / "sample_instances.csv").write_text(text)
    with pytest.raises(TraceError) as info:
        load_alibaba(tmp_path)
    assert (info.value.line, info.value.field) == (line, field)
    assert f"sample_instances.csv:{line}" in str(info.value)
    trace = load_alibaba(tmp_path, skip_bad_rows=True)
    assert trace.skipped == 1


def test_missing_instances_file_is_a_config_error(tmp_path):
    (tmp_path / "tasks.csv").write_text("0,j,t,10,100,0.3,1\n")
    with pytest.raises(ConfigError, match="sample_instances.csv does not exist"):
        load_alibaba(tmp_path / "tasks.csv")


BAD = [
    ("0,j,t,10,abc,0.3,1\n", 1, "plan_cpu"),
    ("0,j,t,10,100,0.3,1\n0,j,u,-5,100,0.3,1\n", 2, "duration_s"),
    ("0,j,t,10,100,0.3,1\n0,j,u,10,100,0.3,1\n0,j,w,10,100\n", 3, "plan_mem"),
    ("0,j,t,10,100,0.3,1\n0,j,t,10,100,0.3,1\n", 2, "task_name"),  # listed twice: the join would be ambiguous
    ("0,j,t,10,100,0.3,0\n", 1, "instance_num"),
    ("0,j,t,10,0,0.3,1\n", 1, "plan_cpu"),
]


@pytest.mark.parametrize("text,line,field", BAD)
def test_bad_alibaba_rows_name_file_line_field(tmp_path, text, line, field):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    (tmp_path / "sample_instances.csv").write_text("")
    with pytest.raises(TraceError) as info:
        load_alibaba(path)
    err = info.value
    assert (err.path, err.line, err.field) == (str(path), line, field)
    assert f"bad.csv:{line}" in str(err) and field in str(err)


def test_skip_bad_rows_counts_them(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_text("0,j,t,10,100,0.3,1\n0,j,u,10,abc,0.3,1\n1,j,v,10,100,0.3,1\n")
    (tmp_path / "sample_instances.csv").write_text("0,j,t,i,10,50,0.1\n1,j,v,i,10,50,0.1\n0,j,t,i\n")
    trace = load_alibaba(path, skip_bad_rows=True)
    assert len(trace.jobs) == 2 and trace.skipped == 2  # one task row, one instance row


@pytest.mark.parametrize("text,line,field", [
    ("submit,class,work\n", 1, "req_cpu"),
    ("submit,class,work,req_cpu,req_mem,cpu,mem,net,disk\n0,cpu,0,1,1,1,1,1,1\n", 2, "work"),
    ("submit,class,work,req_cpu,req_mem,cpu,mem,net,disk\n0,cpu,1,1,1,1,1,1,1\n0,,1,1,1,1,1,1,1\n", 3, "class"),
    ("submit,class,work,req_cpu,req_mem,cpu,mem,net,disk\n0,cpu,1,1,1,1,1,x,1\n", 2, "net"),
])
def test_bad_generic_rows(tmp_path, text, line, field):
    path = tmp_path / "g.csv"
    path.write_text(text)
    with pytest.raises(TraceError) as info:
        load_csv(path)
    assert (info.value.line, info.value.field) == (line, field)


def test_sampled_alibaba_mix_uses_real_instances():
    rows = {(j.requests, j.demand, j.work) for j in load_alibaba(ALI, max_instances=3).jobs}
    drawn = sample_alibaba(40, np.random.default_rng(0), ALI)
    assert len(drawn) == 40 and all(j.submit == 0.0 for j in drawn)
    assert {(j.requests, j.demand, j.work) for j in drawn} <= rows  # every pod is one instance of the fixture
    assert len({j.work for j in drawn}) >= 5


def test_use_per_request_is_each_task_s_mean_instance_use_over_its_plan():
    # the fixture by hand, per task with instances: R11_10 40/50, R23_22 (74+95)/2/50, R7_21 30/50, J25 120/50,
    # J27 60/50, R19_21 0 (used nothing: left out), M1 150/100, 50/50, 100/100, M3_2 90/100, R2_1 100/100, 45/50
    ratios = sorted([0.8, 1.69, 0.6, 2.4, 1.2, 1.5, 1.0, 1.0, 0.9, 1.0, 0.9])
    assert alibaba_use_per_request(ALI, quantiles=(0.0, 0.5, 1.0)) == (0.6, 1.0, 2.4)
    assert alibaba_use_per_request(ALI) == tuple(round(float(q), 3) for q in np.quantile(
        ratios, [0.05 + 0.1 * k for k in range(10)]))
