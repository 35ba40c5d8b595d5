"""The pulling net job against a real source process over 127.0.0.1: same data as a pushing job, the cap
holds, a killed job resumes to the same output, and the source refuses bad requests and keeps serving."""

from __future__ import annotations

import json
import signal
import socket
import sys
import time

import pytest

from tests.helpers import free_port, wait_for
from workloads.jobs.data import chunk
from workloads.source import PullRequest

from .jobs import (
    CKPT_UNITS,
    json_file,
    log_text,
    popen,
    progress_of,
    sigkill,
    start,
    valid_checkpoints,
    wait_exit,
    wait_progress,
)

PULL = ["--units", "60", "--chunk-bytes", "16384", "--bandwidth", "1.0"]
"""The pushing reference's units, chunk size and cap (``jobs.KIND_ARGS['net']``), pulled instead."""


def _connectable(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A ``python -m workloads source`` process: (its address, its log file)."""
    port = free_port()
    log = tmp_path_factory.mktemp("source") / "source.log"
    proc = popen([sys.executable, "-m", "workloads", "source", "--port", str(port)], log)
    try:
        wait_for(lambda: _connectable(port), timeout=15, what="the source to listen")
        yield f"127.0.0.1:{port}", log
    finally:
        proc.send_signal(signal.SIGTERM)
        assert wait_exit(proc, timeout=10) == 0


def _pull(source, *extra):
    return ["--source", source[0], *PULL, *extra]


def test_pulled_data_is_the_pushing_jobs_data(tmp_path, reference, source):
    ref_outputs, _ = reference("net")
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    assert wait_exit(start("net", state_dir, base=_pull(source))) == 0, log_text(state_dir)
    pulled, pushed = json_file(state_dir / "output.json"), json.loads(ref_outputs["output.json"])
    assert (pulled["bytes"], pulled["sha256"]) == (pushed["bytes"], pushed["sha256"]) == (60 * 16384, pushed["sha256"])
    assert pulled["verified_by_job"] is True


def test_bandwidth_caps_the_pull(tmp_path, source):
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    units, size, mib_s = 48, 65536, 1.0  # 3 MiB at 1 MiB/s: at least 3 s, however fast the loopback is
    began = time.monotonic()
    proc = start("net", state_dir, base=["--source", source[0], "--units", str(units), "--chunk-bytes", str(size),
                                         "--bandwidth", str(mib_s)])
    assert wait_exit(proc) == 0, log_text(state_dir)
    assert time.monotonic() - began >= 0.95 * units * size / (mib_s * 2**20)


def test_a_killed_pull_resumes_from_its_checkpoint_to_the_same_output(tmp_path, source):
    whole = tmp_path / "whole"
    whole.mkdir()
    assert wait_exit(start("net", whole, base=_pull(source))) == 0, log_text(whole)
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    for target in (CKPT_UNITS + 4, 2 * CKPT_UNITS + 7):
        proc = start("net", state_dir, base=_pull(source))
        assert wait_progress(proc, state_dir, target) is not None, "finished before the kill"
        sigkill(proc)
    newest = max(valid_checkpoints(state_dir))
    proc = start("net", state_dir, base=_pull(source))
    assert wait_exit(proc) == 0, log_text(state_dir)
    assert progress_of(state_dir).resumed_from == newest >= 2 * CKPT_UNITS
    assert (state_dir / "output.json").read_bytes() == (whole / "output.json").read_bytes()


def _ask(address: str, payload: bytes, *, close_write: bool = False) -> tuple[bytes, bytes]:
    """Send ``payload``; the first line back and whatever follows until the source closes."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(payload)
        if close_write:
            sock.shutdown(socket.SHUT_WR)
        with sock.makefile("rb") as rfile:
            return rfile.readline(), rfile.read()


def _refused_count(log) -> int:
    lines = [line for line in log.read_text().splitlines() if "source request refused" in line]
    return len(lines)


def test_the_source_refuses_bad_requests_with_an_error_line_and_keeps_serving(source):
    address, log = source
    good = PullRequest(seed=7, chunk_bytes=4096, first=3, count=400)
    host, port = address.rsplit(":", 1)
    # A client mid-reply all along: the refusals below must not disturb it.
    with socket.create_connection((host, int(port)), timeout=10) as busy:
        busy.sendall(good.line())
        reader = busy.makefile("rb")
        assert json.loads(reader.readline())["ok"] is True
        first_half = reader.read(200 * 4096)
        before = _refused_count(log)
        bad = [_ask(address, b"\x00\x01garbage that is not json\n"),
               _ask(address, b'{"seed": 1, "chunk_bytes": 40', close_write=True),  # truncated: EOF mid-line
               _ask(address, json.dumps({"seed": 1, "chunk_bytes": 262144, "first": 0, "count": 10**15}).encode()
                    + b"\n")]
        for (line, rest), says in zip(bad, ("not a JSON line", "truncated", "'count'"), strict=True):
            answer = json.loads(line)
            assert answer["ok"] is False and says in answer["error"], answer
            assert rest == b""  # and the connection closed
        second_half = reader.read(200 * 4096)
        reader.close()
    assert first_half + second_half == b"".join(chunk(7, i, 4096) for i in range(3, 403))
    wait_for(lambda: _refused_count(log) - before >= 3, timeout=10, what="the source to log its three refusals")
    line, rest = _ask(address, PullRequest(seed=7, chunk_bytes=4096, first=0, count=2).line(), close_write=True)
    assert json.loads(line)["ok"] is True and rest == chunk(7, 0, 4096) + chunk(7, 1, 4096)
    assert "refused=" in log.read_text()


def test_a_client_that_stalls_mid_request_is_refused_after_the_idle_timeout(tmp_path):
    port = free_port()
    proc = popen([sys.executable, "-m", "workloads", "source", "--port", str(port), "--idle-timeout", "1"],
                 tmp_path / "source.log")
    try:
        wait_for(lambda: _connectable(port), timeout=15, what="the source to listen")
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b'{"seed": 1, "chunk_b')  # and then nothing, the connection left open
            began = time.monotonic()
            with sock.makefile("rb") as rfile:
                answer, rest = json.loads(rfile.readline()), rfile.read()
        assert time.monotonic() - began >= 0.9
        assert answer == {"ok": False, "error": "no complete request within 1 s"} and rest == b""
        # a served connection left open is closed quietly, not refused
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(PullRequest(seed=1, chunk_bytes=16, first=0, count=1).line())
            with sock.makefile("rb") as rfile:
                assert json.loads(rfile.readline())["ok"] and rfile.read() == chunk(1, 0, 16)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert wait_exit(proc, timeout=10) == 0
    log = (tmp_path / "source.log").read_text()
    assert log.count("source request refused") == 1 and "idle=1" in log and "served=1" in log
