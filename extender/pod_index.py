"""What the usage providers and the profile learner need from pod and node objects, kept from the one watch.

``PodIndex`` is fed the raw v1.Pod / v1.Node JSON the extender's watch already receives
(``extender.kube_index.IndexingWatcher``) -- no second watch -- and keeps three small maps:

* pod UID -> workload key (``workload_of``, the profile store's rule), for learning from the agents'
  per-pod readings, which are keyed by UID;
* node -> agent URL, for the drsched-monitor pods (equality label ``selector``, optional ``namespace``,
  phase Running, not being deleted, with a pod IP; hostNetwork makes that the node IP): ``scheme://IP:port``.
  With two agents on a node (a rolling update) a Ready one wins, then the lexically first UID;
* node address (InternalIP, ExternalIP, Hostname) -> node name, for mapping Prometheus instances;
* node -> why its Ready condition is not True (``not_ready``): a node whose kubelet died keeps its agent
  running and answering, but nothing on it is looked after any more, so the usage providers stop trusting it.

Writers are the watch threads, readers the event loop: one lock, readers get copies.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping

from kube.objects import child_map, pod_key, workload_key
from kube.selectors import matches


class PodIndex:
    def __init__(self, *, selector: Mapping[str, str], port: int, namespace: str | None = None,
                 scheme: str = "http", workload_of: Callable[[Mapping], str | None] = workload_key) -> None:
        self.selector, self.port, self.namespace, self.scheme = dict(selector), port, namespace, scheme
        self.workload_of = workload_of
        self._lock = threading.Lock()
        self._workloads: dict[str, str] = {}
        self._agents: dict[str, tuple[str, str, bool]] = {}     # agent pod uid -> (node, url, ready)
        self._addresses: dict[str, dict[str, str]] = {}         # node -> {address: node}
        self._not_ready: dict[str, str] = {}                    # node -> its Ready condition, in words

    # -- pods ----------------------------------------------------------------------------------------
    def _agent(self, pod: Mapping) -> tuple[str, str, bool] | None:
        meta, spec, status = child_map(pod, "metadata"), child_map(pod, "spec"), child_map(pod, "status")
        labels = child_map(meta, "labels")
        if not matches(labels, self.selector):
            return None
        if self.namespace and meta.get("namespace") != self.namespace:
            return None
        node, ip = spec.get("nodeName"), status.get("podIP") or status.get("hostIP")
        if not node or not ip or status.get("phase") != "Running" or meta.get("deletionTimestamp"):
            return None
        host = f"[{ip}]" if ":" in str(ip) else str(ip)
        ready = any(isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True"
                    for c in status.get("conditions") or [])
        return str(node), f"{self.scheme}://{host}:{self.port}", ready

    def _put_pod(self, pod: Mapping) -> None:
        ns, name, uid = pod_key(pod)
        uid = uid or f"{ns}/{name}"
        key = self.workload_of(pod)
        if key is None:
            self._workloads.pop(uid, None)
        else:
            self._workloads[uid] = key
        agent = self._agent(pod)
        if agent is None:
            self._agents.pop(uid, None)
        else:
            self._agents[uid] = agent

    def apply_pod(self, event_type: str, pod: Mapping) -> None:
        with self._lock:
            if event_type == "DELETED":
                ns, name, uid = pod_key(pod)
                uid = uid or f"{ns}/{name}"
                self._workloads.pop(uid, None)
                self._agents.pop(uid, None)
            elif event_type in ("ADDED", "MODIFIED"):
                self._put_pod(pod)

    def replace_pods(self, pods: Iterable[Mapping]) -> None:
        with self._lock:
            self._workloads.clear()
            self._agents.clear()
            for pod in pods:
                self._put_pod(pod)

    def workload(self, uid: str) -> str | None:
        with self._lock:
            return self._workloads.get(uid)

    def agents(self) -> dict[str, str]:
        with self._lock:
            rows = sorted(self._agents.items())
        out: dict[str, tuple[bool, str]] = {}
        for _, (node, url, ready) in rows:
            if node not in out or (ready and not out[node][0]):
                out[node] = (ready, url)
        return {node: url for node, (_, url) in out.items()}

    # -- nodes ---------------------------------------------------------------------------------------
    def _put_node(self, node: Mapping) -> None:
        name = str(child_map(node, "metadata").get("name") or "")
        if not name:
            return
        addrs = {}
        for a in child_map(node, "status").get("addresses") or []:
            if isinstance(a, Mapping) and a.get("type") in ("InternalIP", "ExternalIP", "Hostname") \
                    and a.get("address"):
                addrs[str(a["address"])] = name
        self._addresses[name] = addrs
        conditions = [c for c in child_map(node, "status").get("conditions") or [] if isinstance(c, Mapping)]
        ready = next((c for c in conditions if c.get("type") == "Ready"), None)
        if ready is not None and ready.get("status") != "True":  # no condition at all: a KWOK or fresh node
            self._not_ready[name] = (f"Ready={ready.get('status')} since {ready.get('lastTransitionTime')} "
                                     f"({ready.get('reason') or 'no reason'})")
        else:
            self._not_ready.pop(name, None)

    def apply_node(self, event_type: str, node: Mapping) -> None:
        with self._lock:
            if event_type == "DELETED":
                name = str(child_map(node, "metadata").get("name") or "")
                self._addresses.pop(name, None)
                self._not_ready.pop(name, None)
            elif event_type in ("ADDED", "MODIFIED"):
                self._put_node(node)

    def replace_nodes(self, nodes: Iterable[Mapping]) -> None:
        with self._lock:
            self._addresses.clear()
            self._not_ready.clear()
            for node in nodes:
                self._put_node(node)

    def addresses(self) -> dict[str, str]:
        with self._lock:
            return {addr: node for per in self._addresses.values() for addr, node in per.items()}

    def not_ready(self) -> dict[str, str]:
        """Nodes whose Ready condition is not True -> that condition in words."""
        with self._lock:
            return dict(self._not_ready)
