"""monitor.guard: an exception that escapes a route is logged, counted and answered 400 with Error."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client import CollectorRegistry, generate_latest
from starlette.exceptions import HTTPException

from monitor.guard import LastResort, http_error, internal_errors


def test_guard_answers_logs_and_counts(caplog) -> None:
    registry = CollectorRegistry()
    errors = internal_errors(registry)
    app = FastAPI()
    app.add_middleware(LastResort, counter=lambda: errors)
    app.add_exception_handler(HTTPException, http_error)

    @app.get("/boom")
    async def boom() -> dict:
        raise ZeroDivisionError("injected")

    with TestClient(app, raise_server_exceptions=False) as client:
        reply = client.get("/boom")
        missing = client.get("/missing")
    assert reply.status_code == 400 and reply.json() == {"Error": "internal error: ZeroDivisionError: injected"}
    assert missing.status_code == 404 and missing.json() == {"Error": "Not Found"}
    assert b"drsched_monitor_internal_errors_total 1.0" in generate_latest(registry)
    assert any("request failed" in r.getMessage() and r.exc_info for r in caplog.records)
