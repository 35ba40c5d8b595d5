"""The cluster watch, also feeding a ``PodIndex`` (agents, pod workloads, node addresses) from the same events.

``KubeWatcher`` (``extender.kube``, the one module that talks to the Kubernetes API) lists and watches
nodes and pods into the cluster cache; this subclass hands the same raw objects to the index too, so
the monitor provider and the profile learner need no watch of their own. ``observer`` (the extender's
``Recording``: shadow mode and decision outcomes) sees each pod event *before* the cache applies it, with
the cache's record of the pod until then, so a binding is shadowed on the snapshot it was decided on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from extender.kube import KubeWatcher
from extender.pod_index import PodIndex
from kube.cache import PodRecord
from kube.objects import pod_key

PodObserver = Callable[[str, Mapping, PodRecord | None], None]


class IndexingWatcher(KubeWatcher):
    def __init__(self, *args, index: PodIndex, observer: PodObserver | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.index = index
        self.observer = observer

    def _list(self, kind: str) -> tuple[list[dict], str]:
        items, rv = super()._list(kind)
        (self.index.replace_pods if kind == "pods" else self.index.replace_nodes)(items)
        return items, rv

    def _apply_event(self, kind: str, event_type: str, obj: Mapping) -> None:
        if kind == "pods" and self.observer is not None:
            ns, name, _ = pod_key(obj)
            self.observer(event_type, obj, self.cache.pod(ns, name))
        super()._apply_event(kind, event_type, obj)
        (self.index.apply_pod if kind == "pods" else self.index.apply_node)(event_type, obj)
