"""WatchHealth: up/down per watch, since when, the readiness reason and the two metrics."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from extender.watch_health import WatchHealth, WatchMetrics


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _sample(registry: CollectorRegistry, name: str, kind: str) -> float:
    value = registry.get_sample_value(name, {"kind": kind})
    assert value is not None, name
    return value


def test_a_watch_starts_down_without_a_reason_then_goes_up() -> None:
    clock = Clock()
    health = WatchHealth(clock=clock)
    assert health.down() is None  # never failed: not synced yet is readiness's business, not this reason
    assert health.snapshot()["pods"] == {"up": False, "for_s": 0.0, "failures": 0, "error": None}
    clock.t = 102.0
    health.up("pods")
    assert health.snapshot()["pods"] == {"up": True, "for_s": 0.0, "failures": 0, "error": None}


def test_a_failure_is_reported_with_its_duration_and_cleared_by_the_next_list() -> None:
    clock, registry = Clock(), CollectorRegistry()
    health = WatchHealth(metrics=WatchMetrics(registry), clock=clock)
    for kind in ("nodes", "pods"):
        assert _sample(registry, "drsched_extender_watch_up", kind) == 0
        assert _sample(registry, "drsched_extender_watch_failures_total", kind) == 0
        health.up(kind)
    clock.t = 110.0
    health.failed("pods", "ConnectionRefusedError: [Errno 111]")
    clock.t = 113.5
    health.failed("pods", "MaxRetryError: connection refused")  # still down since 110: `since` does not move
    assert health.down() == "watch of pods down for 3.5 s: MaxRetryError: connection refused"
    assert health.snapshot()["pods"] == {"up": False, "for_s": 3.5, "failures": 2,
                                         "error": "MaxRetryError: connection refused"}
    assert health.snapshot()["nodes"]["up"] is True
    assert _sample(registry, "drsched_extender_watch_up", "pods") == 0
    assert _sample(registry, "drsched_extender_watch_up", "nodes") == 1
    assert _sample(registry, "drsched_extender_watch_failures_total", "pods") == 2
    clock.t = 120.0
    health.up("pods")
    assert health.down() is None
    assert health.snapshot()["pods"] == {"up": True, "for_s": 0.0, "failures": 2, "error": None}
    assert _sample(registry, "drsched_extender_watch_up", "pods") == 1


def test_both_watches_down_are_named_in_one_reason() -> None:
    clock = Clock()
    health = WatchHealth(clock=clock)
    health.up("nodes")
    health.up("pods")
    health.failed("nodes", "a")
    health.failed("pods", "b")
    clock.t = 101.0
    assert health.down() == "watch of nodes down for 1.0 s: a; watch of pods down for 1.0 s: b"
