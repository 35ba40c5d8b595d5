"""The taint baseline's Kubernetes side (setting ``mode=taint``): the degraded taint, adding it to or removing it
from a node's taints, and which nodes carry it. Pure.

Why apart from the decision: which nodes to taint and when to untaint is ``policy.migrate.taint.decide_taints``,
which the simulator's taint arm decides by too; the controller applies its intents through ``migration.kube``
(the only module that talks to the API) with these helpers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

TAINT_KEY = "drsched.io/degraded"
TAINT_EFFECT = "NoSchedule"


def with_taint(taints: Sequence[Mapping], *, on: bool) -> list[dict]:
    """A node's ``spec.taints`` with the degraded taint added (once) or removed; every other taint kept."""
    kept = [dict(t) for t in taints if t.get("key") != TAINT_KEY]
    return [*kept, {"key": TAINT_KEY, "value": "true", "effect": TAINT_EFFECT}] if on else kept


def tainted_nodes(nodes: Sequence[Mapping]) -> set[str]:
    """Names of the nodes that carry the degraded taint."""
    return {str((n.get("metadata") or {}).get("name")) for n in nodes
            if any(t.get("key") == TAINT_KEY for t in (n.get("spec") or {}).get("taints") or [])}
