"""The one Event recorder: rate limit per (reason, pod, key), unlimited posts still count, best effort."""

from __future__ import annotations

from kube.events import EventRecorder


class Sink:
    def __init__(self) -> None:
        self.posted: list[dict] = []

    def event(self, **kw) -> None:
        self.posted.append(kw)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def post(rec: EventRecorder, *, name: str = "p", reason: str = "R", **kw) -> bool:
    return rec.post(namespace="ns", name=name, uid="u", reason=reason, message="m", type_="Normal", **kw)


def test_one_event_per_reason_and_pod_per_interval():
    sink, clock = Sink(), Clock()
    rec = EventRecorder(sink, interval_s=60.0, clock=clock)
    assert [post(rec), post(rec), post(rec, name="q"), post(rec, reason="S")] == [True, False, True, True]
    clock.now = 59.9
    assert post(rec) is False
    clock.now = 60.0
    assert post(rec) is True
    assert [(e["name"], e["reason"]) for e in sink.posted] == [("p", "R"), ("q", "R"), ("p", "S"), ("p", "R")]


def test_key_separates_and_unlimited_posts_count_for_later_limited_ones():
    sink, clock = Sink(), Clock()
    rec = EventRecorder(sink, interval_s=60.0, clock=clock)
    assert post(rec, key=("a",)) and post(rec, key=("b",))
    assert post(rec, key=("c",), limit=False) and post(rec, key=("c",), limit=False)
    assert post(rec, key=("c",)) is False
    assert len(sink.posted) == 4


def test_message_is_cut_to_what_the_api_accepts_and_a_failing_sink_is_not_fatal():
    sink = Sink()
    EventRecorder(sink).post(namespace="ns", name="p", uid="", reason="R", message="x" * 5000, type_="Warning")
    assert len(sink.posted[0]["message"]) == 1000 and sink.posted[0]["type_"] == "Warning"

    class Broken:
        def event(self, **kw):
            raise RuntimeError("apiserver away")

    assert EventRecorder(Broken()).post(namespace="ns", name="p", uid="", reason="R", message="m", type_="Normal")


def test_without_a_sink_events_are_dropped():
    assert post(EventRecorder()) is True
