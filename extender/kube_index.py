"""The cluster watch, also feeding a ``PodIndex`` (agents, pod workloads, node addresses) from the same events.

``KubeWatcher`` (``extender.kube``, the one module that talks to the Kubernetes API) lists and watches
nodes and pods into the cluster cache; this subclass hands the same raw objects to the index too, so
the monitor provider and the profile learner need no watch of their own.
"""

from __future__ import annotations

from collections.abc import Mapping

from extender.kube import KubeWatcher
from extender.pod_index import PodIndex


class IndexingWatcher(KubeWatcher):
    def __init__(self, *args, index: PodIndex, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.index = index

    def _list(self, kind: str) -> tuple[list[dict], str]:
        items, rv = super()._list(kind)
        (self.index.replace_pods if kind == "pods" else self.index.replace_nodes)(items)
        return items, rv

    def _apply(self, kind: str, event_type: str, obj: Mapping) -> None:
        super()._apply(kind, event_type, obj)
        (self.index.apply_pod if kind == "pods" else self.index.apply_node)(event_type, obj)
