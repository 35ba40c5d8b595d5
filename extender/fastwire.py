"""filter and prioritize without FastAPI's routing and pydantic: raw ASGI, orjson, the same wire semantics.

kube-scheduler calls these two verbs once each per pod, on its serial scheduling path, with a body that
names every candidate node (80 KiB at 5,000 nodes; far more with full Node objects). Routing, dependency
resolution and pydantic validation of that body through FastAPI cost as much as scoring a few hundred
nodes, so ``FastVerbs`` answers them first, in front of the app:

* the body is split with msgspec, its small members parsed with orjson, and checked against
  ``ExtenderArgs``' shape here (any key casing, exact-case key wins, unknown keys ignored, ``Pod`` an
  object or null, ``NodeNames`` a list of strings or null, ``Nodes`` an object whose ``items`` are
  objects); full Node objects stay bytes (``extender.raw_nodes``: a node seen before is not parsed again);
* JSON nested deeper than msgspec's limit -> 400 ``{"Error": ...}`` saying so (``extender.guard.too_deep``);
* anything else -- not JSON for orjson (``NaN``, huge integers, invalid UTF-8), wrong types -- is handed, bytes
  unchanged, to the FastAPI route behind, which answers exactly as before (400 naming the field,
  or stdlib JSON's leniency). So every reply, error or not, is the one the pydantic path gives
  (one difference: orjson reads an integer beyond 64 bits as a float, which Go's encoder never writes
  into a Pod or a Node);
* the answer, its error mapping and the metrics are the routes' own: both call ``extender.verbs.answer``
  (``BadRequest`` -> 200 with ``Error`` for filter, 400 for prioritize; a bug -> logged, counted in
  ``drsched_extender_internal_errors_total`` and answered the same way, never a 500).
  ``drsched_extender_request_seconds`` here runs from the request's arrival to the encoded reply, so it
  includes reading and parsing the body.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from extender.guard import too_deep
from extender.raw_nodes import (
    NotParsed,
    RawItems,
    Split,
    SplitError,
    as_items,
    is_utf8,
    split_args,
    split_list,
    split_object,
)
from extender.runtime import Runtime
from extender.verbs import answer as answer_verb
from extender.verbs import count, error_body
from extender.wire import ExtenderArgs, NodeList

_ARGS_KEYS = {"pod": "Pod", "nodes": "Nodes", "nodenames": "NodeNames"}
_LIST_KEYS = {"metadata": "metadata", "items": "items"}
_HEADERS = [(b"content-type", b"application/json")]
_STR = {str}  # set(map(type, xs)) <= _STR: the types of 5,000 names checked in C


class _Slow(Exception):
    """The body needs the pydantic path (it decides the exact 400, or accepts what orjson does not)."""


def _normalise(data: Any, keys: dict[str, str]) -> dict[str, Any]:
    """Case-insensitive keys onto field names, as ``extender.wire._Wire`` does; unknown keys dropped."""
    if type(data) is not dict:
        raise _Slow
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = keys.get(key.lower())
        if name is None or (name in out and key != name):
            continue  # unknown, or an exact-case key already won
        out[name] = value
    return out


def parse_args(body: bytes) -> ExtenderArgs:
    """``ExtenderArgs`` from a request body, or ``_Slow`` when only the pydantic path can answer it.

    The body is split by msgspec (``extender.raw_nodes``), and only ``Pod``, ``NodeNames`` and
    ``Nodes.metadata`` are parsed (orjson); ``Nodes.items`` stay the request's bytes, one per node."""
    if not is_utf8(body):
        raise _Slow
    try:
        raw_pod, raw_names, raw_nodes = split_args(body)
    except SplitError:  # keys in another casing, or something to refuse: member by member
        raw_pod, raw_names, raw_nodes = _split_any_case(body)
    pod, names = _loads(raw_pod), _loads(raw_names)
    if pod is not None and type(pod) is not dict:
        raise _Slow
    if names is not None and (type(names) is not list or not set(map(type, names)) <= _STR):
        raise _Slow
    node_list = None
    if raw_nodes is not None:
        meta, items = _loads(raw_nodes[0]), raw_nodes[1]
        items = RawItems() if items is None else as_items(items)
        if (meta is not None and type(meta) is not dict) or items is None:
            raise _Slow
        node_list = NodeList.model_construct(metadata=meta, items=items)
    return ExtenderArgs.model_construct(Pod=pod, Nodes=node_list, NodeNames=names)


def _split_any_case(body: bytes) -> Split:
    """``split_args`` for any key casing (exact case wins, unknown keys ignored); ``_Slow`` on bad shapes."""
    try:
        fields = _normalise(split_object(body), _ARGS_KEYS)
        nodes = fields.get("Nodes")
        if nodes is None or bytes(nodes) == b"null":
            return fields.get("Pod"), fields.get("NodeNames"), None
        parts = _normalise(split_object(nodes), _LIST_KEYS)
        items = parts.get("items")
        return fields.get("Pod"), fields.get("NodeNames"), \
            (parts.get("metadata"), None if items is None else split_list(items))
    except SplitError:
        raise _Slow from None


def _loads(raw) -> Any:
    """A small member parsed by orjson (None when absent); ``_Slow`` when orjson refuses it."""
    if raw is None:
        return None
    try:
        return orjson.loads(bytes(raw))
    except orjson.JSONDecodeError:
        raise _Slow from None


def answer(rt: Runtime, verb: str, args: ExtenderArgs, *, start: float | None = None) -> tuple[str, int, bytes]:
    """(outcome, status, body) of one filter or prioritize, counted (``extender.verbs.answer``; latency from
    ``start``, a ``perf_counter`` reading, or from now)."""
    run = rt.filter if verb == "filter" else rt.prioritize
    return answer_verb(rt, verb, lambda: run(args), start=time.perf_counter() if start is None else start)


class FastVerbs:
    """ASGI middleware answering ``POST {prefix}/filter`` and ``{prefix}/prioritize`` (module docstring)."""

    def __init__(self, app, prefix: str) -> None:
        self.app = app
        self.verbs = {f"{prefix}/filter": "filter", f"{prefix}/prioritize": "prioritize"}

    async def __call__(self, scope, receive, send) -> None:
        verb = self.verbs.get(scope.get("path", "")) if scope["type"] == "http" else None
        rt = getattr(scope["app"].state, "runtime", None) if verb and scope.get("method") == "POST" else None
        if rt is None:
            return await self.app(scope, receive, send)
        start = time.perf_counter()
        chunks = []
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return None
            chunks.append(msg.get("body", b""))
            if not msg.get("more_body"):
                break
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        try:
            args = parse_args(body)
            if args.Nodes is not None:  # nodes not seen before are read now, before the answer has effects
                rt.node_infos.preload(args.Nodes.items)
        except (_Slow, NotParsed):
            return await self.app(scope, replay_body(body, receive), send)
        except RecursionError as exc:  # msgspec's depth limit: bad input, answered as the pydantic path's 400s
            status, payload = 400, error_body(too_deep(exc))
            count(rt, verb, "bad_request", start=start)
        else:
            _, status, payload = answer(rt, verb, args, start=start)
        await send({"type": "http.response.start", "status": status,
                    "headers": [*_HEADERS, (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": bytes(payload)})
        return None


def replay_body(body: bytes, receive):
    """An ASGI ``receive`` that hands the app the already-read ``body`` once, then defers to ``receive``."""
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
