"""jobs.csv rows: the fixed columns another tool reads, built from observed pods, migrations included."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.gates import CpuStat, PodSample
from lab.observed import ArmResult, PodObs
from lab.records import best_solo_s, controller_rows, event_rows, job_rows, pod_counter_rows
from lab.report import ReportError, append_rows, controller_lines, read_rows, summarise
from lab.schedule import make_schedule
from policy.labworld import JOB_COLUMNS, JOB_RUN_COLUMNS, POD_COUNTER_COLUMNS

T0 = 1000.0
EXPECTED = ("seed,arm,variant,job,kind,node,node_type,cpu_request_m,mem_request_mi,cpu_use_m,mem_use_mi,net_mbit,"
            "io_mbps,work,submit_s,start_s,finish_s,exit_code,solo_s,jct_s,run_slowdown,slowdown,migrations,"
            "ckpt_writes,ckpt_write_mean_s,ckpt_write_last_s,restore_s,best_solo_s,best_slowdown")


def _result(jobs):
    r = ArmResult(t0=T0)
    a, b = jobs[0].job, jobs[1].job
    r.submitted = {a: 0.5, b: 2.0}
    r.pods = {
        "x-a": PodObs("x-a", a, "u1", "rn-large", "Succeeded", T0 + 1, T0 + 11, 0),
        "x-b": PodObs("x-b", b, "u2", "rn-small", "Failed", T0 + 3, T0 + 8, 0),       # migrated away
        "x-b-m1": PodObs("x-b-m1", b, "u3", "rn-medium", "Succeeded", T0 + 10, T0 + 30, 0),
    }
    return r


def test_job_rows_have_the_fixed_columns_and_follow_a_migrated_job() -> None:
    assert ",".join(JOB_COLUMNS) == EXPECTED
    jobs = make_schedule(seed=1, jobs=2)
    rows = job_rows(_result(jobs), jobs, seed=1, arm="migration", variant="under",
                    node_type=lambda n: n.removeprefix("rn-"), solo=lambda job, nt: (5.0, 900.0))
    assert [tuple(r) for r in rows] == [JOB_COLUMNS] * 2
    a, b = rows
    assert (a["node"], a["start_s"], a["finish_s"], a["jct_s"], a["migrations"]) == ("rn-large", 1, 11, 10.5, 0)
    assert (a["run_slowdown"], a["slowdown"], a["cpu_use_m"]) == (2.0, 2.1, 900)
    assert (b["node"], b["node_type"], b["start_s"], b["finish_s"], b["migrations"]) == ("rn-medium", "medium", 3,
                                                                                          30, 1)
    gaps = [e for e in event_rows(_result(jobs), seed=1, arm="migration") if e["event"].startswith("migration")]
    assert [(g["node"], g["value"]) for g in gaps] == [("rn-small->rn-medium", 2.0)]


def test_a_job_that_never_ran_has_empty_times() -> None:
    jobs = make_schedule(seed=1, jobs=3)
    (row,) = [r for r in job_rows(_result(jobs), jobs, seed=1, arm="model", variant="under",
                                  node_type=str, solo=lambda job, nt: None) if r["job"] == jobs[2].job]
    assert (row["node"], row["finish_s"], row["jct_s"], row["slowdown"]) == ("", "", "", "")


def test_csv_append_keeps_one_header_and_summary_writes_tables(tmp_path: Path) -> None:
    jobs = make_schedule(seed=1, jobs=2)
    for arm in ("default", "model"):
        append_rows(tmp_path, "jobs.csv", job_rows(_result(jobs), jobs, seed=1, arm=arm, variant="under",
                                                  node_type=lambda n: n, solo=lambda job, nt: (5.0, 900.0)))
    append_rows(tmp_path, "nodes.csv", [{"node": n, "node_type": n, "cpu_quota_m": 500, "mem_mi": 1024,
                                         "net_mbit": 40} for n in ("rn-large", "rn-small", "rn-medium")])
    assert (tmp_path / "jobs.csv").read_text().count("seed,arm") == 1
    assert len(read_rows(tmp_path / "jobs.csv")) == 4
    text = summarise(tmp_path)
    assert "| model | 1 |" in text and "Ratio to `default`" in text
    assert (tmp_path / "jct-cdf.png").stat().st_size > 0


def test_a_foreign_csv_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "jobs.csv").write_text("job,jct\nj1,3\n")
    with pytest.raises(ReportError, match=r"jobs\.csv:1: header"):
        read_rows(tmp_path / "jobs.csv")


def test_progress_times_replace_the_pods_whole_seconds_and_a_successors_start_does_not_count() -> None:
    jobs = make_schedule(seed=1, jobs=2)
    result = _result(jobs)
    a, b = jobs[0].job, jobs[1].job
    result.see_progress(a, {"started_at": T0 + 1.25, "state": "running", "updated_at": T0 + 2})
    result.see_progress(a, {"started_at": T0 + 1.25, "state": "done", "updated_at": T0 + 10.5})
    result.see_progress(b, {"started_at": T0 + 10.7, "resumed_from": 40, "state": "done", "updated_at": T0 + 29.9})
    row_a, row_b = job_rows(result, jobs, seed=1, arm="migration", variant="under", node_type=str,
                            solo=lambda job, nt: (5.0, 900.0))
    assert (row_a["start_s"], row_a["finish_s"]) == (1.25, 10.5)
    assert (row_b["start_s"], row_b["finish_s"]) == (3, 29.9)  # the first pod's start; the successor's finish


def test_checkpoint_and_restore_costs_are_summed_over_a_jobs_processes() -> None:
    jobs = make_schedule(seed=1, jobs=2)
    result = _result(jobs)
    b = jobs[1].job
    # The same pid in both pods (each is pid 1 of its container): the start time tells them apart.
    first = {"pid": 7, "started_at": T0 + 3, "state": "running", "checkpoint_writes": 1,
             "checkpoint_write_s": {"last": 0.1, "mean": 0.1}, "restore_s": None}
    result.see_progress(b, first)
    result.see_progress(b, {**first, "state": "checkpointing", "checkpoint_writes": 2,
                            "checkpoint_write_s": {"last": 0.3, "mean": 0.2}})   # its SIGTERM checkpoint
    result.see_progress(b, {"pid": 7, "started_at": T0 + 10.7, "resumed_from": 40, "state": "done",
                            "updated_at": T0 + 29.9, "checkpoint_writes": 2,
                            "checkpoint_write_s": {"last": 0.05, "mean": 0.05}, "restore_s": 0.02})
    row_a, row_b = job_rows(result, jobs, seed=1, arm="migration", variant="under", node_type=str,
                            solo=lambda job, nt: None)
    assert (row_b["ckpt_writes"], row_b["ckpt_write_mean_s"], row_b["ckpt_write_last_s"], row_b["restore_s"]) == (
        4, 0.125, 0.05, 0.02)
    assert (row_a["ckpt_writes"], row_a["ckpt_write_mean_s"], row_a["restore_s"]) == (0, "", "")


def test_a_csv_an_older_lab_began_keeps_its_columns_and_reads_with_the_new_ones_empty(tmp_path: Path) -> None:
    old = JOB_RUN_COLUMNS
    (tmp_path / "jobs.csv").write_text(",".join(old) + "\n")
    jobs = make_schedule(seed=1, jobs=2)
    append_rows(tmp_path, "jobs.csv", job_rows(_result(jobs), jobs, seed=1, arm="model", variant="under",
                                                node_type=str, solo=lambda job, nt: None))
    assert (tmp_path / "jobs.csv").read_text().splitlines()[0] == ",".join(old)
    rows = read_rows(tmp_path / "jobs.csv")
    assert len(rows) == 2 and rows[0]["ckpt_writes"] == "" and rows[0]["node"] == "rn-large"


def test_controller_counters_become_rows_and_a_line_per_migration_arm(tmp_path: Path) -> None:
    samples = [("drsched_migration_started_total", "", 1.0), ("drsched_migration_completed_total", "", 1.0),
               ("drsched_migration_skipped_total", "reason=not-worth", 12.0),
               ("drsched_migration_skipped_total", "reason=too-young", 30.0),
               ("drsched_migration_skipped_total", "reason=no-target", 0.0),
               ("drsched_migration_decisions_total", "verdict=allowed", 1.0),
               ("drsched_migration_released_total", "outcome=completed", 1.0)]
    rows = controller_rows(samples, seed=2, arm="migration", variant="under")
    assert rows[2] == {"seed": 2, "arm": "migration", "variant": "under", "metric": "skipped_total",
                       "labels": "reason=not-worth", "value": 12.0}
    append_rows(tmp_path, "controller.csv", rows)
    events = [{"seed": "2", "arm": "migration", "t_s": "40", "node": "rn-large->rn-small", "event": "migration j004",
               "value": "3.0"}, {"seed": "2", "arm": "migration", "t_s": "20", "node": "rn-large",
                                 "event": "cpu_quota_cut", "value": "1000->200"}]
    (line,) = [x for x in controller_lines(read_rows(tmp_path / "controller.csv"), events) if x.startswith("| 2 ")]
    assert line == ("| 2 | migration | 1 | 1 | completed: 1 | allowed: 1 | too-young: 30, not-worth: 12 | 3.0 |")
    assert controller_lines([], events) == []


SOLOS = {("large", 5.0), ("small", 20.0), ("medium", 10.0)}


@pytest.mark.parametrize("types, best", [
    (("large", "small", "medium"), 5.0),   # the fastest type, wherever the job ran
    (("small", "medium"), 10.0),
    (("small", "unmeasured"), 20.0),
    ((), None),
    (("unmeasured",), None),
])
def test_best_solo_is_the_fastest_measured_node_type(types, best) -> None:
    solos = dict(SOLOS)
    job = make_schedule(seed=1, jobs=1)[0]
    assert best_solo_s(job, types, lambda j, t: (solos[t], 900.0) if t in solos else None) == best


@pytest.mark.parametrize("node, slowdown, best_slowdown", [
    # job a: submitted 0.5, finished 11 (jct 10.5); solo 20 s on small, 10 s on medium, 5 s on large
    ("rn-large", 2.1, 2.1),
    ("rn-small", 0.525, 2.1),    # the old slowdown calls a slow node fast; the best-solo one does not
    ("rn-medium", 1.05, 2.1),
])
def test_best_slowdown_divides_by_the_best_solo_node_type(node, slowdown, best_slowdown) -> None:
    solos = dict(SOLOS)
    jobs = make_schedule(seed=1, jobs=2)
    result = _result(jobs)
    result.pods["x-a"] = PodObs("x-a", jobs[0].job, "u1", node, "Succeeded", T0 + 1, T0 + 11, 0)
    (row, _) = job_rows(result, jobs, seed=1, arm="model", variant="under", node_type=lambda n: n.removeprefix("rn-"),
                        solo=lambda j, t: (solos[t], 900.0), node_types=("small", "medium", "large"))
    assert (row["slowdown"], row["best_solo_s"], row["best_slowdown"]) == (slowdown, 5.0, best_slowdown)


def test_pod_counter_rows_name_the_arms_pods_and_leave_others_unnamed(tmp_path: Path) -> None:
    result = ArmResult(t0=0.0, pods={"r1-j000": PodObs("r1-j000", "j000", "uid-a", "rn-small", "Running", 1.0,
                                                       None, None)})
    result.pod_counters += [PodSample(1.0, "rn-small", "uid-a", CpuStat(3, 0, 0), 5_000),
                            PodSample(1.0, "rn-small", "uid-monitor", CpuStat(0, 0, 0), 70)]
    rows = pod_counter_rows(result, seed=1, arm="default", variant="under")
    assert [(r["pod"], r["uid"], r["usage_ns"], r["nr_throttled"]) for r in rows] == [
        ("r1-j000", "uid-a", 5_000, 0), ("", "uid-monitor", 70, 0)]
    append_rows(tmp_path, "pod-counters.csv", rows)
    assert tuple(read_rows(tmp_path / "pod-counters.csv")[0]) == POD_COUNTER_COLUMNS
