"""Hostile requests against the migration controller's one listener (``migration.app.serve_metrics``).

The controller serves nothing but ``/metrics`` through prometheus_client's threaded HTTP server; a caller
controls the method, path, query, headers and a body. Every answer must be a status line below 500, and the
server must keep answering afterwards.
"""

from __future__ import annotations

import pytest

from migration.app import serve_metrics
from migration.telemetry import Telemetry
from tests.adversarial import bodies, send
from tests.helpers import free_port, wait_for

pytestmark = pytest.mark.timeout(120)


def test_hostile_requests_get_no_500_and_no_drop() -> None:
    port, telemetry = free_port(), Telemetry()
    server, _ = serve_metrics(port=port, host="127.0.0.1", registry=telemetry.metrics.registry)
    try:
        _hostile(port)
    finally:
        server.shutdown()
        server.server_close()


def _hostile(port: int) -> None:
    wait_for(lambda: send(port, "GET", "/metrics", headers={}).status == 200, timeout=10, what="/metrics",
             ignore=(OSError,))
    seen = []
    for query in ("", "?name[]=drsched_migration_started_total", "?name[]=%ff%fe%00", "?" + "&".join(["a=b"] * 3000),
                  "?name[]=" + "x" * 20_000):
        for headers in (None, {"Accept": "application/openmetrics-text; version=99"}, {"Accept-Encoding": "gzip"},
                        {"Accept": "\u00ff" * 100}):
            seen.append((f"GET {query[:30]} {headers}", send(port, "GET", "/metrics" + query, headers=headers)))
    for name, body in bodies({"a": 1}).items():
        seen.append((f"POST {name}", send(port, "POST", "/metrics", body)))
    for method, path in [("GET", "/%ff/..%2f"), ("GET", "/" + "a" * 8000), ("DELETE", "/metrics"), ("GET", "/")]:
        seen.append((f"{method} {path[:30]}", send(port, method, path)))
    for what, answer in seen:
        assert answer.status is not None, f"{what}: the connection closed without an answer"
        assert not answer.reset, f"{what}: answered {answer.status}, then reset the connection (body left unread)"
        assert answer.status < 500, (what, answer.status, answer.body[:200])
    after = send(port, "GET", "/metrics", headers={})
    assert after.status == 200 and b"drsched_migration_started_total" in after.body
