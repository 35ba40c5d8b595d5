"""The extender's only module that talks to the Kubernetes API: list + watch into the cache, and Binding.

``KubeWatcher`` runs one thread per resource (nodes, pods): list (raw JSON, ``_preload_content=False``),
replace the cache's set, then watch from the list's resourceVersion; a 410 Gone (or any broken stream)
means re-list. Whether each watch is connected, since when and why not, is ``health``
(``extender.watch_health``: /readyz and the metrics read it). ``stop()`` ends both loops within
``watch_timeout_s``. Event handling (``apply_node_event``, ``apply_pod_event``) is plain functions over
dicts so unit tests feed them without an apiserver. Node and pod events are decoded to the members the extender
reads (``extender.node_events``, ``extender.pod_events``), and a node event that changes none of them (a
heartbeat) is not applied.

``KubeBinder`` POSTs the Binding with ``_preload_content=False`` (the generated client raises *after* a
successful bind otherwise: the apiserver answers a Status, the client expects a Binding). A 409 "already
assigned to node X" for X == our node is success: a retried bind after a timeout lands there.

The client itself and the Event sink are the shared ones (``kube.client``).
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from extender.errors import BindError
from extender.node_events import NodeDigests, decode_node_event
from extender.pod_events import decode_pod_event
from extender.profile_store import ProfileStore
from extender.settings import Settings
from extender.telemetry import Telemetry
from extender.watch_health import WatchHealth
from kube.cache import ClusterCache, PodRecord, record_for
from kube.client import make_api_client, status_message
from kube.errors import QuantityError
from kube.logs import kv
from kube.objects import node_info, pod_key, pod_requests
from kube.profiles import pod_view_for

log = logging.getLogger(__name__)


def _bound_at(pod: Mapping, observed: float) -> float:
    """When the pod was bound: its PodScheduled condition's transition time, else when we saw it."""
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == "PodScheduled" and cond.get("status") == "True":
            stamp = cond.get("lastTransitionTime")
            if isinstance(stamp, str):
                try:
                    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
                except ValueError:
                    break
    return observed


def pod_record(pod: Mapping, *, settings: Settings, store: ProfileStore | None, telemetry: Telemetry | None,
               now: float) -> PodRecord | None:
    """A watched v1.Pod as a cache record; None (and a log line) if its quantities do not parse."""
    ns, name, uid = pod_key(pod)
    try:
        requests = pod_requests(pod)
    except QuantityError as exc:
        log.warning("pod ignored: bad requests", extra=kv(pod=f"{ns}/{name}", error=str(exc)))
        return None
    view, problem = pod_view_for(pod, requests=requests, annotation_key=settings.profile_annotation, store=store)
    if problem is not None and telemetry is not None:
        telemetry.report("bad_profile_annotation", f"ignored {settings.profile_annotation}: {problem}",
                         pod=(ns, name, uid))
    bound = _bound_at(pod, now) if (pod.get("spec") or {}).get("nodeName") else 0.0
    return record_for(pod, view, bound_at=bound)


def apply_node_event(cache: ClusterCache, settings: Settings, event_type: str, node: Mapping) -> None:
    """ADDED / MODIFIED / DELETED of a v1.Node (dict); BOOKMARK and others are ignored."""
    name = ((node.get("metadata") or {}).get("name")) or ""
    if event_type == "DELETED":
        cache.delete_node(name)
        return
    if event_type not in ("ADDED", "MODIFIED"):
        return
    try:
        cache.upsert_node(_node_info(node, settings))
    except QuantityError as exc:
        log.warning("node ignored: bad allocatable", extra=kv(node=name, error=str(exc)))


def apply_pod_event(cache: ClusterCache, settings: Settings, event_type: str, pod: Mapping, *,
                    store: ProfileStore | None = None, telemetry: Telemetry | None = None,
                    now: float | None = None) -> None:
    """ADDED / MODIFIED / DELETED of a v1.Pod (dict); BOOKMARK and others are ignored."""
    if event_type == "DELETED":
        ns, name, uid = pod_key(pod)
        cache.delete_pod(uid or f"{ns}/{name}")
        return
    if event_type not in ("ADDED", "MODIFIED"):
        return
    rec = pod_record(pod, settings=settings, store=store, telemetry=telemetry, now=now or time.time())
    if rec is not None:
        cache.upsert_pod(rec)


