"""bench/bench_extender.py's pinning: the server and the load generator on different CPUs, or neither pinned."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))  # the script imports its neighbours as top-level modules
_spec = importlib.util.spec_from_file_location("bench_extender", ROOT / "bench" / "bench_extender.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.mark.parametrize(("allowed", "pin", "expected"), [
    ({0, 1}, None, (0, 1)),  # the default where two CPUs are allowed
    ({3, 1, 7}, None, (1, 3)),  # the lowest two of a mask that is not 0..n
    ({0}, None, None),  # one CPU: nothing to separate, unpinned
    ({0, 1}, False, None),  # --no-pin
    ({0, 1, 2, 3}, True, (0, 1)),
])
def test_pin_cpus(allowed, pin, expected):
    assert bench.pin_cpus(allowed, pin) == expected


def test_pin_asked_for_on_one_cpu_says_why_it_cannot():
    with pytest.raises(ValueError, match=r"--pin needs two CPUs; this process may use \[2\]"):
        bench.pin_cpus({2}, True)


def test_a_run_refuses_to_start_when_its_results_file_exists(tmp_path, capsys):
    existing = tmp_path / "extender-20261203T1807.json"
    existing.write_text("{}")
    with pytest.raises(SystemExit) as exc:
        bench.main(["--results", str(existing), "--no-pin"])
    assert exc.value.code == 2 and "exists; every run keeps its own file" in capsys.readouterr().err


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to pin to one of them")
def test_setting_a_started_child_s_mask_holds_for_the_threads_it_starts_later():
    """What start_extender relies on: the mask set on the pid right after Popen covers threads made later."""
    cpu = max(os.sched_getaffinity(0))
    code = ("import os, threading, time; time.sleep(0.5); out = []; "
            "t = threading.Thread(target=lambda: out.append(sorted(os.sched_getaffinity(0)))); t.start(); t.join(); "
            "print(out[0], sorted(os.sched_getaffinity(0)))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    os.sched_setaffinity(proc.pid, {cpu})
    out, _ = proc.communicate(timeout=30)
    assert out.split("] [") == [f"[{cpu}", f"{cpu}]\n"]
