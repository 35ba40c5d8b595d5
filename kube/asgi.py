"""ASGI plumbing every drsched listener shares: an answer never goes out over a request body still unread.

Why: a route that answers without reading the body (a 405 for ``POST /healthz``, the extender's 400 for a
body over its limit, a 404) lets uvicorn close the connection with the client's bytes still in the socket.
The kernel then sends RST instead of FIN, and RST can discard the answer before the client reads it: the
client sees a dropped connection, not the 4xx that names its mistake (seen in CI: a 1.4 MB ``POST /healthz``
to the node monitor got ``Connection reset by peer``). ``answer_after_request`` reads and discards what is
left of the body when the response starts: at most ``limit`` bytes and ``timeout_s`` seconds, past which
the close may still reset (a client sending that much to a route that takes nothing has been told enough).

Standard library only: the node monitor's image carries it beside ``kube.logs``. No web framework here.
"""

from __future__ import annotations

import asyncio

DRAIN_LIMIT = 16 * 2**20
DRAIN_TIMEOUT_S = 10.0


async def _discard(receive, limit: int) -> None:
    seen = 0
    while seen <= limit:
        msg = await receive()
        if msg["type"] != "http.request" or not msg.get("more_body", False):
            return
        seen += len(msg.get("body", b""))


def answer_after_request(receive, send, *, limit: int = DRAIN_LIMIT, timeout_s: float = DRAIN_TIMEOUT_S):
    """-> (receive, send) for the app inside: the same channels, except that ``http.response.start`` first
    drains the request body the app left unread. A body the app read to its end is not touched."""
    done = False

    async def tracked_receive():
        nonlocal done
        msg = await receive()
        if msg["type"] != "http.request" or not msg.get("more_body", False):
            done = True
        return msg

    async def draining_send(message) -> None:
        nonlocal done
        if message["type"] == "http.response.start" and not done:
            done = True
            try:
                await asyncio.wait_for(_discard(receive, limit), timeout_s)
            except TimeoutError:
                pass
        await send(message)

    return tracked_receive, draining_send
