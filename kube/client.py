"""The shared layer's only module that imports ``kubernetes``: the client, HTTP status -> error, Events.

Each shell keeps its own calls in its ``kube.py`` (the extender's watch and Binding, the controller's pods,
evictions and window Leases); what both need is here once:

* ``make_api_client`` -- ``kubeconfig``, else in-cluster config, else ``~/.kube/config``; a ``ConfigError``
  naming the kubeconfig when none of them works; requests carry ``user_agent(component)`` (the client's
  default, ``OpenAPI-Generator/<version>/python``, would hide which drsched process an apiserver request,
  audit entry or throttling decision belongs to);
* ``api_errors(what)`` -- the ONE place HTTP statuses become the typed errors of ``kube.errors``: 404
  ``NotFound``, 409 ``Conflict``, 429 / 5xx / connection errors ``TemporaryError`` (with the server's
  Retry-After), anything else ``PermanentError``; ``status_message`` reads the API's ``Status.message``;
* ``KubeEventSink`` -- core/v1 Events about pods, posted from a one-thread pool (never on the request path);
* ``with_request_timeout(api, seconds)`` -- a default timeout for every request that names none, for clients
  that only list, get, create and delete (the lab driver, the tests): the generated client waits forever on
  a connection the apiserver stopped answering, and no deadline of the caller's can fire while it does.

Calls go over raw JSON (``_preload_content=False``), so the generated models' deserialisation never runs.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

from kube.errors import ConfigError, Conflict, NotFound, PermanentError, TemporaryError
from kube.logs import kv

log = logging.getLogger(__name__)


def user_agent(component: str) -> str:
    """``drsched-<component>/<version> (python kubernetes/<version>)``: the token before the first ``/`` names
    the process, as kube-scheduler's ``kube-scheduler/v1.35.4 (linux/amd64) ...`` does."""
    from importlib.metadata import PackageNotFoundError, version

    def _version(dist: str) -> str:
        try:
            return version(dist)
        except PackageNotFoundError:
            return "unknown"

    return f"drsched-{component}/{_version('drsched')} (python kubernetes/{_version('kubernetes')})"


def make_api_client(*, kubeconfig: Path | None, component: str = "client"):
    """An ApiClient from ``kubeconfig``, else in-cluster config, else ``~/.kube/config``, whose requests
    carry ``user_agent(component)``."""
    from kubernetes import client, config

    try:
        if kubeconfig is not None:
            api = config.new_client_from_config(config_file=str(kubeconfig))
        else:
            try:
                config.load_incluster_config()
                api = client.ApiClient()
            except config.ConfigException:
                api = config.new_client_from_config()
    except (config.ConfigException, OSError, ValueError, TypeError) as exc:
        raise ConfigError(None, f"cannot build a Kubernetes client from kubeconfig "
                                f"{kubeconfig or '(default)'}: {exc}") from None
    api.user_agent = user_agent(component)
    return api


def with_request_timeout(api, seconds: float):
    """Give every request of ``api`` that names no ``_request_timeout`` a (connect, read) timeout of ``seconds``
    each; returns ``api``. Not for a client that watches: a watch with no event for ``seconds`` would fail."""
    if seconds <= 0:
        raise ValueError(f"a request timeout must be positive, got {seconds}")
    rest = api.rest_client
    plain = rest.request

    def request(*args, _request_timeout=None, **kwargs):
        return plain(*args, _request_timeout=_request_timeout or (seconds, seconds), **kwargs)

    rest.request = request
    return api


def status_message(exc: Any) -> str:
    """The ``message`` of the API's Status body of an ``ApiException``, else its reason."""
    try:
        return str(json.loads(exc.body).get("message", exc.reason))
    except (TypeError, ValueError, AttributeError):
        return str(getattr(exc, "reason", exc))


@contextlib.contextmanager
def api_errors(what: str) -> Iterator[None]:
    """Run one API call, turning its failure into the ``kube.errors`` type that says what to do next."""
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    try:
        yield
    except ApiException as exc:
        message = f"{what}: {exc.status} {status_message(exc)}"
        if exc.status == 404:
            raise NotFound(message) from None
        if exc.status == 409:
            raise Conflict(message) from None
        if exc.status == 429 or (exc.status or 0) >= 500 or exc.status == 0:
            retry = (exc.headers or {}).get("Retry-After") if hasattr(exc, "headers") else None
            raise TemporaryError(message, delay=float(retry) if retry and str(retry).isdigit() else 1.0,
                                 status=exc.status) from None
        raise PermanentError(message) from None
    except (HTTPError, OSError, TimeoutError) as exc:
        raise TemporaryError(f"{what}: {exc!r}") from None


class KubeEventSink:
    """core/v1 Events about pods, posted from a small thread pool (never on the request path)."""

    def __init__(self, core, *, component: str) -> None:
        self.core, self.component = core, component
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="events")

    def event(self, *, namespace: str, name: str, uid: str, reason: str, message: str,
              type_: str = "Warning") -> None:
        from kubernetes import client

        now = datetime.now().astimezone()
        body = client.CoreV1Event(
            metadata=client.V1ObjectMeta(generate_name=f"{name}.", namespace=namespace),
            involved_object=client.V1ObjectReference(api_version="v1", kind="Pod", name=name, namespace=namespace,
                                                     uid=uid or None),
            reason=reason, message=message[:1000], type=type_, first_timestamp=now, last_timestamp=now, count=1,
            source=client.V1EventSource(component=self.component))

        def post() -> None:
            try:
                self.core.create_namespaced_event(namespace, body, _preload_content=False)
            except Exception as exc:
                log.debug("event not posted", extra=kv(reason=reason, error=repr(exc)))

        self._pool.submit(post)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
