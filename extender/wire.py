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
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


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
