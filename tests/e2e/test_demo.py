"""`make demo` (scripts/demo.py) end to end, small: every pod placed by both schedulers, the tables printed,
no process left behind on a normal exit or on Ctrl-C. The fast tests at the bottom need no binaries.

The demo starts its own control plane (the harness classes, not the session fixture), so these tests
only need the binaries that conftest builds after collection.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import REPO

SCRIPT = REPO / "scripts" / "demo.py"
SMALL = ["--nodes", "4", "--pods", "8", "--submit-seconds", "8", "--run-for", "3"]
COMPONENT_LOGS = ("etcd", "kube-apiserver", "kube-scheduler", "kwok", "extender", "drsched-scheduler")


def _demo(*args: str, **kwargs) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(SCRIPT), *args], cwd=REPO, stdout=subprocess.PIPE,
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


# ---- fast: the script's pure parts, no binaries ------------------------------------------------------


def _workload():
    """scripts/demo_workload.py, loaded from its file: scripts/ is a folder of programs, not a package."""
    name = "drsched_demo_workload"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SCRIPT.parent / "demo_workload.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_help_lists_the_options() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0
    for flag in ("--nodes", "--pods", "--keep-running", "--policy", "--out"):
        assert flag in done.stdout


def test_schedule_and_nodes_are_seeded() -> None:
    w = _workload()

    def draw(seed: int):
        rng = np.random.default_rng(seed)
        return w.make_nodes(8, rng), w.make_schedule(20, rng, submit_s=10, run_for_s=10)

    (n1, p1), (n2, p2), (_, p3) = draw(3), draw(3), draw(4)
    assert p1 == p2 and p1 != p3
    assert [n.background.tolist() for n in n1] == [n.background.tolist() for n in n2]
    assert {n.kind for n in n1} == {"standard", "compute", "netfast", "small"}
    assert sum(bool(n.busy) for n in n1) == 4
    assert p1[0].at == 0 and all(a.at <= b.at for a, b in zip(p1, p1[1:], strict=False))
    assert all(p.run_for >= 5 for p in p1)


def test_usage_file_counts_a_pod_once_it_has_ramped_up() -> None:
    w = _workload()
    rng = np.random.default_rng(1)
    nodes, pods = w.make_nodes(2, rng), w.make_schedule(2, rng, submit_s=5, run_for_s=10)
    label = nodes[0].label
    running = {"drsched": {pods[0].name: (label, 100.0)}, "default": {}}
    young = w.usage_file(nodes, pods, running, now=102.0, ramp_s=4.0)["usage"]
    old = w.usage_file(nodes, pods, running, now=105.0, ramp_s=4.0)["usage"]
    base_cpu = nodes[0].background[0]
    assert float(young[f"drsched-{label}"]["cpu"]) == pytest.approx(base_cpu, abs=1e-3)
    assert float(old[f"drsched-{label}"]["cpu"]) == pytest.approx(base_cpu + pods[0].demand[0], abs=1e-3)
    assert old[f"default-{label}"] == young[f"default-{label}"]  # the other pool is untouched


def test_summary_sees_an_overloaded_node() -> None:
    w = _workload()
    node = w.DemoNode(label="small-1", kind="small", capacity=np.array([2.0, 8.0, 125.0, 100.0]), max_pods=32,
                      background=np.array([0.2, 1.0, 10.0, 5.0]), busy="")
    pods = [w.DemoPod(name=f"net-{i}", kind="net", at=float(i), run_for=10.0, requests=(0.5, 0.5),
                      demand=(0.5, 1.0, 60.0, 0.5)) for i in range(2)]
    s = w.summarize([node], pods, {"net-0": "small-1", "net-1": "small-1"})
    assert s.placed == 2 and s.hottest == "small-1 net"
    assert s.peak_bottleneck == pytest.approx((10 + 120) / 125)
    assert s.overloaded_arrivals == 1
