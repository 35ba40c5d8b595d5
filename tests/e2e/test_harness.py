"""The harness fails fast and clearly: a component that exits early, never becomes ready, or finds its
port taken gives an error that carries its log tail, and leaves no process behind."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import pytest

from harness.cluster import Binaries, ControlPlane
from harness.procs import Component, ComponentError, run_to_completion


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_component_that_exits_early_reports_its_log_tail(tmp_path: Path) -> None:
    script = "import sys; print('config file /nope is missing', flush=True); sys.exit(3)"
    component = Component(name="broken", argv=[sys.executable, "-c", script], log_path=tmp_path / "broken.log")
    component.start()
    with pytest.raises(ComponentError, match=r"(?s)broken exited with code 3.*config file /nope is missing"):
        component.wait_ready(lambda: False, timeout=10)


def test_component_that_never_gets_ready_is_killed_after_the_timeout(tmp_path: Path) -> None:
    script = "import time; print('starting up', flush=True); time.sleep(60)"
    component = Component(name="slow", argv=[sys.executable, "-c", script], log_path=tmp_path / "slow.log")
    component.start()
    started = time.monotonic()
    with pytest.raises(ComponentError, match=r"(?s)slow not ready after 1s.*starting up"):
        component.wait_ready(lambda: False, timeout=1)
    assert time.monotonic() - started < 10
    assert component.proc is not None and _gone(component.proc.pid)


def test_stop_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time; "
        "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"open({str(pid_file)!r}, 'w').write(str(c.pid)); "
        "time.sleep(60)"
    )
    component = Component(name="parent", argv=[sys.executable, "-c", script], log_path=tmp_path / "parent.log")
    component.start()
    component.wait_ready(lambda: pid_file.exists() and pid_file.read_text() != "", timeout=10)
    child = int(pid_file.read_text())
    component.stop(grace=2)
    deadline = time.monotonic() + 5
    while not _gone(child) and time.monotonic() < deadline:  # the child is not ours to reap; init does
        time.sleep(0.05)
    assert _gone(child)


def test_run_to_completion_reports_failure_with_output(tmp_path: Path) -> None:
    with pytest.raises(ComponentError, match=r"(?s)failed with code 2.*go: something broke"):
        run_to_completion(
            name="fake-build",
            argv=["sh", "-c", "echo 'go: something broke' >&2; exit 2"],
            log_path=tmp_path / "b.log",
            timeout=10,
        )


@pytest.mark.e2e
def test_etcd_on_a_busy_port_fails_fast_with_its_log(tmp_path: Path, controlplane_binaries: Binaries) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        url = f"http://127.0.0.1:{busy.getsockname()[1]}"
        etcd = Component(
            name="etcd",
            argv=[
                controlplane_binaries["etcd"],
                f"--data-dir={tmp_path / 'etcd'}",
                f"--listen-client-urls={url}",
                f"--advertise-client-urls={url}",
            ],
            log_path=tmp_path / "etcd.log",
        )
        etcd.start()
        started = time.monotonic()
        with pytest.raises(ComponentError, match=r"(?s)etcd exited with code \d+.*address already in use"):
            etcd.wait_ready(lambda: False, timeout=30)
        assert time.monotonic() - started < 20


@pytest.mark.e2e
def test_control_plane_start_failure_names_the_component_and_stops_the_rest(
    tmp_path: Path, controlplane_binaries: Binaries
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for entry in controlplane_binaries.bin_dir.iterdir():
        (bin_dir / entry.name).symlink_to(entry)
    (bin_dir / "kube-apiserver").unlink()
    fake = bin_dir / "kube-apiserver"
    fake.write_text(
        "#!/bin/sh\necho 'Error: invalid argument \"--etcd-servers\": pretend misconfiguration' >&2\nexit 1\n"
    )
    fake.chmod(0o755)

    cp = ControlPlane(workdir=tmp_path / "cluster", binaries=Binaries(bin_dir))
    with pytest.raises(ComponentError, match=r"(?s)kube-apiserver exited with code 1.*pretend misconfiguration"):
        cp.start()
    etcd = cp.components["etcd"]
    assert etcd.proc is not None and etcd.proc.returncode is not None  # start() stopped what it had started
