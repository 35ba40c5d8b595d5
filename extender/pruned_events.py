"""Watch event lines decoded into a schema of the members the extender reads, the rest skipped unbuilt.

Why it exists: the extender's watches receive every node and pod object whole -- managedFields, images, volumes,
container statuses -- and read a few dozen members of each. Building the rest costs the watch thread CPU (and the
garbage collector the objects), on the GIL the requests wait for (issue #26). ``pruned_decoder(schema)`` gives a
decoder of one event line: msgspec decodes ``{"type", "object"}`` with the object as the ``TypedDict`` ``schema``
(each member either ``Any``, kept as the JSON value it is, or a nested schema), skipping every member the schema does
not name without building it. The schemas are ``extender.node_events.Node`` and ``extender.pod_events.Pod``.

What is decoded whole by orjson, as before (so the readers see what they always saw):

* every event but ADDED, MODIFIED and DELETED: an ERROR's Status, a BOOKMARK;
* a line msgspec refuses: a member that is not of the schema's shape (a container that is not an object, a
  ``spec`` that is ``null``), or not JSON at all (then orjson refuses it too, and the caller skips the line).

Departures, neither of which kube-apiserver can produce (its integers are int64; Go writes every duplicate key
once): an integer beyond 64 bits decodes as an ``int`` here where orjson gives a ``float``; a refused member skipped
unread (an invalid string inside managedFields) does not refuse the line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

import msgspec
import orjson

PRUNED_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED"})
"""The event types whose object is decoded to the schema; any other is decoded whole."""


def pruned_decoder(schema: type) -> Callable[[str | bytes], Any]:
    """A decoder of one watch line: ``{"type", "object"}`` with the object as ``schema`` (a ``TypedDict``, decoded
    as a plain dict), or the line decoded whole by orjson (module doc; ``orjson.JSONDecodeError`` if orjson
    refuses it too)."""
    event = TypedDict("Event", {"type": Any, "object": schema}, total=False)  # noqa: UP013 -- the schema is a parameter
    decoder = msgspec.json.Decoder(event)

    def decode(line: str | bytes) -> Any:
        try:
            out = decoder.decode(line)
        except msgspec.MsgspecError:
            return orjson.loads(line)
        kind = out.get("type")
        if type(kind) is str and kind in PRUNED_TYPES and "object" in out:
            return out
        return orjson.loads(line)

    return decode
