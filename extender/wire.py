"""The scheduler-extender wire types (``k8s.io/kube-scheduler/extender/v1``), named by direction.

In: ``ExtenderArgs`` (filter, prioritize), ``ExtenderBindingArgs`` (bind), ``ExtenderPreemptionArgs``.
Out: ``ExtenderFilterResult``, ``HostPriority`` (a list of them), ``ExtenderBindingResult``,
``ExtenderPreemptionResult``.

The Go types have no JSON tags, so kube-scheduler writes the Go field names (``Pod``, ``NodeNames``,
``FailedNodes``) and decodes replies case-insensitively. We write exactly those PascalCase keys and accept
any casing on input (``nodenames``, ``nodeNames``): ``_normalise`` maps keys onto field names before
validation, preferring an exact match when both spellings are present. Unknown keys are ignored, as Go
does. Embedded ``Pod`` / ``Node`` objects stay plain dicts of Kubernetes JSON (``kube.objects`` reads them).
``null`` is written for the unused mode (``Nodes`` when names came and vice versa), as Go encodes a nil
pointer.

The prioritize reply is not built as models: 5,000 ``HostPriority`` dicts through a serializer cost more
than the scoring, so ``HostPriorities`` writes the ``[{"Host":...,"Score":...},...]`` bytes (a ``RawJSON``)
from each node's ``{"Host":"<name>","Score":`` prefix, JSON-escaped once per node and kept while the
cache's node set stays, and the last candidate list's prefixes kept while the list stays (kube-scheduler
sends the same list again and again while the cluster is quiet).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from kube.cache import CacheView


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore")

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        canon = {name.lower(): name for name in cls.model_fields}
        out: dict[str, Any] = {}
        for key, value in data.items():
            name = canon.get(key.lower()) if isinstance(key, str) else None
            if name is None:
                continue
            if name in out and key != name:
                continue  # an exact-case key already won
            out[name] = value
        return out


class NodeList(_Wire):
    """A v1.NodeList as kube-scheduler sends it: ``{"metadata": {}, "items": [...v1.Node...]}``."""

    metadata: dict[str, Any] | None = None
    items: list[dict[str, Any]] = Field(default_factory=list)


class ExtenderArgs(_Wire):
    """Filter / prioritize request. ``Nodes`` when nodeCacheCapable is false, ``NodeNames`` when true."""

    Pod: dict[str, Any] | None = None
    Nodes: NodeList | None = None
    NodeNames: list[str] | None = None


class ExtenderFilterResult(_Wire):
    """Filter reply, in the request's mode; FailedAndUnresolvableNodes take precedence (no preemption)."""

    Nodes: NodeList | None = None
    NodeNames: list[str] | None = None
    FailedNodes: dict[str, str] | None = None
    FailedAndUnresolvableNodes: dict[str, str] | None = None
    Error: str = ""


class HostPriority(_Wire):
    """One node's prioritize score, an integer 0..10 (MaxExtenderPriority)."""

    Host: str
    Score: int = Field(ge=0, le=10)


class ExtenderBindingArgs(_Wire):
    """Bind request, built by kube-scheduler from the Binding it would have POSTed."""

    PodName: str
    PodNamespace: str
    PodUID: str = ""
    Node: str


class ExtenderBindingResult(_Wire):
    Error: str = ""


class MetaPod(_Wire):
    UID: str


class MetaVictims(_Wire):
    Pods: list[MetaPod] | None = None
    NumPDBViolations: int = 0


class Victims(_Wire):
    Pods: list[dict[str, Any]] | None = None
    NumPDBViolations: int = 0


class ExtenderPreemptionArgs(_Wire):
    """Preempt request: full victims (nodeCacheCapable false) or victim UIDs (true)."""

    Pod: dict[str, Any] | None = None
    NodeNameToVictims: dict[str, Victims | None] | None = None
    NodeNameToMetaVictims: dict[str, MetaVictims | None] | None = None


class ExtenderPreemptionResult(_Wire):
    """Preempt reply: always UIDs only."""

    NodeNameToMetaVictims: dict[str, MetaVictims | None] | None = None


class ErrorBody(BaseModel):
    """Body of a 400/404/413 reply: what was wrong with the request."""

    Error: str


class RawJSON(bytes):
    """An already encoded JSON reply (sent as is)."""


_SCORE_SUFFIX = [f"{s}}}" for s in range(11)]  # MaxExtenderPriority 10
_SCORE_SUFFIX_COMMA = [f"{s}}}," for s in range(11)]


class HostPriorities:
    """The prioritize reply as bytes, with the per-node prefixes memoised (module docstring).

    Keyed on the cache: prefixes are kept for the view's nodes only (a request naming junk cannot grow
    this) and dropped when the node set changes (a new ``index`` object); the last list's are kept while
    ``CacheView.lookup`` returns the same rows array for it (it does for an equal list on that node set)."""

    __slots__ = ("_known", "_last")

    def __init__(self) -> None:
        self._known: tuple[dict[str, int], dict[str, str]] | None = None  # (the view's index, node -> prefix)
        self._last: tuple[np.ndarray, list[str]] | None = None  # (rows of the last list, its prefixes)

    def reply(self, view: CacheView, names: Sequence[str], scores: Sequence[int], *,
              rows: np.ndarray | None = None) -> RawJSON:
        """``[{"Host": names[i], "Score": scores[i]}, ...]`` (scores 0..10, in ``names`` order); ``rows``: what
        ``view.lookup(names)`` gave the caller, if it asked (the same array; not looked up twice)."""
        prefixes = self.prefixes(view, names, rows=rows)
        if not prefixes:
            return RawJSON(b"[]")
        # prefix, score + "}," alternating, the last without its comma, joined once: the same bytes as joining
        # prefix + score pairs with ",", without building a string per node (a quarter of the time at 500 nodes)
        parts: list[str] = [""] * (2 * len(prefixes))
        parts[0::2] = prefixes
        comma = _SCORE_SUFFIX_COMMA
        parts[1::2] = map(comma.__getitem__, scores)  # one C call per node, no comprehension frame
        parts[-1] = _SCORE_SUFFIX[scores[-1]]
        return RawJSON(("[" + "".join(parts) + "]").encode())

    def prefixes(self, view: CacheView, names: Sequence[str], *, rows: np.ndarray | None = None) -> list[str]:
        """``{"Host":"<name>","Score":`` per name, JSON-escaped (``rows``: as ``reply``)."""
        if rows is None:
            rows = view.lookup(names)  # memoised by the cache: the same array for the same list and node set
        last = self._last  # one read: another thread may replace it, never change it
        if last is not None and last[0] is rows:
            return last[1]
        index = view.index
        known_of = self._known
        if known_of is None or known_of[0] is not index:
            known_of = self._known = (index, {})
        known = known_of[1]
        out = []
        for n in names:
            p = known.get(n)
            if p is None:
                p = f'{{"Host":{json.dumps(n)},"Score":'
                if n in index:
                    known[n] = p
            out.append(p)
        self._last = (rows, out)
        return out