def _node_info(node: Mapping, settings: Settings):
    return node_info(node, net_annotation=settings.net_annotation, disk_annotation=settings.disk_annotation,
                     default_net_mbps=settings.default_net_mbps, default_disk_mbps=settings.default_disk_mbps)


@functools.cache
def dict_watch_class(kind: str = "pods") -> type:
    """A kubernetes ``Watch`` whose events are plain dicts, each line decoded once, to the members the extender
    reads only (``extender.node_events.decode_node_event`` for ``kind`` "nodes", else
    ``extender.pod_events.decode_pod_event``; ERRORs, BOOKMARKs and odd shapes whole, with orjson).

    The client's own ``Watch`` decodes every event line with ``json.loads``, encodes the object again and
    decodes it a second time into a V1Pod / V1Node model; the cache only reads the dict, and in a
    scheduling burst every pod is 3-4 events on the cores kube-scheduler needs (0.18 ms -> 0.01 ms per
    event). Everything else the client's ``stream`` does (ERROR events as ``ApiException``, the
    ``resource_version`` to resume from, BOOKMARKs) sees the event shape it expects: ``type``,
    ``object`` and ``raw_object`` (the same dict). Built on first use: a static-cluster extender never
    imports the kubernetes client.
    """
    import orjson
    from kubernetes import watch

    decode = decode_node_event if kind == "nodes" else decode_pod_event

    class DictWatch(watch.Watch):
        def unmarshal_event(self, data, return_type):
            if not data or data.isspace():
                return None
            try:
                event = decode(data)
            except orjson.JSONDecodeError:
                return None  # as the client does: a line that is not JSON is skipped
            if not isinstance(event, dict):
                return None
            obj = event.get("object")
            event["raw_object"] = obj
            if event.get("type") != "ERROR" and isinstance(obj, dict):
                meta = obj.get("metadata")
                version = meta.get("resourceVersion") if isinstance(meta, dict) else None
                if version:
                    self.resource_version = version
            return event

    return DictWatch


def make_core_api(*, kubeconfig: Path | None):
    """A CoreV1Api from ``kubeconfig``, else in-cluster config, else ``~/.kube/config`` (``ConfigError``);
    its requests say ``drsched-extender/...``."""
    from kubernetes import client

    return client.CoreV1Api(make_api_client(kubeconfig=kubeconfig, component="extender"))


def _short(exc: BaseException, limit: int = 200) -> str:
    """An exception as one short line (urllib3's retry errors nest the whole chain)."""
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


