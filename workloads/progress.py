"""The progress contract between a workload and whoever watches it (the migration controller).

A running job keeps one JSON document, ``<state-dir>/progress.json``, replaced atomically (temp file,
fsync, rename) so a reader sees either the old or the new version, never a torn one. The same document
is optionally served over HTTP. This module owns only the schema: the ``Progress`` record, its encoder
and a strict parser. It does no writing and imports nothing outside the stdlib, so the controller can
import it without pulling in the jobs.

Document (schema 1; unknown extra keys are ignored by the parser, so fields can be added)::

    {
      "schema": 1,
      "kind": "cpu" | "io" | "net" | "train" | <any non-empty string>,
      "units_done": int >= 0,            # units completed and visible to this process
      "units_total": int >= 1,
      "progress": float in [0, 1],       # units_done / units_total
      "rate": float >= 0,                # units per second, exponentially smoothed, this process only
      "started_at": float,               # unix seconds when this process started
      "updated_at": float,               # unix seconds of this write
      "resumed_from": int >= 0,          # units_done of the checkpoint this process resumed from (0: fresh)
      "checkpoint": null | {"units_done": int, "path": str, "sha256": 64 hex, "at": float},
      "state": "running" | "checkpointing" | "done" | "failed",
      "pid": int >= 1,
      "restore_s": null | float >= 0,    # seconds this process took to load and apply its checkpoint
      "checkpoint_writes": int >= 0,     # checkpoints this process wrote
      "checkpoint_write_s": null | {"last": float >= 0, "mean": float >= 0}   # their write times, seconds
    }

``schema``, ``resumed_from`` and the last three are optional when parsing (defaults 1, 0, null, 0, null):
checkpoint and restore costs are measured by the job itself, so a migration's price is known, not assumed.
Any other problem raises a ``ProgressError`` subclass naming the file and the field.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
PROGRESS_FILE = "progress.json"
STATES: tuple[str, ...] = ("running", "checkpointing", "done", "failed")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class ProgressError(Exception):
    """A progress document could not be used; ``path`` and ``field`` say where."""

    def __init__(self, path: str | Path, field: str | None, reason: str) -> None:
        self.path = str(path)
        self.field = field
        self.reason = reason
        where = f"field {field!r}" if field else "document"
        super().__init__(f"progress file {self.path}: {where}: {reason}")


class ProgressMissingError(ProgressError):
    """No progress file yet: the job has not started (or runs elsewhere). Treat as 'no information'."""


class ProgressDecodeError(ProgressError):
    """The file is not a JSON object (garbled, truncated, empty)."""


class ProgressFieldError(ProgressError):
    """A field is missing, has the wrong type, or is out of range."""


@dataclass(frozen=True)
class CheckpointRef:
    """Where the newest checkpoint of the job lies and what it covers."""

    units_done: int
    path: str
    sha256: str
    at: float


@dataclass(frozen=True)
class WriteTimes:
    """Seconds this process's checkpoint writes took (snapshot, serialise, fsync, rename)."""

    last: float
    mean: float


@dataclass(frozen=True)
class Progress:
    """One progress report; see the module docstring for field meanings."""

    kind: str
    units_done: int
    units_total: int
    progress: float
    rate: float
    started_at: float
    updated_at: float
    checkpoint: CheckpointRef | None
    state: str
    pid: int
    resumed_from: int = 0
    schema: int = SCHEMA_VERSION
    restore_s: float | None = None
    checkpoint_writes: int = 0
    checkpoint_write_s: WriteTimes | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


def _int(doc: dict[str, Any], key: str, path: str, *, minimum: int, prefix: str = "") -> int:
    name = prefix + key
    if key not in doc:
        raise ProgressFieldError(path, name, "missing")
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProgressFieldError(path, name, f"expected an integer, got {type(value).__name__}")
    if value < minimum:
        raise ProgressFieldError(path, name, f"must be >= {minimum}, got {value}")
    return value


