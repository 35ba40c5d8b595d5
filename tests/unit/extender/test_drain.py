"""The shutdown drain's state and its ASGI layer (``extender.drain``); the process under SIGTERM is
``tests/integration/extender/test_extender_drain.py``."""

from __future__ import annotations

import asyncio

from extender.drain import CloseWhileDraining, Drain


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_drain_is_due_its_seconds_after_it_started_and_a_second_start_does_not_restart_it():
    clock = Clock()
    drain = Drain(5.0, clock=clock)
    assert not drain.active and not drain.due()
    drain.start()
    clock.now += 4.9
    drain.start()  # a second SIGTERM's start keeps the first deadline
    assert drain.active and not drain.due()
    clock.now += 0.1
    assert drain.due()


def answers(app, path: str = "/x") -> list[dict]:
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(app({"type": "http", "path": path}, receive, send))
    return sent


async def keep_alive_app(scope, receive, send):
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"connection", b"keep-alive")]})
    await send({"type": "http.response.body", "body": b"{}"})


def test_answers_keep_their_headers_until_the_drain_starts_and_then_say_connection_close_once():
    drain = Drain(5.0)
    app = CloseWhileDraining(keep_alive_app, drain=drain)
    start, body = answers(app)
    assert start["headers"] == [(b"content-type", b"application/json"), (b"connection", b"keep-alive")]
    drain.start()
    start, body = answers(app)
    assert start["status"] == 200 and body["body"] == b"{}"
    assert start["headers"] == [(b"content-type", b"application/json"), (b"connection", b"close")]


def test_lifespan_and_other_scopes_pass_through_untouched():
    seen = []

    async def app(scope, receive, send):
        seen.append(scope["type"])

    drain = Drain(1.0)
    drain.start()
    asyncio.run(CloseWhileDraining(app, drain=drain)({"type": "lifespan"}, None, None))
    assert seen == ["lifespan"]
