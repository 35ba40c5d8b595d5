"""The monitor's last resort: an unexpected exception in a request is logged, counted and answered as JSON.

Without it Starlette answers a plain-text 500 that nothing counts. The agent serves only GETs, so what a
caller controls is the path, the query string and the headers; a bug reached through them is still a bug:
one log line with its traceback, one ``drsched_monitor_internal_errors_total``, and a 400
``{"Error": ...}`` naming the exception (the extender's convention, ``extender.guard``; the monitor's image
carries no extender, so this small copy of the rule lives here). HTTP errors of FastAPI's own (404, 405,
422) keep their 4xx status and get the same ``{"Error": ...}`` shape. Owns the one counter.
"""

from __future__ import annotations

import json
import logging

from fastapi import Request
from fastapi.responses import Response
from prometheus_client import CollectorRegistry, Counter
from starlette.exceptions import HTTPException

from kube.asgi import answer_after_request
from kube.logs import kv

log = logging.getLogger(__name__)


def _reply(status: int, message: str) -> Response:
    return Response(json.dumps({"Error": message}), status_code=status, media_type="application/json")


class LastResort:
    """ASGI middleware, outermost; ``counter()`` is the internal-error counter."""

    def __init__(self, app, counter) -> None:
        self.app, self.counter = app, counter

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        receive, send = answer_after_request(receive, send)  # a 405 to a POST must not reset the connection
        started = False

        async def tracking_send(message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            return await self.app(scope, receive, tracking_send)
        except Exception as exc:  # a bug outside a route's own handling
            log.exception("request failed", extra=kv(path=scope.get("path", ""), started=started))
            self.counter().inc()
            if not started:
                await _reply(400, f"internal error: {type(exc).__name__}: {exc}")(scope, receive, send)
            return None


def internal_errors(registry: CollectorRegistry | None) -> Counter:
    return Counter("drsched_monitor_internal_errors_total",
                   "Requests that hit an unexpected exception (a bug), answered with Error", registry=registry)


async def http_error(request: Request, exc: HTTPException) -> Response:
    return _reply(exc.status_code, str(exc.detail))
