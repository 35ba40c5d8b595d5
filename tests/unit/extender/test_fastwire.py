"""The fast filter/prioritize parser reads every body exactly as the pydantic wire model does, or defers."""

import gzip
import json
from pathlib import Path

import orjson
import pytest
from pydantic import ValidationError

from extender.fastwire import _Slow, parse_args
from extender.raw_nodes import RawItems
from extender.wire import ExtenderArgs

CORPUS = Path(__file__).resolve().parents[2] / "integration" / "extender" / "replay" / "corpus.json.gz"


def _bodies():
    with gzip.open(CORPUS, "rt", encoding="utf-8") as fh:
        ops = json.load(fh)["ops"]
    return [op["body"].encode() for op in ops if op["verb"] != "bind"]


@pytest.mark.parametrize("body", [
    b'{"Pod": {"metadata": {"name": "p"}}, "Nodes": null, "NodeNames": ["a", "b"]}',
    b'{"pod": {}, "NODENAMES": ["a"], "NodeNames": ["b"], "nodenames": ["c"], "Extra": [1]}',
    b'{"Pod": null, "Nodes": {"Items": [{"metadata": {"name": "a"}}], "metadata": {}}, "NodeNames": null}',
    b'{"Nodes": {}}',
    b'{}',
    b'{"NodeNames": ["a"], "X": 123456789012345678901234567890}',
])
def test_parses_like_the_wire_model(body):
    assert _dump(parse_args(body)) == ExtenderArgs.model_validate(json.loads(body)).model_dump()


def _dump(args: ExtenderArgs) -> dict:
    """``model_dump`` with the full nodes, which the fast path keeps as the request's bytes, parsed."""
    nodes = args.Nodes
    if nodes is not None:
        assert isinstance(nodes.items, RawItems) and all(type(b) is bytes for b in nodes.items)
        nodes = {"metadata": nodes.metadata, "items": [orjson.loads(b) for b in nodes.items]}
    return {"Pod": args.Pod, "Nodes": nodes, "NodeNames": args.NodeNames}


def test_full_nodes_stay_the_request_bytes():
    body = b'{"Nodes": {"items": [ {"metadata": {"name": "a"}} , {"b": [1, 2]}]}}'
    assert parse_args(body).Nodes.items == [b'{"metadata": {"name": "a"}}', b'{"b": [1, 2]}']


@pytest.mark.parametrize("body", [
    b"not json", b"[1, 2]", b'"x"', b'{"NodeNames": [1]}', b'{"NodeNames": "a"}', b'{"Pod": []}',
    b'{"Nodes": {"items": "x"}}', b'{"Nodes": {"items": [1]}}', b'{"Nodes": {"items": null}}',
    b'{"Nodes": {"metadata": 3}}', b'{"Nodes": []}', b'{"Pod": {}, "X": NaN}',
    b'{"Pod": {}, "X": "\xff"}', b'{"Nodes": {"items": [{"a": 1}]}} x', b'{"NodeNames": [1e999]}',
])
def test_defers_what_it_does_not_take_to_the_pydantic_path(body):
    with pytest.raises(_Slow):
        parse_args(body)


def test_every_recorded_body_parses_as_pydantic_does_or_is_deferred():
    taken = 0
    for body in _bodies():
        try:
            reference = ExtenderArgs.model_validate(json.loads(body)).model_dump()
        except (ValidationError, ValueError):
            reference = None
        try:
            fast = _dump(parse_args(body))
        except _Slow:
            continue
        assert fast == reference, body[:200]
        taken += 1
    assert taken > 300  # the kube-scheduler-shaped requests all take the fast path
