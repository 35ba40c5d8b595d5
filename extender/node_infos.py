"""``node_info`` of the full Node objects kube-scheduler sends, remembered by their exact JSON.

With ``nodeCacheCapable: false`` every filter and prioritize carries every candidate's v1.Node again,
mostly unchanged since the last request. Reading one (allocatable quantities, bandwidth annotations,
the Ready condition) costs ~40 us of Python; its orjson encoding, compared byte for byte, a tenth of
that. Equal bytes mean an equal object, and ``node_info`` is a pure function of the object and the
settings this memo is built with, so a hit is exactly what reading it again would give. The fast path
hands the request's own bytes of each node (``extender.raw_nodes``): they are the key as they are.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from extender.raw_nodes import loads
from kube.errors import QuantityError
from kube.objects import NodeInfo, node_info

MAX_ENTRIES = 50_000
"""Entries kept before the memo starts over (a few MiB; far more nodes than one cluster has)."""


class NodeInfoMemo:
    """``read(item)`` = ``node_info(item, **options)``, remembered by the item's JSON bytes."""

    def __init__(self, **options) -> None:
        self.options = options
        self._seen: dict[bytes, NodeInfo] = {}

    def read(self, item: Mapping) -> NodeInfo:
        """Raises ``QuantityError`` as ``node_info`` does (failures are not remembered)."""
        try:
            key = orjson.dumps(item)
        except TypeError:  # not JSON-encodable (never from the wire): no memo
            return node_info(item, **self.options)
        return self._read(key, item)

    def read_raw(self, raw: bytes) -> NodeInfo:
        """``read`` of a node given as its JSON bytes; ``NotParsed`` when orjson refuses them."""
        hit = self._seen.get(raw)
        return hit if hit is not None else self._read(raw, loads(raw))

    def preload(self, raws: list[bytes]) -> None:
        """Read every node not seen yet, before the request is answered, so that bytes orjson refuses
        (``NotParsed``) send the request to the parsing path before any of it has had effects. A node
        whose quantities do not parse is left out: reading it again raises the ``QuantityError``."""
        for raw in raws:
            if raw not in self._seen:
                try:
                    self._read(raw, loads(raw))
                except QuantityError:
                    pass

    def _read(self, key: bytes, item: Mapping) -> NodeInfo:
        hit = self._seen.get(key)
        if hit is None:
            hit = node_info(item, **self.options)
            if len(self._seen) >= MAX_ENTRIES:
                self._seen.clear()
            self._seen[key] = hit
        return hit
