"""The one error map (``extender.verbs``): what each raised type becomes, per verb, and how it is counted."""

from __future__ import annotations

import json

import pytest

from extender.errors import BadRequest, BindError
from extender.telemetry import Telemetry
from extender.verbs import RawJSON, answer, encode


class _Rt:
    def __init__(self) -> None:
        self.telemetry = Telemetry()


def _raise(exc: Exception):
    def call():
        raise exc
    return call


def _value(rt: _Rt, name: str, **labels: str) -> float:
    return rt.telemetry.metrics.registry.get_sample_value(name, labels) or 0.0


@pytest.mark.parametrize("verb,exc,outcome,status,error", [
    ("filter", BadRequest("request has no Pod"), "bad_request", 200, "request has no Pod"),
    ("prioritize", BadRequest("request has no Pod"), "bad_request", 400, "request has no Pod"),
    ("preempt", BadRequest("x"), "bad_request", 400, "x"),
    ("bind", BindError("pods \"p\" not found"), "refused", 200, "pods \"p\" not found"),
    ("filter", KeyError("k"), "error", 200, "internal error: KeyError: 'k'"),
    ("prioritize", ValueError("v"), "error", 400, "internal error: ValueError: v"),
    ("bind", RuntimeError("r"), "error", 200, "internal error: RuntimeError: r"),
])
def test_each_error_is_one_answer_per_verb(verb, exc, outcome, status, error) -> None:
    rt = _Rt()
    got = answer(rt, verb, _raise(exc), start=0.0)
    assert got[:2] == (outcome, status)
    body = json.loads(got[2])
    assert body["Error"] == error
    if verb == "filter":  # kube-scheduler reads filter's reply whole: its other fields are there, null
        assert body == {"Nodes": None, "NodeNames": None, "FailedNodes": None, "FailedAndUnresolvableNodes": None,
                        "Error": error}
    else:
        assert body == {"Error": error}
    assert _value(rt, "drsched_extender_requests_total", verb=verb, outcome=outcome) == 1
    assert _value(rt, "drsched_extender_internal_errors_total", verb=verb) == (outcome == "error")
    assert _value(rt, "drsched_extender_request_seconds_count", verb=verb) == 1


def test_a_result_is_sent_as_encoded() -> None:
    rt = _Rt()
    assert answer(rt, "prioritize", lambda: RawJSON(b'[{"Host":"a","Score":3}]'), start=0.0) == \
        ("ok", 200, b'[{"Host":"a","Score":3}]')
    assert answer(rt, "bind", lambda: {"Error": ""}, start=0.0) == ("ok", 200, b'{"Error":""}')
    assert _value(rt, "drsched_extender_requests_total", verb="bind", outcome="ok") == 1


def test_encode_keeps_integers_orjson_refuses() -> None:
    """A client's huge NumPDBViolations echoed by preempt is still a reply, not an internal error."""
    assert json.loads(encode({"n": 2**70, "s": "é"})) == {"n": 2**70, "s": "é"}
