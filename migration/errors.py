"""Typed errors of the migration controller; the type says what happens next.

* ``RecordError`` -- a ``drsched.io/migration`` annotation (or window Lease) that does not parse, or a
  transition the state machine does not allow: the window is reported and left for a person.
* ``ProgressUnavailable`` (``migration.progress``) -- a job's progress could not be read this cycle: the job is
  skipped with a counted reason and offered again next cycle.

The shared layer's errors cover the rest (``kube.errors``): ``ConfigError`` (bad settings: exit 2) and the
API outcomes ``TemporaryError(delay)`` (retry after ``delay``; the protocol resumes from the record),
``PermanentError`` (roll back where nothing was stopped yet, else leave it for a person), ``NotFound`` (a
pod gone mid-migration is an outcome, never a crash) and ``Conflict``.
"""

from __future__ import annotations


class MigrationError(Exception):
    """Base class of every error the controller raises on purpose (besides the shared ``kube.errors``)."""


class RecordError(MigrationError, ValueError):
    """A migration record that does not parse, or a transition the state machine does not allow."""
