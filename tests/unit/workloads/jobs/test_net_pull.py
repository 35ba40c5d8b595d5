"""The pulling net job's own checks: where its source is, the source's answer, every chunk it reads."""

from __future__ import annotations

import argparse
import json

import pytest

from workloads.jobs.base import JobError
from workloads.jobs.data import chunk
from workloads.jobs.net import check_chunk, check_reply, source_address
from workloads.source import PullRequest

REQ = PullRequest(seed=1, chunk_bytes=64, first=5, count=10)


def _args(**kw) -> argparse.Namespace:
    return argparse.Namespace(**{"source": None, "source_env": None, **kw})


def test_source_from_the_flag_or_from_the_named_variable(monkeypatch):
    assert source_address(_args()) is None  # pushing
    assert source_address(_args(source=("10.0.0.1", 9))) == ("10.0.0.1", 9)
    monkeypatch.setenv("DRSCHED_SOURCE", "192.168.1.7:9010")
    assert source_address(_args(source_env="DRSCHED_SOURCE")) == ("192.168.1.7", 9010)


@pytest.mark.parametrize("value", [None, "", "192.168.1.7", "host:port", ":9010", "h:0", "h:70000"])
def test_a_variable_that_holds_no_address_fails_naming_it(monkeypatch, value):
    monkeypatch.delenv("DRSCHED_SOURCE", raising=False)
    if value is not None:
        monkeypatch.setenv("DRSCHED_SOURCE", value)
    with pytest.raises(JobError, match="--source-env DRSCHED_SOURCE"):
        source_address(_args(source_env="DRSCHED_SOURCE"))


def test_the_answer_must_say_ok_and_echo_the_request():
    check_reply(json.dumps({"ok": True, **REQ.__dict__}).encode() + b"\n", REQ)


@pytest.mark.parametrize(("line", "says"), [
    (b"", "closed the connection"),
    (b"garbage\n", "not JSON"),
    (b'{"ok": false, "error": "field \'count\': bad"}\n', "refused the request: field 'count'"),
    (b"[true]\n", "refused"),
    (json.dumps({"ok": True, **{**REQ.__dict__, "first": 0}}).encode() + b"\n", "another request"),
])  # fmt: skip
def test_a_bad_answer_fails_the_job(line, says):
    with pytest.raises(JobError, match=says):
        check_reply(line, REQ)


def test_each_chunk_must_be_the_seeds_chunk():
    expected = chunk(1, 5, 64)
    check_chunk(expected, expected, index=5)
    with pytest.raises(JobError, match="chunk 5 .* differs"):
        check_chunk(chunk(2, 5, 64), expected, index=5)
    with pytest.raises(JobError, match="in chunk 5 .10 of 64 bytes"):
        check_chunk(expected[:10], expected, index=5)
