"""Trace replay: the generic CSV, the Alibaba adapter on a small fixture, and errors naming file/line/field."""

from pathlib import Path

import numpy as np
import pytest

from policy.sim.errors import TraceError
from policy.sim.traces import load_alibaba, load_csv

FIX = Path(__file__).parent / "fixtures"


def test_generic_trace():
    trace = load_csv(FIX / "generic_trace.csv")
    assert [j.kind for j in trace.jobs] == ["cpu", "net", "io", "batch"]
    assert trace.jobs[1].submit == 5.0 and trace.jobs[1].demand == (0.5, 1.0, 60.0, 0.5)
    assert trace.jobs[3].requests == (1.0, 2.0) and trace.skipped == 0


def test_alibaba_fixture_mapping():
    trace = load_alibaba(FIX / "alibaba_tasks_small.csv", rng=np.random.default_rng(0))
    jobs = trace.jobs
    assert len(jobs) == 12
    first = jobs[0]
    assert first.work == 268.0 and first.requests == (0.5, pytest.approx(0.3))  # plan_cpu 50 = half a core
    assert all(j.work >= 1.0 for j in jobs)  # duration 0 rows get min_work
    assert [j.submit for j in jobs][-1] == 11.0
    assert all(j.demand[2] > 0 and j.demand[3] > 0 for j in jobs)  # net/disk derived from cpu


def test_alibaba_window_instances_and_limit():
    path = FIX / "alibaba_tasks_small.csv"
    window = load_alibaba(path, rng=np.random.default_rng(0), start=10.0)
    assert len(window.jobs) == 4 and window.jobs[0].submit == 0.0
    expanded = load_alibaba(path, rng=np.random.default_rng(0), max_instances=3, limit=7)
    assert len(expanded.jobs) == 7 and [j.work for j in expanded.jobs[:3]] == [268.0] * 3


BAD = [
    ("0,j,t,10,abc,0.3,1\n", 1, "plan_cpu"),
    ("0,j,t,10,100,0.3,1\n0,j,t,-5,100,0.3,1\n", 2, "duration_s"),
    ("0,j,t,10,100,0.3,1\n0,j,t,10,100,0.3,1\n0,j,t,10,100\n", 3, "plan_mem"),
    ("0,j,t,10,100,0.3,0\n", 1, "instance_num"),
    ("0,j,t,10,0,0.3,1\n", 1, "plan_cpu"),
]


@pytest.mark.parametrize("text,line,field", BAD)
def test_bad_alibaba_rows_name_file_line_field(tmp_path, text, line, field):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(TraceError) as info:
        load_alibaba(path, rng=np.random.default_rng(0))
    err = info.value
    assert (err.path, err.line, err.field) == (str(path), line, field)
    assert f"bad.csv:{line}" in str(err) and field in str(err)


def test_skip_bad_rows_counts_them(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_text("0,j,t,10,100,0.3,1\n0,j,t,10,abc,0.3,1\n1,j,t,10,100,0.3,1\n")
    trace = load_alibaba(path, rng=np.random.default_rng(0), skip_bad_rows=True)
    assert len(trace.jobs) == 2 and trace.skipped == 1


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
