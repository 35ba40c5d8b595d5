"""``lab regate``: a finished run's host gate judged again from its own files, gates.csv rewritten safely."""

import pytest

from lab import report
from lab.cli import main
from lab.regate import RECORDED, RegateError, regate, write_regated


def result(tmp_path, *, node_cpu_busy_ticks: int, with_system: bool = True):
    """One run on rn-large (quota 400 m): its job wants 380 m for 5 s and gets 300 m, never throttled, while the
    nodes' CPU (cpu1) is ``node_cpu_busy_ticks`` of 100 ticks busy each second. gates.csv says it was flagged."""
    out = tmp_path / "run"
    out.mkdir()
    run = {"seed": 1, "arm": "default", "variant": "under"}
    report.append_rows(out, "nodes.csv", [{"node": "rn-large", "node_type": "large", "cpu_quota_m": 400,
                                           "mem_mi": 1024, "net_mbit": 80}])
    report.append_rows(out, "jobs.csv", [{**run, "job": "j0", "node": "rn-large", "start_s": 0, "finish_s": 5,
                                          "cpu_use_m": 380}])
    report.append_rows(out, "counters.csv", [{**run, "t_s": float(i), "node": "rn-large", "nr_periods": 10 * i,
                                              "nr_throttled": 0, "throttled_ns": 0, "usage_ns": int(i * 300e6),
                                              "nr_bursts": "", "burst_ns": ""} for i in range(6)])
    if with_system:
        report.append_rows(out, "system.csv", [
            {**run, "t_s": i + 0.003, "source": "cpu1", "role": "node", "usage_ns": "",
             "busy_ticks": node_cpu_busy_ticks * i, "idle_ticks": (100 - node_cpu_busy_ticks) * i}
            for i in range(6)])
    report.append_rows(out, "gates.csv", [
        {**run, "gate": "host-interference", "flagged": 1, "value": 1.0, "detail": "5 of 5 busy samples ..."},
        {**run, "gate": "placement", "flagged": 0, "value": 0, "detail": "no system pod on a job node"}])
    return out


@pytest.mark.parametrize("ticks, with_system, flagged", [
    (60, True, 0),    # the node CPU had idle time: the job wanted less, not starved
    (100, True, 1),   # the node CPU was full: starved by the host, still flagged
    (60, False, 1),   # no /proc/stat reads: judged as at run time
])
def test_a_run_is_judged_again_from_its_files(tmp_path, ticks, with_system, flagged):
    out = result(tmp_path, node_cpu_busy_ticks=ticks, with_system=with_system)
    [r] = regate(out)
    assert r["recorded"]["flagged"] == "1" and r["now"]["flagged"] == flagged
    assert ("5 more below quota while the node CPUs had idle time" in r["now"]["detail"]) == (not flagged)


def test_write_replaces_only_the_host_rows_and_keeps_the_recorded_file(tmp_path, capsys):
    out = result(tmp_path, node_cpu_busy_ticks=60)
    before = (out / "gates.csv").read_text()
    assert main(["regate", "--out", str(out), "--write"]) == 0
    assert "1 verdicts changed" in capsys.readouterr().out
    rows = report.read_rows(out / "gates.csv")
    assert sorted((r["gate"], r["flagged"]) for r in rows) == [("host-interference", "0"), ("placement", "0")]
    assert (out / RECORDED).read_text() == before
    write_regated(out, regate(out))  # a second write keeps the run-time record, not the first rewrite
    assert (out / RECORDED).read_text() == before and not (out / "gates.csv.tmp").exists()


def test_a_result_without_counters_or_with_a_bad_quota_is_named(tmp_path):
    out = result(tmp_path, node_cpu_busy_ticks=60)
    (out / "nodes.csv").write_text("node,node_type,cpu_quota_m,mem_mi,net_mbit\nrn-large,large,lots,1,1\n")
    with pytest.raises(RegateError, match=r"nodes.csv:2: field cpu_quota_m"):
        regate(out)
    (out / "counters.csv").unlink()
    with pytest.raises(RegateError, match="counters.csv: missing"):
        regate(out)
    assert main(["regate", "--out", str(out)]) == 2
