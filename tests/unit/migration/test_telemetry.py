"""The one reporting helper, and the loop's backoff when the API server is away."""

from __future__ import annotations

import logging
import threading

from kube.errors import TemporaryError
from migration.controller import run_loop
from migration.telemetry import Kind, Metrics, PodRef, Telemetry


class Events:
    def __init__(self) -> None:
        self.posted = []

    def event(self, **kw):
        self.posted.append(kw)


def test_one_call_one_log_line_one_event_one_counter(caplog):
    events = Events()
    tele = Telemetry(Metrics(), events)
    with caplog.at_level(logging.DEBUG, logger="migration"):
        tele.report(Kind.RELEASED, "rolled-back", "eviction refused", pod=PodRef("ns", "job", "u"), job="ns/job")
        tele.report(Kind.SKIP, "no-progress", "none", pod=PodRef("ns", "job", "u"))
    assert [r.getMessage() for r in caplog.records] == ["[ns/job] migration released", "[ns/job] migration skip"]
    assert caplog.records[0].kv == {"kind": "released", "reason": "rolled-back", "detail": "eviction refused",
                                    "job": "ns/job"}
    assert [e["reason"] for e in events.posted] == ["MigrationRolledBack"], "no Event for a skip"
    get = tele.metrics.registry.get_sample_value
    assert get("drsched_migration_rolled_back_total") == 1
    assert get("drsched_migration_released_total", {"outcome": "rolled-back"}) == 1
    assert get("drsched_migration_skipped_total", {"reason": "no-progress"}) == 1


def test_repeated_refusal_events_are_rate_limited_but_counted():
    events = Events()
    tele = Telemetry(Metrics(), events)
    for _ in range(3):
        tele.report(Kind.DECISION, "cooldown", "wait", pod=PodRef("ns", "job"))
    assert len(events.posted) == 1
    assert tele.metrics.registry.get_sample_value("drsched_migration_decisions_total", {"verdict": "cooldown"}) == 3


def test_event_sink_failure_is_not_fatal():
    class Broken:
        def event(self, **kw):
            raise RuntimeError("apiserver away")

    Telemetry(Metrics(), Broken()).report(Kind.STEP, "evicting", "x", pod=PodRef("ns", "job"))


def test_loop_backs_off_on_temporary_errors_and_recovers():
    stop = threading.Event()
    tele = Telemetry(Metrics())
    waits = []

    class Ctl:
        telemetry = tele
        calls = 0

        def cycle(self):
            Ctl.calls += 1
            if Ctl.calls <= 3:
                raise TemporaryError("apiserver unavailable", delay=0.0)
            stop.set()

    real_wait = stop.wait
    stop.wait = lambda t: waits.append(t) or real_wait(0)  # type: ignore[method-assign]
    run_loop(Ctl(), interval_s=5, stop=stop)
    assert Ctl.calls == 4 and waits == [1.0, 2.0, 4.0, 5]
    assert tele.metrics.registry.get_sample_value("drsched_migration_errors_total", {"kind": "temporary"}) == 3
