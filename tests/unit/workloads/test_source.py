"""The source's request parsing (``workloads.source.parse_request``): what it serves and what it refuses."""

from __future__ import annotations

import json

import pytest

from workloads.source import (
    MAX_CHUNK_BYTES,
    MAX_REPLY_BYTES,
    MAX_REQUEST_BYTES,
    PullRequest,
    SourceRequestError,
    parse_request,
)

GOOD = {"seed": 3, "chunk_bytes": 262144, "first": 12, "count": 228}


def _line(body) -> bytes:
    return json.dumps(body).encode() + b"\n"


def test_a_request_round_trips_through_its_line():
    req = PullRequest(**GOOD)
    assert parse_request(req.line()) == req


@pytest.mark.parametrize(("line", "says"), [
    (b"GET / HTTP/1.1\r\n", "not a JSON line"),
    (b"\xff\xfe\n", "not a JSON line"),
    (b"[1, 2]\n", "JSON object"),
    (_line(GOOD)[:-1], "truncated"),
    (b"{" + b" " * MAX_REQUEST_BYTES + b"}\n", "longer than"),
    (_line({**GOOD, "op": "x"}), "unknown: op"),
    (_line({k: v for k, v in GOOD.items() if k != "count"}), "missing: count"),
    (_line({**GOOD, "count": "9"}), "'count'"),
    (_line({**GOOD, "first": True}), "'first'"),
    (_line({**GOOD, "seed": -1}), "'seed'"),
    (_line({**GOOD, "first": -5}), "'first'"),
    (_line({**GOOD, "chunk_bytes": 0}), "'chunk_bytes'"),
    (_line({**GOOD, "chunk_bytes": MAX_CHUNK_BYTES + 1}), "'chunk_bytes'"),
    (_line({**GOOD, "count": 0}), "'count'"),
    (_line({**GOOD, "count": 10**15}), "'count'"),
    (_line({**GOOD, "count": MAX_REPLY_BYTES // GOOD["chunk_bytes"] + 1}), "'count'"),
])  # fmt: skip
def test_a_bad_request_is_refused_saying_what_is_wrong(line, says):
    with pytest.raises(SourceRequestError, match=says):
        parse_request(line)


def test_the_largest_allowed_reply_is_served():
    req = parse_request(_line({**GOOD, "count": MAX_REPLY_BYTES // GOOD["chunk_bytes"]}))
    assert req.count * req.chunk_bytes == MAX_REPLY_BYTES