class KubeWatcher:
    """List + watch nodes and pods into the cache, in two stoppable threads."""

    def __init__(self, core, cache: ClusterCache, settings: Settings, *, store: ProfileStore | None,
                 telemetry: Telemetry, watch_timeout_s: int = 30, health: WatchHealth | None = None) -> None:
        self.core, self.cache, self.settings = core, cache, settings
        self.health = health if health is not None else WatchHealth()
        self.store, self.telemetry = store, telemetry
        self.watch_timeout_s = watch_timeout_s
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.synced = {"nodes": threading.Event(), "pods": threading.Event()}
        self.node_digests = NodeDigests()  # what each node was when last applied: heartbeats are skipped

    def _list(self, kind: str) -> tuple[list[dict], str]:
        fn = self.core.list_node if kind == "nodes" else self.core.list_pod_for_all_namespaces
        resp = fn(_preload_content=False, _request_timeout=60)
        body = json.loads(resp.data)
        return body.get("items") or [], (body.get("metadata") or {}).get("resourceVersion", "")

    def _apply(self, kind: str, event_type: str, obj: Mapping) -> None:
        """One watch event; a node's that changes nothing the extender reads (a heartbeat) only counts as
        heard (``extender.node_events``)."""
        if kind == "nodes" and not self.node_digests.changes(event_type, obj):
            self.cache.heard()
            return
        self._apply_event(kind, event_type, obj)

    def _apply_event(self, kind: str, event_type: str, obj: Mapping) -> None:
        if kind == "nodes":
            apply_node_event(self.cache, self.settings, event_type, obj)
        else:
            apply_pod_event(self.cache, self.settings, event_type, obj, store=self.store, telemetry=self.telemetry)

    def _relist(self, kind: str) -> str:
        items, rv = self._list(kind)
        if kind == "nodes":
            infos = []
            for n in items:
                try:
                    infos.append(_node_info(n, self.settings))
                except QuantityError as exc:
                    log.warning("node ignored: bad allocatable", extra=kv(error=str(exc)))
            self.cache.replace_nodes(infos)
            self.node_digests.replace(items)
        else:
            now = time.time()
            recs = [pod_record(p, settings=self.settings, store=self.store, telemetry=self.telemetry, now=now)
                    for p in items]
            self.cache.replace_pods(r for r in recs if r is not None)
        self.synced[kind].set()
        log.info("listed", extra=kv(kind=kind, items=len(items), resource_version=rv))
        return rv

    def _loop(self, kind: str) -> None:
        from kubernetes.client.exceptions import ApiException

        DictWatch = dict_watch_class(kind)  # noqa: N806 -- a class

        fn = self.core.list_node if kind == "nodes" else self.core.list_pod_for_all_namespaces
        rv, backoff = None, 1.0
        while not self._stop.is_set():
            try:
                if rv is None:
                    rv = self._relist(kind)
                    self.health.up(kind)
                w = DictWatch()  # events as dicts decoded once, not V1Pod models (see dict_watch_class)
                for ev in w.stream(fn, resource_version=rv, allow_watch_bookmarks=True,
                                   timeout_seconds=self.watch_timeout_s):
                    if self._stop.is_set():
                        w.stop()
                        break
                    obj = ev.get("raw_object") or {}
                    if ev.get("type") == "ERROR":
                        raise ApiException(status=obj.get("code", 500), reason=obj.get("message", ""))
                    self._apply(kind, ev.get("type", ""), obj)
                    rv = w.resource_version or rv
                backoff = 1.0
            except ApiException as exc:
                if exc.status == 410:
                    log.info("watch expired, re-listing", extra=kv(kind=kind))
                else:
                    log.warning("watch failed, re-listing", extra=kv(kind=kind, status=exc.status, error=exc.reason))
                    self.health.failed(kind, f"HTTP {exc.status}: {exc.reason}")
                    self._stop.wait(backoff)
                    backoff = min(backoff * 2, 30.0)
                rv = None
            except Exception as exc:  # connection reset, bad JSON: start over after a pause
                log.warning("watch broken, re-listing", extra=kv(kind=kind, error=repr(exc)))
                self.health.failed(kind, _short(exc))
                rv = None
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)

    def start(self) -> None:
        for kind in ("nodes", "pods"):
            t = threading.Thread(target=self._loop, args=(kind,), name=f"watch-{kind}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float = 2.0) -> None:
        """Signal the watch threads and wait at most ``timeout`` seconds for all of them together (a thread
        blocked in a long-poll read notices the stop at its next event or watch timeout; it is a daemon)."""
        self._stop.set()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))


class KubeBinder:
    """POST a Binding; idempotent (see the module docstring)."""

    def __init__(self, core, *, timeout_s: float) -> None:
        self.core, self.timeout_s = core, timeout_s

    def bind(self, *, namespace: str, name: str, uid: str, node: str) -> None:
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        body = client.V1Binding(
            metadata=client.V1ObjectMeta(name=name, namespace=namespace, uid=uid or None),
            target=client.V1ObjectReference(api_version="v1", kind="Node", name=node))
        last: Exception | None = None
        for attempt in (1, 2):
            try:
                resp = self.core.create_namespaced_binding(namespace, body, _preload_content=False,
                                                           _request_timeout=self.timeout_s)
                if resp.status in (200, 201):
                    return
                raise BindError(f"apiserver answered {resp.status}")
            except ApiException as exc:
                message = status_message(exc)
                if exc.status == 409 and f'already assigned to node "{node}"' in message:
                    return  # an earlier (timed-out) attempt bound it where we wanted
                raise BindError(f"binding {namespace}/{name} to {node}: {exc.status} {message}") from None
            except (HTTPError, TimeoutError, OSError) as exc:
                last = exc
                log.warning("bind attempt failed", extra=kv(pod=f"{namespace}/{name}", node=node, attempt=attempt,
                                                            error=repr(exc)))
        raise BindError(f"binding {namespace}/{name} to {node}: {last!r}")
