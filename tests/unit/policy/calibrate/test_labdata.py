"""Reading the lab's CSV files: good files parse, a malformed one names its file, line and field."""

from __future__ import annotations

import math

import pytest

from policy.calibrate.labdata import LabDataError, read_events, read_jobs, read_results

from .synthetic import job, write, write_system


def test_a_written_results_directory_reads_back(tmp_path) -> None:
    jobs = [job("a", cpu_request=100), job("b", "large", kind="net", migrations=1, finish=50.0, seed=2)]
    runs = read_results(write(tmp_path, jobs, [(1, "default", 30, "large", "cpu_quota_cut", "1000->500"),
                                               (1, "default", "", "", "resumed b", "resumed_from=3")]))
    assert [j.job for j in runs.jobs] == ["a", "b"]
    assert runs.jobs[0].scored and not runs.jobs[1].scored
    assert runs.jobs[1].net_mbit == 16 and runs.jobs[1].run_slowdown == pytest.approx(50 / 60)
    assert runs.seeds == [1, 2]
    assert set(runs.nodes) == {"small", "large"} and runs.nodes["small"].cpu_quota_m == 250
    assert runs.events[0].quota_m == 500 and runs.events[0].node == "large"
    assert runs.events[1].quota_m is None and math.isnan(runs.events[1].t_s)


def test_empty_optional_fields_are_nan(tmp_path) -> None:
    path = write(tmp_path, [job("a")]) / "jobs.csv"
    lines = path.read_text().splitlines()
    cells = lines[1].split(",")
    for name in ("finish_s", "exit_code", "run_slowdown"):
        cells[lines[0].split(",").index(name)] = ""
    path.write_text("\n".join([lines[0], ",".join(cells)]) + "\n")
    (a,) = read_jobs(path)
    assert math.isnan(a.finish_s) and math.isnan(a.exit_code) and not a.scored


def _corrupt(tmp_path, column: str, value: str):
    path = write(tmp_path, [job("a"), job("b")]) / "jobs.csv"
    lines = path.read_text().splitlines()
    cells = lines[2].split(",")
    cells[lines[0].split(",").index(column)] = value
    lines[2] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("column", "value", "message"), [
    ("start_s", "soon", "not a number: 'soon'"),
    ("cpu_use_m", "-5", "must be >= 0"),
    ("seed", "1.5", "not an integer"),
    ("solo_s", "inf", "not finite"),
    ("kind", "", "is empty"),
])
def test_a_bad_field_names_file_line_and_field(tmp_path, column, value, message) -> None:
    path = _corrupt(tmp_path, column, value)
    with pytest.raises(LabDataError, match=message) as info:
        read_jobs(path)
    assert (info.value.path, info.value.line, info.value.field) == (path, 3, column)
    assert f"jobs.csv line 3, field '{column}'" in str(info.value)


def test_missing_column_ragged_row_and_missing_file(tmp_path) -> None:
    path = write(tmp_path, [job("a")]) / "jobs.csv"
    text = path.read_text()
    path.write_text(text.replace("cpu_use_m,", "", 1))
    with pytest.raises(LabDataError, match="lacks column.*cpu_use_m"):
        read_jobs(path)
    path.write_text(text.rstrip("\n") + ",extra\n")
    with pytest.raises(LabDataError, match="line 2.*fields"):
        read_jobs(path)
    with pytest.raises(LabDataError, match="cannot read"):
        read_jobs(tmp_path / "absent.csv")
    path.write_text(text.splitlines()[0] + "\n")
    with pytest.raises(LabDataError, match="has no jobs"):
        read_jobs(path)


def test_a_job_on_an_unknown_node_and_a_zero_quota_are_refused(tmp_path) -> None:
    d = write(tmp_path, [job("a")])
    (d / "jobs.csv").write_text((d / "jobs.csv").read_text().replace(",small,small,", ",ghost,small,"))
    with pytest.raises(LabDataError, match="'ghost' is not in nodes.csv"):
        read_results(d)
    d = write(tmp_path / "2", [job("a")])
    (d / "nodes.csv").write_text((d / "nodes.csv").read_text().replace("small,small,250", "small,small,0"))
    with pytest.raises(LabDataError, match="nodes.csv line 2, field 'cpu_quota_m'"):
        read_results(d)


@pytest.mark.parametrize(("row", "field"), [
    ((1, "default", "later", "large", "cpu_quota_cut", "1000->500"), "t_s"),
    ((1, "default", "", "large", "cpu_quota_cut", "1000->500"), "t_s"),
    ((1, "default", 30, "large", "cpu_quota_cut", "1000->lots"), "value"),
    ((1, "default", 30, "large", "cpu_quota_cut", "1000->0"), "value"),
])
def test_bad_quota_event(tmp_path, row, field) -> None:
    d = write(tmp_path, [job("a")], [row])
    with pytest.raises(LabDataError, match=f"events.csv line 2, field '{field}'"):
        read_events(d / "events.csv")


def test_usage_is_summed_over_nodes_per_sample(tmp_path) -> None:
    d = write(tmp_path, [job("a")])
    (d / "usage.csv").write_text("seed,arm,variant,t_s,node,cpu_m,mem_mi,net_mbit,io_mbps\n"
                                 "1,default,,2.0,small,200,0,0,0\n1,default,,2.0,large,300.5,0,0,0\n"
                                 "1,default,,4.0,small,100,0,0,0\n")
    assert read_results(d).usage == {(1, "default", ""): [(2.0, 500.5), (4.0, 100.0)]}
    (d / "usage.csv").write_text("seed,arm,variant,t_s,node,cpu_m\n1,default,,2.0,small,lots\n")
    with pytest.raises(LabDataError, match="usage.csv line 2, field 'cpu_m'"):
        read_results(d)


def test_system_csv_reads_the_system_cpus_summed_per_read(tmp_path) -> None:
    write(tmp_path, [job("a")])
    assert read_results(tmp_path).system_ticks == {}
    write_system(tmp_path, {(1, "default", ""): [(0.5, 10, 90), (1.5, 60, 140)]})
    with (tmp_path / "system.csv").open("a") as fh:  # a second system CPU, missing from the last read
        fh.write("1,default,,0.5,cpu2,system,,5,5\n1,default,,1.5,cpu2,system,,6,14\n1,default,,2.5,cpu2,system,,7,23\n")
    assert read_results(tmp_path).system_ticks == {(1, "default", ""): [(0.5, 15, 95), (1.5, 66, 154)]}


def test_a_bad_system_csv_row_names_its_field(tmp_path) -> None:
    write_system(write(tmp_path, [job("a")]), {(1, "default", ""): [(0.5, 10, 90)]})
    with (tmp_path / "system.csv").open("a") as fh:
        fh.write("1,default,,1.5,cpu0,system,,lots,5\n")
    with pytest.raises(LabDataError, match="line 5, field 'busy_ticks'"):
        read_results(tmp_path)
