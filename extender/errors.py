"""Typed errors of the extender; the type says what happens next.

* ``ConfigError`` -- bad settings or a bad static-cluster file: the process refuses to start.
* ``BadRequest`` -- a request kube-scheduler (or a person with curl) sent that cannot be served: the route
  answers 400, or 200 with ``Error`` set where kube-scheduler reads that field (filter, bind).
* ``QuantityError`` / ``ProfileError`` -- one value in a pod or node could not be parsed. A bad quantity in
  the pod's requests is a ``BadRequest``; a bad profile annotation is a fallback to the next demand source.
* ``UsageUnavailable`` -- one failed usage fetch: the poller logs and counts it, nodes go stale on their own.
* ``BindError`` -- the apiserver refused the Binding; reported in ``ExtenderBindingResult.Error``.
"""

from __future__ import annotations


class ExtenderError(Exception):
    """Base class of every error the extender raises on purpose."""


class ConfigError(ExtenderError):
    """The configuration is invalid; the extender refuses to start."""


class StaticClusterError(ConfigError):
    """A static-cluster (or static-usage) YAML file is malformed; names the file, line and field."""

    def __init__(self, path: str, line: int | None, field: str, problem: str) -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {field}: {problem}" if field else f"{where}: {problem}")
        self.path, self.line, self.field, self.problem = path, line, field, problem


class BadRequest(ExtenderError):
    """A request that cannot be served as sent (missing Pod, unparseable pod quantities, ...)."""


class QuantityError(ValueError, ExtenderError):
    """A Kubernetes resource quantity that does not parse."""


class ProfileError(ValueError, ExtenderError):
    """A ``drsched.io/profile`` annotation that does not parse."""


class UsageUnavailable(ExtenderError):
    """A usage provider could not deliver samples this time (timeout, unreadable file, HTTP error)."""

    def __init__(self, provider: str, detail: str) -> None:
        super().__init__(f"{provider}: {detail}")
        self.provider = provider
        self.detail = detail


class BindError(ExtenderError):
    """The apiserver refused to bind the pod (not found, assigned elsewhere, forbidden, timeout)."""
