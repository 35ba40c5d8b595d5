"""Full Node objects (``nodeCacheCapable: false``) kept as the request's own bytes, never parsed whole.

Such a body carries every candidate's v1.Node (2 KiB each: 2 MiB at 1,000 nodes), and the extender reads
five fields of each: parsing it all into dicts, and serialising the passing ones back into the filter
reply, cost 10x the decision. msgspec splits the body into byte slices without building anything, in one
pass when the keys are kube-scheduler's (``split_args``), else member by member (``split_object``,
``split_list``); a node's slice is the key of ``NodeInfoMemo`` (equal bytes, equal
node), so a node seen before is not parsed at all, and the filter reply splices the passing nodes' slices
back unchanged (``filter_reply``).

Exactness: msgspec's grammar is strict JSON, like orjson's, but it skips what it does not build without
checking all orjson checks (invalid UTF-8, numbers beyond a double). So the caller checks the body's
UTF-8 (``is_utf8``) and every slice is read with orjson the first time it is seen (``NodeInfoMemo.preload``);
a slice orjson refuses raises ``NotParsed``, and the caller hands the body to the path that parses it
whole, which answers as it always did.
"""

from __future__ import annotations

import msgspec
import orjson

SplitError = msgspec.MsgspecError
"""Raised by the ``split_*`` functions on malformed JSON, another JSON type or (``split_args``) other keys."""


# Raw fields hold JSON null as the slice b"null"; None (the default) only means the key was absent.
class _NodeList(msgspec.Struct, forbid_unknown_fields=True):
    metadata: msgspec.Raw = None
    items: list[msgspec.Raw] = None  # null is refused, as the parsing path does


class _Args(msgspec.Struct, forbid_unknown_fields=True):
    Pod: msgspec.Raw = None
    Nodes: _NodeList | None = None
    NodeNames: msgspec.Raw = None


_ARGS = msgspec.json.Decoder(_Args)
_OBJECT = msgspec.json.Decoder(dict[str, msgspec.Raw])
_LIST = msgspec.json.Decoder(list[msgspec.Raw])
Split = tuple[msgspec.Raw | None, msgspec.Raw | None, tuple[msgspec.Raw | None, list[msgspec.Raw] | None] | None]
"""(Pod, NodeNames, Nodes as (metadata, items) or None): slices; None where absent or null (Nodes)."""


class NotParsed(Exception):
    """A node's bytes that orjson does not read: the request must take the path that parses it whole."""


class RawItems(list):
    """``Nodes.items`` as the request's bytes, one ``bytes`` per node, in request order."""


def is_utf8(body: bytes) -> bool:
    """What orjson checks on every string and msgspec's skipping does not."""
    if body.isascii():
        return True
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def split_args(body: bytes) -> Split:
    """``ExtenderArgs`` split in one pass, when its keys are exactly the ones kube-scheduler writes (``Pod``,
    ``Nodes`` {``metadata``, ``items``}, ``NodeNames``); any other key, or ``items`` that is not a list,
    raises ``SplitError`` and the caller splits member by member."""
    args = _ARGS.decode(body)
    nodes = None if args.Nodes is None else (args.Nodes.metadata, args.Nodes.items)
    return args.Pod, args.NodeNames, nodes


def split_object(raw: bytes | msgspec.Raw) -> dict[str, msgspec.Raw]:
    """A JSON object's members, each value as its unparsed slice (duplicate keys: the last wins)."""
    return _OBJECT.decode(raw)


def split_list(raw: bytes | msgspec.Raw) -> list[msgspec.Raw]:
    """A JSON array's elements as unparsed slices."""
    return _LIST.decode(raw)


def as_items(raws: list[msgspec.Raw]) -> RawItems | None:
    """``RawItems`` when every element is a JSON object, else None (the shape check of the parsed path)."""
    items = RawItems(bytes(r) for r in raws)
    if not all(b[:1] == b"{" for b in items):
        return None
    return items


def loads(raw: bytes) -> dict:
    """One node's object, read by orjson (``NotParsed`` when orjson refuses it)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise NotParsed from None


def filter_reply(items: list[bytes], failed: dict[str, str], unresolvable: dict[str, str]) -> bytes:
    """The Nodes-mode ``ExtenderFilterResult`` with the passing nodes' bytes spliced in unchanged."""
    return b"".join((b'{"Nodes":{"metadata":{},"items":[', b",".join(items), b']},"NodeNames":null,"FailedNodes":',
                     orjson.dumps(failed), b',"FailedAndUnresolvableNodes":', orjson.dumps(unresolvable),
                     b',"Error":""}'))
