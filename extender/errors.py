"""Typed errors of the extender; the type says what happens next.

* ``StaticClusterError`` -- a ``kube.errors.ConfigError`` naming the file, line and field of a bad
  static-cluster (or static-usage) file: the process refuses to start.
* ``BadRequest`` -- a request kube-scheduler (or a person with curl) sent that cannot be served: the route
  answers 400, or 200 with ``Error`` set where kube-scheduler reads that field (filter, bind). A pod whose
  requests do not parse (``kube.errors.QuantityError``) is one.
* ``UsageUnavailable`` -- one failed usage fetch: the poller logs and counts it, nodes go stale on their own.
* ``BindError`` -- the apiserver refused the Binding; reported in ``ExtenderBindingResult.Error``.

Bad settings are the shared ``kube.errors.ConfigError``; a bad profile annotation is a
``kube.errors.ProfileError`` and a fallback to the next demand source.
"""

from __future__ import annotations

from kube.errors import ConfigError
from policy.errors import PicklableError


class ExtenderError(PicklableError):
    """Base class of every error the extender raises on purpose."""


class StaticClusterError(ConfigError, ExtenderError):
    """A static-cluster (or static-usage) YAML file is malformed; names the file, line and field."""

    def __init__(self, path: str, line: int | None, field: str, problem: str) -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(None, f"{where}: {field}: {problem}" if field else f"{where}: {problem}")
        # pickled across processes (the static cluster is parsed in a child): ConfigError's __reduce__ does it
        self.path, self.line, self.field, self.problem = path, line, field, problem


class BadRequest(ExtenderError):
    """A request that cannot be served as sent (missing Pod, unparseable pod quantities, ...)."""


class UsageUnavailable(ExtenderError):
    """A usage provider could not deliver samples this time (timeout, unreadable file, HTTP error)."""

    def __init__(self, provider: str, detail: str) -> None:
        super().__init__(f"{provider}: {detail}")
        self.provider = provider
        self.detail = detail


class BindError(ExtenderError):
    """The apiserver refused to bind the pod (not found, assigned elsewhere, forbidden, timeout)."""
