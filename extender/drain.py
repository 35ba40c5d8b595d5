"""Stopping without dropping a request: the extender's drain between SIGTERM and exit.

Why: in a rolling upgrade (a new image, a new model, a changed flag) Kubernetes sends SIGTERM to an old replica
while the Service may still route new connections to it for a moment, and kube-scheduler holds a keep-alive
connection to it that the Service cannot move: kube-proxy steers new connections only. A replica that
stopped listening at once would make the scheduling cycles in flight fail their extender call (with
``ignorable: true`` the pod is then placed without drsched; without it, the cycle fails).

So on the first SIGTERM the replica drains for ``shutdown_drain_s`` seconds before uvicorn's own graceful
shutdown: it keeps serving every request, ``/readyz`` answers 503 ``draining`` (the endpoint leaves the
Service if it has not already), and every answer carries ``Connection: close``, so the next request of a
keep-alive client opens a new connection, which the Service sends to a replica that is not draining. Then it
stops as before: in-flight requests finish, idle connections close. A second SIGTERM, or SIGINT (an operator
at a terminal), stops at once. ``shutdown_drain_s`` is 0 (no drain) unless set: the shipped Deployment sets 5,
below its ``terminationGracePeriodSeconds`` of 10; a process outside Kubernetes has no Service to leave.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable
from typing import Any

from kube.logs import kv

log = logging.getLogger("extender.drain")
CLOSE = (b"connection", b"close")


class Drain:
    """Whether, and since when, this process drains; ``due`` once ``seconds`` have passed since ``start``."""

    def __init__(self, seconds: float = 0.0, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds, self._clock = seconds, clock
        self.started: float | None = None

    @property
    def active(self) -> bool:
        return self.started is not None

    def start(self) -> None:
        if self.started is None:
            self.started = self._clock()

    def due(self) -> bool:
        return self.started is not None and self._clock() - self.started >= self.seconds


class CloseWhileDraining:
    """ASGI middleware: every HTTP request that arrives while ``drain`` is active is answered with
    ``Connection: close``."""

    def __init__(self, app, *, drain: Drain) -> None:
        self.app, self.drain = app, drain

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or not self.drain.active:  # the request path pays one check, not a wrapper
            return await self.app(scope, receive, send)

        async def closing_send(message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0].lower() != b"connection"]
                message = {**message, "headers": [*headers, CLOSE]}
            await send(message)

        return await self.app(scope, receive, closing_send)


def draining_server(config: Any, drain: Drain):
    """A ``uvicorn.Server`` for ``config`` whose first SIGTERM starts ``drain`` instead of stopping; it stops
    when the drain is due (every server sharing ``drain`` does: the signal reaches only one of them)."""
    import uvicorn

    class DrainingServer(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if sig == signal.SIGTERM and drain.seconds > 0 and not drain.active and not self.should_exit:
                self._captured_signals.append(sig)  # re-raised after the shutdown, as uvicorn does
                drain.start()
                log.info("SIGTERM: draining before shutdown", extra=kv(drain_s=drain.seconds))
                return
            super().handle_exit(sig, frame)

        async def on_tick(self, counter: int) -> bool:
            if drain.due():
                self.should_exit = True
            return await super().on_tick(counter)

    return DrainingServer(config)
