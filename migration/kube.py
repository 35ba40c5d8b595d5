"""The only module of ``migration/`` that talks to the Kubernetes API.

Everything goes over raw JSON (``_preload_content=False``): the controller reads and writes dicts, and the
generated models' deserialisation (which raises on some valid answers, e.g. a Status where it expects an
object) never runs. HTTP statuses become the typed errors of ``kube.errors`` in the shared layer's ONE
place (``kube.client.api_errors``): 404 ``NotFound``, 409 ``Conflict``, 429 / 5xx / connection errors
``TemporaryError``, the rest ``PermanentError``.

What it does:
* nodes and pods: list (one fetch per cycle), read one pod, create, delete (uid precondition), evict
  (policy/v1 Eviction, so PodDisruptionBudgets apply; a 429 means "not now" and returns False);
* window Leases (``coordination.k8s.io/v1``): the per-job record store while a migration is in flight;
* node taints (the ``mode=taint`` baseline): replace a node's ``spec.taints``, guarded by its resourceVersion;
* Events through the shared ``kube.client.KubeEventSink`` (posted from a small thread pool);
* leader election through the client library's ``kubernetes.leaderelection`` with a ``LeaseLock``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kube.client import KubeEventSink, api_errors
from kube.errors import ConfigError, Conflict, NotFound, TemporaryError

log = logging.getLogger(__name__)

WINDOW_LABEL = "drsched.io/migration-window"
TEMPLATE_ANNOTATION = "drsched.io/pod-template"
_TIMEOUT = 30


def _json(resp) -> dict:
    return json.loads(resp.data)


class Kube:
    """Typed, keyword-only calls over one ApiClient (module docstring)."""

    def __init__(self, api_client) -> None:
        from kubernetes import client

        self.api_client = api_client
        self.core = client.CoreV1Api(api_client)
        self.coord = client.CoordinationV1Api(api_client)

    # -- reads -----------------------------------------------------------------------------------
    def list_nodes(self) -> list[dict]:
        with api_errors("list nodes"):
            return _json(self.core.list_node(_preload_content=False, _request_timeout=_TIMEOUT)).get("items") or []

    def list_pods(self, *, namespace: str | None, label_selector: str | None = None) -> list[dict]:
        with api_errors("list pods"):
            kw = {"label_selector": label_selector} if label_selector else {}
            if namespace:
                resp = self.core.list_namespaced_pod(namespace, _preload_content=False, _request_timeout=_TIMEOUT, **kw)
            else:
                resp = self.core.list_pod_for_all_namespaces(_preload_content=False, _request_timeout=_TIMEOUT, **kw)
            return _json(resp).get("items") or []

    def read_pod(self, *, namespace: str, name: str) -> dict | None:
        try:
            with api_errors(f"read pod {namespace}/{name}"):
                return _json(self.core.read_namespaced_pod(name, namespace, _preload_content=False,
                                                           _request_timeout=_TIMEOUT))
        except NotFound:
            return None

    # -- pod writes ------------------------------------------------------------------------------
    def create_pod(self, *, namespace: str, body: Mapping[str, Any]) -> dict:
        with api_errors(f"create pod {namespace}/{body['metadata']['name']}"):
            return _json(self.core.create_namespaced_pod(namespace, dict(body), _preload_content=False,
                                                         _request_timeout=_TIMEOUT))

    def delete_pod(self, *, namespace: str, name: str, uid: str, grace_period_s: int | None = None) -> None:
        """Delete if it is still the pod ``uid`` (a precondition); gone already is fine."""
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": uid}}
        if grace_period_s is not None:
            body["gracePeriodSeconds"] = grace_period_s
        try:
            with api_errors(f"delete pod {namespace}/{name}"):
                self.core.delete_namespaced_pod(name, namespace, body=body, _preload_content=False,
                                                _request_timeout=_TIMEOUT)
        except (NotFound, Conflict):  # gone, or a different pod by now: nothing of ours to delete
            return

    def evict_pod(self, *, namespace: str, name: str, uid: str, grace_period_s: int | None) -> bool:
        """POST the Eviction; True when accepted (or already gone), False when a PDB refuses it for now."""
        delete_options: dict[str, Any] = {"preconditions": {"uid": uid}}
        if grace_period_s is not None:
            delete_options["gracePeriodSeconds"] = grace_period_s
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace},
                "deleteOptions": delete_options}
        try:
            with api_errors(f"evict pod {namespace}/{name}"):
                self.core.create_namespaced_pod_eviction(name, namespace, body, _preload_content=False,
                                                         _request_timeout=_TIMEOUT)
            return True
        except NotFound:
            return True
        except TemporaryError as exc:
            if exc.status == 429:
                return False
            raise

    # -- node taints (mode taint) ----------------------------------------------------------------
    def set_node_taints(self, *, node: Mapping[str, Any], taints: list[dict]) -> None:
        """Replace ``spec.taints`` of ``node`` (as listed this cycle). A merge patch replaces the whole list, so
        it carries the listed resourceVersion: a node changed since (another taint, a status update) is a
        ``Conflict``, retried next cycle on a fresh list."""
        meta = node["metadata"]
        body = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "spec": {"taints": taints or None}}
        with api_errors(f"taint node {meta['name']}"):
            self.core.patch_node(meta["name"], body, _content_type="application/merge-patch+json",
                                 _preload_content=False, _request_timeout=_TIMEOUT)

    # -- window Leases ---------------------------------------------------------------------------
    def list_windows(self, *, namespace: str | None) -> list[dict]:
        with api_errors("list migration windows"):
            sel = f"{WINDOW_LABEL}=true"
            if namespace:
                resp = self.coord.list_namespaced_lease(namespace, label_selector=sel, _preload_content=False,
                                                        _request_timeout=_TIMEOUT)
            else:
                resp = self.coord.list_lease_for_all_namespaces(label_selector=sel, _preload_content=False,
                                                                _request_timeout=_TIMEOUT)
            return _json(resp).get("items") or []

    def create_window(self, *, namespace: str, name: str, annotations: Mapping[str, str], holder: str) -> dict:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "namespace": namespace, "labels": {WINDOW_LABEL: "true"},
                             "annotations": dict(annotations)},
                "spec": {"holderIdentity": holder}}
        with api_errors(f"create window {namespace}/{name}"):
            return _json(self.coord.create_namespaced_lease(namespace, body, _preload_content=False,
                                                            _request_timeout=_TIMEOUT))

    def update_window(self, *, lease: Mapping[str, Any], annotations: Mapping[str, str]) -> dict:
        """Replace the Lease's annotations; its resourceVersion makes a concurrent writer a ``Conflict``."""
        meta = lease["metadata"]
        body = {**lease, "metadata": {**meta, "annotations": {**(meta.get("annotations") or {}), **annotations}}}
        with api_errors(f"update window {meta['namespace']}/{meta['name']}"):
            return _json(self.coord.replace_namespaced_lease(meta["name"], meta["namespace"], body,
                                                             _preload_content=False, _request_timeout=_TIMEOUT))

    def delete_window(self, *, namespace: str, name: str) -> None:
        try:
            with api_errors(f"delete window {namespace}/{name}"):
                self.coord.delete_namespaced_lease(name, namespace, _preload_content=False, _request_timeout=_TIMEOUT)
        except NotFound:
            return

    # -- events ----------------------------------------------------------------------------------
    def event_sink(self, *, component: str = "drsched-migration") -> KubeEventSink:
        return KubeEventSink(self.core, component=component)


