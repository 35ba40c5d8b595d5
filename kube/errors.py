"""Typed errors of the shared Kubernetes layer; the type says what happens next.

* ``ConfigError`` -- bad settings, a bad file or no usable cluster credentials: the process (extender or
  migration controller) refuses to start and exits 2 with one line naming the problem.
* ``QuantityError`` / ``ProfileError`` -- one value in a pod or node does not parse. The caller picks the
  fallback: a bad quantity drops the node or pod (or answers 400 on the request path), a bad profile
  annotation falls back to the next demand source.
* ``ApiError`` -- one call to the API server failed; ``kube.client.api_errors`` maps HTTP statuses to these in
  ONE place (kopf's Temporary/Permanent split):

  - ``TemporaryError(delay)``: unreachable, 5xx or 429 (a PDB forbids an eviction for now): retry after
    ``delay`` seconds;
  - ``PermanentError``: retrying cannot help (403 forbidden, 422 invalid object): report and leave it;
  - ``NotFound``: the object is gone -- for a migration step an *outcome*, never a crash;
  - ``Conflict``: 409, it already exists (an idempotent retry of a create) or its resourceVersion moved.
"""

from __future__ import annotations

from policy.errors import ConfigError as _ConfigShape
from policy.errors import PicklableError


class KubeError(PicklableError):
    """Base class of every error this layer raises on purpose."""


class ConfigError(_ConfigShape, KubeError):
    """The configuration is invalid; the process refuses to start (exit 2). ``ConfigError(field, message)``:
    the one shape of ``policy.errors``, so a CLI's ``except ConfigError`` catches every layer's."""


class QuantityError(ValueError, KubeError):
    """A Kubernetes resource quantity that does not parse."""


class ProfileError(ValueError, KubeError):
    """A ``drsched.io/profile`` annotation (or a static profile) that does not parse."""


class ApiError(KubeError):
    """A call to the API server failed; the subclass says what to do next."""


class TemporaryError(ApiError):
    """Retry after ``delay`` seconds (the API server is briefly unavailable, or a PDB says not yet)."""

    def __init__(self, message: str, *, delay: float = 1.0, status: int | None = None) -> None:
        super().__init__(message)
        self.delay = delay
        self.status = status


class PermanentError(ApiError):
    """Retrying cannot help (forbidden, invalid object)."""


class NotFound(ApiError):
    """The object does not exist (any more)."""


class Conflict(ApiError):
    """The object already exists, or it changed since it was read."""
