"""The last line of both extender listeners: no answer is a bare 500 page or a FastAPI-shaped error body.

Each verb's errors are mapped in ``extender.verbs`` (both entry paths call it), but two things reach a
client around a verb:

* an exception outside a route's ``try`` -- in a middleware or a decoder. msgspec and the stdlib JSON decoder
  raise ``RecursionError`` on JSON nested deeper than their limits (a 10 KB body of 1,500 ``[``), and
  Starlette answered that with a plain-text ``500 Internal Server Error``, logged nowhere we read and counted
  nowhere. ``LastResort`` catches it: one log line with the traceback, one count in
  ``drsched_extender_internal_errors_total{verb=<the path's verb, or "other">}``, and the verb's error answer
  (``{"Error": ...}`` with the verb's status from ``extender.verbs.ERROR_STATUS``: HTTP 200 for filter and
  bind, whose replies carry that field, 400 elsewhere).
* FastAPI's own HTTP errors: 404 / 405 from routing, and "There was an error parsing the body" (400).
  ``http_error`` gives them the project's ``{"Error": ...}`` shape and names what the decoder said.

A body nested too deeply is bad input, not a bug: ``too_deep`` is the one message both decoding paths give
it, and neither counts it as an internal error. The module owns no state.
"""

from __future__ import annotations

import logging

from fastapi import Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from extender.telemetry import VERBS
from extender.verbs import ERROR_STATUS, error_body
from kube.asgi import answer_after_request
from kube.logs import kv

log = logging.getLogger(__name__)


def too_deep(exc: RecursionError) -> str:
    return f"request body: JSON nested too deeply for the decoder ({exc})"


def verb_of(path: str) -> str:
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return last if last in VERBS else "other"


class LastResort:
    """ASGI middleware, outermost: an exception that escaped everything inside is logged, counted and answered.

    ``count(verb)`` increments the internal-error counter (the runtime's, once it exists)."""

    def __init__(self, app, count) -> None:
        self.app, self.count = app, count

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        receive, send = answer_after_request(receive, send)  # a 4xx to an unread body must not reset
        started = False

        async def tracking_send(message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            return await self.app(scope, receive, tracking_send)
        except Exception as exc:  # the safety net: a bug somewhere outside a route's own error mapping
            path = scope.get("path", "")
            verb = verb_of(path)
            log.exception("request failed outside its route", extra=kv(path=path, verb=verb, started=started))
            self.count(verb)
            if started:  # the status line is out: nothing more can be said to this client
                return None
            message = f"internal error: {type(exc).__name__}: {exc}"
            if isinstance(exc, RecursionError):
                message = too_deep(exc)
            status, body = ERROR_STATUS.get(verb, 400), error_body(message)
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return None


async def http_error(request: Request, exc: HTTPException) -> Response:
    """FastAPI's and Starlette's HTTP errors in the ``{"Error": ...}`` shape, naming the decoder's complaint."""
    message = str(exc.detail)
    cause = exc.__cause__
    if isinstance(cause, RecursionError):
        message = too_deep(cause)
    elif cause is not None:
        message = f"{message}: {type(cause).__name__}: {cause}"
    return Response(error_body(message), status_code=exc.status_code, media_type="application/json",
                    headers=getattr(exc, "headers", None))