class LeaderElector:
    """Run ``lead()`` only while holding the Lease ``namespace/name`` (``kubernetes.leaderelection``).

    ``lead`` runs in the library's thread; when renewing fails, ``on_lost`` is called (the process should
    stop acting and exit: a Deployment restarts it as a follower). ``identity`` should be the pod name, so
    a restarted container of the same pod takes its own Lease back at once.
    """

    def __init__(self, api_client, *, namespace: str, name: str, identity: str, lease_s: int, renew_s: int,
                 retry_s: int, lead: Callable[[], None], on_lost: Callable[[], None]) -> None:
        from kubernetes import client
        from kubernetes.leaderelection import electionconfig, leaderelection
        from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

        lock = LeaseLock(name, namespace, identity)
        lock.api_instance = client.CoordinationV1Api(api_client)  # the library would use the default client
        try:
            cfg = electionconfig.Config(lock, lease_duration=lease_s, renew_deadline=renew_s, retry_period=retry_s,
                                        onstarted_leading=lead, onstopped_leading=on_lost)
        except SystemExit as exc:  # the library exits on a bad config
            raise ConfigError(None, f"leader election: {exc}") from None
        self._election = leaderelection.LeaderElection(cfg)
        self._thread = threading.Thread(target=self._election.run, name="leader-election", daemon=True)

    def start(self) -> None:
        self._thread.start()
