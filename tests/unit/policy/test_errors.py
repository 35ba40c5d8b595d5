"""Every layer's ConfigError has one shape and survives pickling, so a worker's error reaches its parent as itself."""

from __future__ import annotations

import pickle
from concurrent.futures import ProcessPoolExecutor

import pytest

import kube.errors
import monitor.errors
import policy.errors
from extender.errors import StaticClusterError, UsageUnavailable
from policy.sim.errors import TraceError, UnknownClassError

CASES = [
    policy.errors.ConfigError("jobs", "must be > 0"),
    policy.errors.ConfigError(None, "file x.yaml: unreadable"),
    UnknownClassError("node_type", "huge", ["small", "large"]),
    TraceError("t.csv", 3, "cpu", "not a number"),
    kube.errors.ConfigError(None, "invalid configuration: port: too big"),
    kube.errors.TemporaryError("apiserver down", delay=2.5, status=503),
    StaticClusterError("c.yaml", 7, "nodes[0].cpu", "not a quantity"),
    UsageUnavailable("monitor", "timeout"),
    monitor.errors.ConfigError("interval", "must be > 0"),
    monitor.errors.SourceUnavailable("proc_stat", "gone"),
]


@pytest.mark.parametrize("exc", CASES, ids=lambda e: type(e).__name__)
def test_round_trips_through_pickle_with_its_message_and_fields(exc: Exception) -> None:
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is type(exc) and str(back) == str(exc) and back.__dict__ == exc.__dict__


def test_one_shape_and_one_except_for_every_layer() -> None:
    assert issubclass(kube.errors.ConfigError, policy.errors.ConfigError)
    assert issubclass(StaticClusterError, policy.errors.ConfigError)
    for cls in (policy.errors.ConfigError, kube.errors.ConfigError, monitor.errors.ConfigError):
        exc = cls("field", "message")
        assert (exc.field, exc.message, str(exc)) == ("field", "message", "field: message")
        assert str(cls(None, "message")) == "message"


def _raise_unknown(_: int) -> None:
    raise UnknownClassError("workload", "nope", ["cpu", "io"])


def test_raised_in_a_worker_arrives_as_itself_not_as_a_broken_pool() -> None:
    with ProcessPoolExecutor(max_workers=1) as pool, pytest.raises(UnknownClassError) as caught:
        list(pool.map(_raise_unknown, [1]))
    assert caught.value.field == "workload" and caught.value.name == "nope"
    assert str(caught.value) == "workload: unknown workload 'nope'; known: cpu, io"
