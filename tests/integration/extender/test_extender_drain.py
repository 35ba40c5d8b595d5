"""A real ``python -m extender`` under SIGTERM, as a rolling upgrade sends it (``extender.drain``): with
``--shutdown-drain-s`` it keeps answering the verbs, says ``draining`` on /readyz and closes each
keep-alive connection after its answer, then exits by itself; a second SIGTERM ends the drain at once;
without the flag it stops at once, as before."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys

import pytest

from tests.helpers import REPO, deadline, free_port, wait_for

from .payloads import EXAMPLE, NODE_NAMES, V1_POD

pytestmark = pytest.mark.timeout(120)
BODY = json.dumps({"Pod": V1_POD, "Nodes": None, "NodeNames": NODE_NAMES}).encode()


def start(*extra: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "extender", "--static-cluster", str(EXAMPLE), "--port", str(port),
                             "--debug-port", "0", "--log-format", "text", *extra],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip

    def up() -> bool:
        if proc.poll() is not None:
            pytest.fail(f"the extender exited with {proc.returncode}:\n{proc.stdout.read().decode()}")
        return ask(http.client.HTTPConnection("127.0.0.1", port, timeout=2), "GET", "/readyz")[0] == 200

    wait_for(up, timeout=30, what=f"the extender on port {port} ready", ignore=(OSError,))
    return proc, port


def ask(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None = None
        ) -> tuple[int, str | None, bytes]:  # fmt: skip
    """(status, the Connection header, body) over ``conn``, which stays open when the server keeps it."""
    conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    return resp.status, resp.getheader("connection"), resp.read()


def stop(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        proc.kill()
    return proc.communicate(timeout=10)[0].decode()


def test_sigterm_drains_serving_every_verb_with_connection_close_then_exits():
    proc, port = start("--shutdown-drain-s", "30")
    try:
        kept = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        status, connection, _ = ask(kept, "POST", "/prioritize", BODY)
        assert status == 200 and connection != "close"  # keep-alive before the signal

        proc.send_signal(signal.SIGTERM)

        def draining() -> dict | None:
            status, _, raw = ask(http.client.HTTPConnection("127.0.0.1", port, timeout=2), "GET", "/readyz")
            body = json.loads(raw)
            return body if status == 503 and body["status"] == "draining" else None

        ready = wait_for(draining, timeout=10, what="/readyz 503 draining after SIGTERM", ignore=(OSError,))
        assert ready["reason"] == "draining before shutdown"
        # the kept connection is still served, and told to go: its client reconnects, through the Service to
        # another replica
        status, connection, raw = ask(kept, "POST", "/prioritize", BODY)
        assert status == 200 and connection == "close" and [s["Host"] for s in json.loads(raw)] == NODE_NAMES
        # new connections (the Service has not yet dropped the endpoint) are served too
        status, connection, raw = ask(http.client.HTTPConnection("127.0.0.1", port, timeout=5), "POST", "/filter",
                                      BODY)  # fmt: skip
        assert status == 200 and connection == "close" and json.loads(raw)["NodeNames"]
        assert proc.poll() is None, "the drain ended before its 30 s"

        proc.send_signal(signal.SIGTERM)  # a second SIGTERM: stop now
        proc.wait(timeout=deadline(15))
    finally:
        out = stop(proc)
    assert "draining before shutdown" in out or "SIGTERM: draining" in out, out[-2000:]


def test_a_drain_ends_by_itself_and_the_process_exits():
    proc, port = start("--shutdown-drain-s", "1")
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=deadline(20))
    finally:
        stop(proc)
    with pytest.raises(OSError):
        ask(http.client.HTTPConnection("127.0.0.1", port, timeout=2), "GET", "/healthz")


def test_without_a_drain_sigterm_stops_at_once():
    proc, port = start()
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=deadline(15))
    finally:
        out = stop(proc)
    assert "draining" not in out
