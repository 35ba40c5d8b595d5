"""The net job against a standalone sink that outlives it, and progress served over HTTP."""

from __future__ import annotations

import json
import signal
import socket
import sys
import urllib.request

from tests.helpers import free_port, wait_for
from workloads.progress import parse_progress

from .jobs import (
    CKPT_UNITS,
    KIND_ARGS,
    log_text,
    outputs,
    popen,
    progress_of,
    sigkill,
    start,
    valid_checkpoints,
    wait_exit,
    wait_progress,
)


def test_net_resumes_by_offset_against_a_standalone_sink(tmp_path, reference):
    ref_outputs, _ = reference("net")
    port = free_port()
    sink_dir = tmp_path / "sink"
    sink = popen([sys.executable, "-m", "workloads", "sink", "--listen", f"127.0.0.1:{port}", "--dir", str(sink_dir)],
                 tmp_path / "sink.log")
    try:
        wait_for(lambda: _connectable(port), timeout=15, what="the sink to listen")
        base = [a for a in KIND_ARGS["net"] if a != "--start-sink"] + ["--sink", f"127.0.0.1:{port}"]
        state_dir = tmp_path / "state"
        state_dir.mkdir()
        for target in (CKPT_UNITS + 4, 2 * CKPT_UNITS + 7):
            proc = start("net", state_dir, base=base)
            assert wait_progress(proc, state_dir, target) is not None
            sigkill(proc)  # the sink keeps the part file; the job reopens the stream at its checkpoint's offset
        newest = max(valid_checkpoints(state_dir))
        proc = start("net", state_dir, base=base)
        assert wait_exit(proc) == 0, log_text(state_dir)
        assert progress_of(state_dir).resumed_from == newest >= CKPT_UNITS
        assert (state_dir / "output.json").read_bytes() == ref_outputs["output.json"]
        assert (sink_dir / "job.bin").read_bytes() == ref_outputs["sink/job.bin"]
    finally:
        sink.send_signal(signal.SIGTERM)
        assert wait_exit(sink, timeout=10) == 0


def _connectable(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def test_progress_over_http_matches_the_contract(tmp_path, reference):
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    port = free_port()
    proc = start("cpu", state_dir, "--progress-port", str(port), "--progress-host", "127.0.0.1")
    try:
        body = wait_for(lambda: _get(port), timeout=15, what="progress over HTTP")
        served = parse_progress(body, path=f"http://127.0.0.1:{port}/progress")
        assert served.pid == proc.pid and served.kind == "cpu" and served.state == "running"
        assert json.loads(body).keys() >= {"kind", "units_done", "units_total", "progress", "rate", "started_at",
                                           "updated_at", "checkpoint", "state", "pid"}
    finally:
        assert wait_exit(proc) == 0, log_text(state_dir)
    assert outputs("cpu", state_dir) == reference("cpu")[0]


def _get(port: int) -> bytes | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/progress", timeout=1) as resp:
            return resp.read()
    except OSError:
        return None


def test_unreachable_sink_fails_with_a_logged_error(tmp_path):
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    base = [a for a in KIND_ARGS["net"] if a != "--start-sink"] + ["--sink", f"127.0.0.1:{free_port()}"]
    proc = start("net", state_dir, "--timeout", "2", base=base)
    assert wait_exit(proc, timeout=15) == 1
    assert "cannot connect to sink" in log_text(state_dir)
    assert not (state_dir / "output.json").exists()
