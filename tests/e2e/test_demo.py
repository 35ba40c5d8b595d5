"""The KWOK demo (`python -m lab demo --kwok`, lab/kwokdemo) end to end, small: every pod placed by both
schedulers, the tables printed, no process left behind on a normal exit or on Ctrl-C. Its pure parts are
tested in tests/unit/lab/kwokdemo, its dispatch from `lab demo` in tests/unit/lab/test_demo.py.

The demo starts its own control plane (the harness classes, not the session fixture), so these tests
only need the binaries that conftest builds after collection.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import REPO

KWOK_DEMO = [sys.executable, "-m", "lab", "demo", "--kwok", "--"]
SMALL = ["--nodes", "4", "--pods", "8", "--submit-seconds", "8", "--run-for", "3"]
COMPONENT_LOGS = ("etcd", "kube-apiserver", "kube-scheduler", "kwok", "extender", "drsched-scheduler")


def _demo(*args: str, **kwargs) -> subprocess.Popen[str]:
    return subprocess.Popen([*KWOK_DEMO, *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kwargs)


def _processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes naming `text` (every component's argv names its work dir)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{pid}: {cmdline[:200]}")
    return found


def _assert_nothing_left(text: str) -> None:
    deadline = time.monotonic() + 5  # a killed process may take a moment to leave /proc
    while (left := _processes_mentioning(text)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"processes left behind: {left}"


@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_demo_places_every_pod_and_reports(controlplane_binaries, tmp_path: Path) -> None:
    out_dir = tmp_path / "demo"
    proc = _demo(*SMALL, "--out", str(out_dir))
    try:
        output, _ = proc.communicate(timeout=240)
    finally:
        proc.kill()
    assert proc.returncode == 0, output

    summary = dict(re.findall(r"^(drsched|default)\s+placed\s+(\d+)", output, flags=re.M))
    assert summary == {"drsched": "8", "default": "8"}, output
    for heading in ("Where each pod landed", "drsched's view: top nodes", "Node load at", "Summary over"):
        assert heading in output
    assert "(pending)" not in output and "NOT PLACED" not in output
    assert re.search(r"^cpu-01 .*\b\d+ \((cpu|mem|net|disk) \d+%\)", output, flags=re.M), output  # scores + why
    assert "stopped; logs and report in" in output

    report = json.loads((out_dir / "report.json").read_text())
    assert all(p["drsched"] and p["default"] for p in report["pods"]), report["pods"]
    assert any(p["scores"] for p in report["pods"]), "no pod has the extender's scores"
    # run-for of 5 s and arrivals over ~8 s: KWOK has completed the first pods by the time the last lands.
    assert report["completed"]["drsched"] >= 1 and report["completed"]["default"] >= 1, report["completed"]
    for name in COMPONENT_LOGS:
        assert (out_dir / "logs" / f"{name}.log").stat().st_size > 0, name
    _assert_nothing_left(str(out_dir))


@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_ctrl_c_stops_every_process_and_removes_the_work_dir(controlplane_binaries) -> None:
    proc = _demo(*SMALL, "--submit-seconds", "60")
    lines: list[str] = []
    workdir = None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if match := re.search(r"\(work dir (\S+)\)", line):
                workdir = match.group(1)
            if line.startswith("[4/5]"):
                break
        assert workdir is not None, "".join(lines)
        assert _processes_mentioning(workdir), "the demo's components are not running"
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    output = "".join(lines) + rest
    assert proc.returncode == 130, output
    assert "interrupted" in output and "stopped" in output
    _assert_nothing_left(workdir)
    assert not Path(workdir).exists()