def _num(doc: dict[str, Any], key: str, path: str, *, minimum: float = 0.0, maximum: float = math.inf,
         prefix: str = "") -> float:
    name = prefix + key
    if key not in doc:
        raise ProgressFieldError(path, name, "missing")
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ProgressFieldError(path, name, f"expected a number, got {type(value).__name__}")
    if not math.isfinite(value) or not minimum <= value <= maximum:
        raise ProgressFieldError(path, name, f"must be a finite number in [{minimum}, {maximum}], got {value}")
    return float(value)


def _str(doc: dict[str, Any], key: str, path: str, *, prefix: str = "") -> str:
    name = prefix + key
    if key not in doc:
        raise ProgressFieldError(path, name, "missing")
    value = doc[key]
    if not isinstance(value, str) or not value:
        raise ProgressFieldError(path, name, f"expected a non-empty string, got {type(value).__name__}")
    return value


def _checkpoint(doc: dict[str, Any], path: str, units_total: int) -> CheckpointRef | None:
    if "checkpoint" not in doc:
        raise ProgressFieldError(path, "checkpoint", "missing (use null for none)")
    raw = doc["checkpoint"]
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ProgressFieldError(path, "checkpoint", f"expected an object or null, got {type(raw).__name__}")
    p = "checkpoint."
    units = _int(raw, "units_done", path, minimum=0, prefix=p)
    if units > units_total:
        raise ProgressFieldError(path, p + "units_done", f"{units} exceeds units_total {units_total}")
    sha = _str(raw, "sha256", path, prefix=p)
    if not _SHA256.match(sha):
        raise ProgressFieldError(path, p + "sha256", "expected 64 lowercase hex digits")
    return CheckpointRef(units_done=units, path=_str(raw, "path", path, prefix=p), sha256=sha,
                         at=_num(raw, "at", path, prefix=p))


def parse_progress(text: str | bytes, *, path: str | Path = "<memory>") -> Progress:
    """Validate one progress document; raise ``ProgressDecodeError`` / ``ProgressFieldError``."""
    path = str(path)
    try:
        doc = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProgressDecodeError(path, None, f"not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise ProgressDecodeError(path, None, f"expected a JSON object, got {type(doc).__name__}")
    schema = doc.get("schema", SCHEMA_VERSION)
    if schema != SCHEMA_VERSION:
        raise ProgressFieldError(path, "schema", f"unsupported version {schema!r} (this reader knows {SCHEMA_VERSION})")
    units_total = _int(doc, "units_total", path, minimum=1)
    units_done = _int(doc, "units_done", path, minimum=0)
    if units_done > units_total:
        raise ProgressFieldError(path, "units_done", f"{units_done} exceeds units_total {units_total}")
    state = _str(doc, "state", path)
    if state not in STATES:
        raise ProgressFieldError(path, "state", f"expected one of {', '.join(STATES)}, got {state!r}")
    resumed_from = _int(doc, "resumed_from", path, minimum=0) if "resumed_from" in doc else 0
    restore_s = _num(doc, "restore_s", path) if doc.get("restore_s") is not None else None
    writes = _int(doc, "checkpoint_writes", path, minimum=0) if "checkpoint_writes" in doc else 0
    return Progress(
        kind=_str(doc, "kind", path),
        units_done=units_done,
        units_total=units_total,
        progress=_num(doc, "progress", path, maximum=1.0),
        rate=_num(doc, "rate", path),
        started_at=_num(doc, "started_at", path),
        updated_at=_num(doc, "updated_at", path),
        checkpoint=_checkpoint(doc, path, units_total),
        state=state,
        pid=_int(doc, "pid", path, minimum=1),
        resumed_from=resumed_from,
        restore_s=restore_s,
        checkpoint_writes=writes,
        checkpoint_write_s=_write_times(doc, path),
    )


def _write_times(doc: dict[str, Any], path: str) -> WriteTimes | None:
    raw = doc.get("checkpoint_write_s")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ProgressFieldError(path, "checkpoint_write_s", f"expected an object or null, got {type(raw).__name__}")
    p = "checkpoint_write_s."
    return WriteTimes(last=_num(raw, "last", path, prefix=p), mean=_num(raw, "mean", path, prefix=p))


def read_progress(path: str | Path) -> Progress:
    """Read and validate a progress file; a missing file raises ``ProgressMissingError``."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ProgressMissingError(path, None, "no such file") from None
    return parse_progress(data, path=path)
