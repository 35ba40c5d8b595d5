"""Typed errors of the migration controller; the type says what happens next (kopf's Temporary/Permanent).

* ``TemporaryError(delay)`` -- the API server was unreachable, answered 5xx or 429 (a PDB forbids the
  eviction for now): retry after ``delay`` seconds; the protocol resumes from the annotation record.
* ``PermanentError`` -- retrying cannot help (403 forbidden, 422 invalid object): the step is reported and
  the migration is rolled back where nothing was stopped yet, or left for a person otherwise.
* ``NotFound`` -- the object is gone. For a protocol step this is an *outcome* (a pod gone mid-migration),
  never a crash.
* ``Conflict`` -- 409: it already exists (an idempotent retry of a create) or the resourceVersion moved.
* ``RecordError`` -- a ``drsched.io/migration`` annotation that does not parse or an invalid transition.
* ``ConfigError`` -- bad settings: the process refuses to start (exit 2).
"""

from __future__ import annotations


class MigrationError(Exception):
    """Base class of every error the controller raises on purpose."""


class ConfigError(MigrationError):
    """The configuration is invalid; the controller refuses to start."""


class TemporaryError(MigrationError):
    """Retry after ``delay`` seconds (the API server is briefly unavailable, or a PDB says not yet)."""

    def __init__(self, message: str, *, delay: float = 1.0, status: int | None = None) -> None:
        super().__init__(message)
        self.delay = delay
        self.status = status


class PermanentError(MigrationError):
    """Retrying cannot help (forbidden, invalid object)."""


class NotFound(MigrationError):
    """The object does not exist (any more)."""


class Conflict(MigrationError):
    """The object already exists, or it changed since it was read."""


class RecordError(MigrationError, ValueError):
    """A migration record that does not parse, or a transition the state machine does not allow."""
