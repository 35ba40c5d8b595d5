"""The two listeners of a real ``python -m extender``: the service port and the loopback debug port.

The service port (here on every address, as in a pod behind a Service) answers the verbs, probes and
metrics but not ``/debug/*``; the debug listener answers ``/debug/*`` on loopback only, so it is not
reachable on the address the Service forwards to. ``--debug-port 0`` serves no debug endpoints at all.
Without a cluster, the extender says in one line what to pass and exits 2.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import REPO, deadline, free_port

from .payloads import EXAMPLE

pytestmark = pytest.mark.timeout(90)


def _service_address() -> str:
    """This machine's non-loopback IPv4 address (what a pod IP is), else another loopback address."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))  # UDP: picks the outgoing address, sends nothing
            address = s.getsockname()[0]
        except OSError:
            address = "127.0.0.1"
    return address if not address.startswith("127.") else "127.0.0.2"


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=3) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "extender", "--static-cluster", str(EXAMPLE), *args], cwd=REPO,
                            env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _wait(proc: subprocess.Popen, url: str) -> None:
    until = time.monotonic() + deadline(30)
    while _try(url) is None:
        if proc.poll() is not None:
            pytest.fail(f"extender exited {proc.returncode}: {proc.stdout.read().decode()[-2000:]}")
        if time.monotonic() > until:
            pytest.fail(f"{url} never answered")
        time.sleep(0.2)


def _try(url: str) -> int | None:
    try:
        return _status(url)
    except OSError:
        return None


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=deadline(10))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=deadline(10))


def test_debug_endpoints_are_on_loopback_only_never_on_the_service_address() -> None:
    port, debug_port, address = free_port(), free_port(), _service_address()
    proc = _start("--host", "0.0.0.0", "--port", str(port), "--debug-port", str(debug_port))
    try:
        _wait(proc, f"http://{address}:{port}/readyz")
        for path in ("/healthz", "/readyz", "/metrics"):
            assert _status(f"http://{address}:{port}{path}") == 200, path
        for path in ("/debug/explain?namespace=jobs&name=batch-7", "/debug/usage", "/debug/profiles", "/debug/noop"):
            assert _status(f"http://{address}:{port}{path}") == 404, path  # not on the service port
            assert _status(f"http://127.0.0.1:{debug_port}{path}") == 200, path  # port-forward reaches this
            with pytest.raises(OSError):  # ConnectionRefused: nothing listens there on that address
                _status(f"http://{address}:{debug_port}{path}")
        usage = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{debug_port}/debug/usage", timeout=3).read())
        assert "node-b" in usage["nodes"]
    finally:
        _stop(proc)


def test_debug_port_zero_serves_no_debug_endpoints() -> None:
    port = free_port()
    proc = _start("--port", str(port), "--debug-port", "0", "--log-format", "text")
    try:
        _wait(proc, f"http://127.0.0.1:{port}/readyz")
        assert _status(f"http://127.0.0.1:{port}/debug/usage") == 404
    finally:
        _stop(proc)
    assert proc.stdout.read().decode().count("Uvicorn running on") == 1


def test_debug_port_equal_to_the_service_port_is_refused() -> None:
    done = subprocess.run([sys.executable, "-m", "extender", "--static-cluster", str(EXAMPLE), "--port", "9999",
                           "--debug-port", "9999"], cwd=REPO, capture_output=True, text=True, timeout=deadline(30))
    assert done.returncode == 2 and "debug_port 9999 is the service port" in done.stderr


def test_without_a_cluster_one_line_names_what_to_pass_and_exits_2(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = str(tmp_path)  # no ~/.kube/config
    done = subprocess.run([sys.executable, "-m", "extender"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=deadline(30))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for words in ("--kubeconfig", "in-cluster", "--static-cluster"):
        assert words in lines[0]
    assert "Traceback" not in done.stderr and done.stdout == ""
