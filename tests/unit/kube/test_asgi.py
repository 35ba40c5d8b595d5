"""kube.asgi.answer_after_request: the response waits for the unread body, and only for it."""

from __future__ import annotations

import asyncio

from kube.asgi import answer_after_request


def _channel(chunks: list[bytes]):
    """A receive() that yields the body in ``chunks`` and records how many messages were taken."""
    taken = []

    async def receive():
        i = len(taken)
        taken.append(i)
        if i >= len(chunks):
            await asyncio.sleep(3600)  # a real server blocks until the client disconnects
        return {"type": "http.request", "body": chunks[i], "more_body": i < len(chunks) - 1}

    return receive, taken


def _run(app_reads: int, chunks: list[bytes], **kw) -> tuple[int, list[dict]]:
    receive, taken = _channel(chunks)
    sent = []

    async def send(message):
        sent.append(message)

    async def main():
        inner_receive, inner_send = answer_after_request(receive, send, **kw)
        for _ in range(app_reads):
            await inner_receive()
        await inner_send({"type": "http.response.start", "status": 405, "headers": []})
        await inner_send({"type": "http.response.body", "body": b"{}"})

    asyncio.run(asyncio.wait_for(main(), 5))
    return len(taken), sent


def test_an_unread_body_is_drained_before_the_status_line() -> None:
    taken, sent = _run(0, [b"a" * 10, b"b" * 10, b"c"])
    assert taken == 3 and [m["type"] for m in sent] == ["http.response.start", "http.response.body"]


def test_a_body_read_to_its_end_is_not_read_again() -> None:
    taken, _ = _run(3, [b"a", b"b", b"c"])
    assert taken == 3  # a fourth receive() would block (the fake sleeps): the test would time out


def test_a_half_read_body_is_drained_from_where_the_app_stopped() -> None:
    taken, _ = _run(1, [b"a", b"b", b"c", b"d"])
    assert taken == 4


def test_draining_stops_at_the_limit_and_the_answer_still_goes_out() -> None:
    taken, sent = _run(0, [b"x" * 100] * 50, limit=250)
    assert taken == 3 and sent[0]["status"] == 405  # 100, 200, 300 bytes read: past 250, it stops


def test_a_client_that_stops_sending_delays_the_answer_at_most_the_timeout() -> None:
    receive_never = [b"x"] * 1

    async def stall():
        await asyncio.sleep(3600)

    sent = []

    async def send(message):
        sent.append(message)

    async def main():
        calls = 0

        async def receive():
            nonlocal calls
            calls += 1
            if calls == 1:
                return {"type": "http.request", "body": receive_never[0], "more_body": True}
            return await stall()

        _, inner_send = answer_after_request(receive, send, timeout_s=0.05)
        await inner_send({"type": "http.response.start", "status": 405, "headers": []})

    asyncio.run(asyncio.wait_for(main(), 5))
    assert sent and sent[0]["status"] == 405
