"""Hostile requests against a real node agent: every answer a 4xx or a 2xx, never a 500 or a dropped connection.

The agent serves GETs only, so what a caller controls is the method, the path, the query, the headers (the
``Authorization`` token among them) and any body it sends anyway. Anything that reached an unexpected
exception would be answered 400 ``{"Error": ...}``, logged and counted in
``drsched_monitor_internal_errors_total`` (``monitor.guard``); the corpus must reach none.
"""

from __future__ import annotations

import pytest

from tests.adversarial import bodies, metric, send

pytestmark = pytest.mark.timeout(120)
ODD_HEADERS = [
    {"Authorization": "Bearer " + "\udcff".encode("utf-8", "surrogateescape").decode("latin-1") * 3},
    {"Authorization": "Bearer " + "x" * 6000},
    {"Authorization": "Basic \u00ff\u00fe"},
    {"Authorization": ""},
    {"Accept": "application/openmetrics-text; version=99"},
    {"Content-Type": "application/json", "Transfer-Encoding": "identity"},
]


def test_hostile_requests_get_no_500_and_no_drop(start_agent) -> None:
    agent = start_agent()
    seen = []
    for path in ("/usage", "/healthz", "/metrics"):
        for query in ("", "?x=" + "y" * 20_000, "?%ff%fe=%00", "?name[]=a&name[]=b", "?" + "&".join(["a=b"] * 3000)):
            for headers in [None, *ODD_HEADERS]:
                seen.append((f"GET {path}{query[:20]} {headers and list(headers)}",
                             send(agent.port, "GET", path + query, headers=headers)))
        for name, body in bodies({"node": "n", "pods": {}}).items():
            seen.append((f"POST {path} {name}", send(agent.port, "POST", path, body)))
    for method, path in [("GET", "/%ff/..%2f..%2fetc/passwd"), ("GET", "/" + "a" * 8000), ("OPTIONS", "/usage"),
                         ("DELETE", "/metrics"), ("GET", "/usage/")]:
        seen.append((f"{method} {path[:30]}", send(agent.port, method, path)))
    for what, answer in seen:
        assert answer.status is not None, f"{what}: the connection closed without an answer"
        assert not answer.reset, f"{what}: answered {answer.status}, then reset the connection (body left unread)"
        assert answer.status < 500 or (what.startswith("GET /healthz") and answer.status == 503), \
            (what, answer.status, answer.body[:200])
        if answer.status >= 400 and answer.body.startswith(b"{"):
            assert answer.json().get("Error") or answer.json().get("status"), (what, answer.body[:200])
    assert metric(agent.port, "drsched_monitor_internal_errors_total") == {"": 0.0}
    assert "Traceback" not in agent.log()
    assert agent.alive()
