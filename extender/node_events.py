"""Node watch events decoded to the fields the extender reads, and heartbeats told apart from changes.

Why it exists: KWOK (and every kubelet) rewrites each node's status every 20-45 s only to move
``status.conditions[*].lastHeartbeatTime``; at 5,000 nodes that is ~150 node events a second that change
nothing drsched holds. Decoding each 3.8 KiB event whole (managedFields is half of it) cost ~85 us with
orjson, and reading it into a ``NodeInfo`` and the pod index another ~17 us, every time (issue #26).

* ``decode_node_event``: msgspec decodes the line into ``Node`` (below), building only the members
  ``kube.objects.node_info`` and ``extender.pod_index`` read and skipping the rest without making objects
  (~15 us; ``extender.pruned_events``). Each member keeps the JSON value as it is (``Any``) except the
  conditions, which keep only ``CONDITION_KEYS``. A line msgspec refuses (a shape the schema does not allow,
  such as a condition that is not an object) is decoded whole by orjson as before, so the readers see what
  they always saw; an ERROR event's Status and a BOOKMARK are always decoded whole.
* ``NodeDigests``: per node, the bytes of what those readers read (``digest``), from the last ADDED or
  MODIFIED event applied (or the re-list); a MODIFIED event with the same digest is a heartbeat and need not
  be applied. ``digest`` reads the same members from a whole object as from a decoded one, so a re-list
  (whole objects) and the events after it compare alike.

The members read are named twice, as the schema and in ``digest``; ``tests/unit/extender/test_node_events.py``
mutates every leaf of a KWOK node and checks that a mutation either changes the digest or leaves ``node_info``
and the pod index exactly as they were, and that the decoded node reads as the whole one.

State: ``NodeDigests`` holds one bytes object per node (960 bytes for a KWOK node: ~5 MB at 5,000 nodes; a
128-bit hash of it would hold a tenth, at the price of exactness), used from the node watch thread only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

import orjson

from extender.pruned_events import pruned_decoder

CONDITION_KEYS = ("type", "status", "reason", "message", "lastTransitionTime")
"""The members of a node condition that are kept (``lastHeartbeatTime`` is what a heartbeat moves)."""

Condition = TypedDict("Condition", dict.fromkeys(CONDITION_KEYS, Any), total=False)  # noqa: UP013 -- built from the keys


class Metadata(TypedDict, total=False):
    name: Any
    resourceVersion: Any  # noqa: N815 -- the wire's key; the watch resumes from it
    labels: Any
    annotations: Any


class Status(TypedDict, total=False):
    allocatable: Any
    capacity: Any
    addresses: Any
    conditions: list[Condition]


class Node(TypedDict, total=False):
    """A v1.Node as the extender reads it (``kube.objects.node_info``, ``extender.pod_index``)."""

    metadata: Metadata
    spec: Any
    status: Status


decode_node_event = pruned_decoder(Node)
"""One node watch line as ``{"type", "object"}`` with the object pruned to ``Node`` (``extender.pruned_events``)."""


def _conditions(status: Mapping) -> list:
    conds = status.get("conditions")
    if not isinstance(conds, list):
        return conds
    return [[c.get(k) for k in CONDITION_KEYS] if type(c) is dict else c for c in conds]


def digest(node: Mapping) -> bytes | None:
    """The bytes of every member of ``node`` the extender reads but its name; None where they do not encode
    (then the node always counts as changed)."""
    meta = node.get("metadata")
    meta = meta if type(meta) is dict else {}
    status = node.get("status")
    status = status if type(status) is dict else {}
    try:
        return orjson.dumps((meta.get("labels"), meta.get("annotations"), node.get("spec"),
                             status.get("allocatable"), status.get("capacity"), status.get("addresses"),
                             _conditions(status)))
    except (orjson.JSONEncodeError, TypeError):
        return None


class NodeDigests:
    """The digest of each node as last applied; ``changes`` says whether an event must be applied."""

    def __init__(self) -> None:
        self._by_name: dict[str, bytes | None] = {}

    def replace(self, nodes: list[Mapping]) -> None:
        """After a re-list: exactly these nodes, as listed."""
        self._by_name = {_name(n): digest(n) for n in nodes}

    def changes(self, event_type: str, node: Mapping) -> bool:
        """Whether the event changes what the extender holds; records the node as it now is. Only a MODIFIED
        event whose digest equals the recorded one changes nothing."""
        name = _name(node)
        if event_type == "DELETED":
            self._by_name.pop(name, None)
            return True
        if event_type not in ("ADDED", "MODIFIED"):
            return True  # BOOKMARK and others: the appliers ignore them as before
        new = digest(node)
        old = self._by_name.get(name)
        self._by_name[name] = new
        return not (event_type == "MODIFIED" and new is not None and new == old)


def _name(node: Mapping) -> str:
    meta = node.get("metadata")
    return str((meta.get("name") if type(meta) is dict else None) or "")
