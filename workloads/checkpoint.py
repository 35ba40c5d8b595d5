"""Self-verifying checkpoint files: write, verify, keep the last K, resume from the newest valid one.

A checkpoint is ``<state-dir>/ckpt-<units_done, 10 digits>.json``::

    {"format": 1,
     "sha256": "<hex sha256 of the canonical payload>",
     "payload": {"kind": "cpu", "fingerprint": "<sha256 of the job's output-determining args>",
                 "units_done": 120, "written_at": 1700000000.5, "state": {...job specific...}}}

The canonical payload is ``json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)``
in UTF-8; Python's float repr round-trips exactly, so numpy weights survive as JSON lists. Files are
written with ``atomic.atomic_write`` (temp + fsync + rename + dir fsync), so a SIGKILL leaves no partial
file under a checkpoint name. A file that does not parse, whose hash does not match, whose name disagrees
with its ``units_done``, or that belongs to other arguments (fingerprint) is invalid: ``load_newest``
logs why, moves it aside as ``*.rejected`` (so it can neither shadow newer checkpoints nor be pruned in
place of valid ones) and falls back to the next older one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kube.atomic import atomic_write, fsync_dir
from kube.logs import kv
from workloads.progress import CheckpointRef

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
_NAME = re.compile(r"^ckpt-(\d{10})\.json$")


class CheckpointError(Exception):
    """A checkpoint file is unusable; ``path`` names it and ``reason`` says why."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"checkpoint {self.path}: {reason}")


class CheckpointCorruptError(CheckpointError):
    """Truncated, garbled, or the checksum does not match the content."""


class CheckpointRejectedError(CheckpointError):
    """Intact, but not usable by this job (other arguments, or its external data no longer agrees)."""


@dataclass(frozen=True)
class Checkpoint:
    path: Path
    sha256: str
    kind: str
    fingerprint: str
    units_done: int
    written_at: float
    state: dict[str, Any]

    def ref(self) -> CheckpointRef:
        return CheckpointRef(units_done=self.units_done, path=str(self.path), sha256=self.sha256, at=self.written_at)


def canonical(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def fingerprint(config: dict[str, Any]) -> str:
    """Hash of the arguments that determine a job's output; checkpoints of other arguments are rejected."""
    return hashlib.sha256(canonical(config)).hexdigest()


def checkpoint_name(units_done: int) -> str:
    return f"ckpt-{units_done:010d}.json"


def encode_checkpoint(*, kind: str, fingerprint: str, units_done: int, written_at: float,
                      state: dict[str, Any]) -> tuple[bytes, str]:
    """Return the file bytes and the payload sha256."""
    payload = {"kind": kind, "fingerprint": fingerprint, "units_done": units_done,
               "written_at": written_at, "state": state}
    digest = hashlib.sha256(canonical(payload)).hexdigest()
    doc = {"format": FORMAT_VERSION, "sha256": digest, "payload": payload}
    return json.dumps(doc, sort_keys=True, allow_nan=False).encode(), digest


def verify_checkpoint(path: Path) -> Checkpoint:
    """Parse and verify one checkpoint file; raise ``CheckpointCorruptError`` when it is not intact."""
    path = Path(path)
    try:
        doc = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise CheckpointCorruptError(path, "file vanished") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise CheckpointCorruptError(path, f"not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_VERSION:
        raise CheckpointCorruptError(path, f"not a format-{FORMAT_VERSION} checkpoint object")
    payload, recorded = doc.get("payload"), doc.get("sha256")
    if not isinstance(payload, dict) or not isinstance(recorded, str):
        raise CheckpointCorruptError(path, "missing payload or sha256")
    try:
        actual = hashlib.sha256(canonical(payload)).hexdigest()
    except ValueError as exc:
        raise CheckpointCorruptError(path, f"payload not canonicalizable ({exc})") from None
    if actual != recorded:
        raise CheckpointCorruptError(path, f"sha256 mismatch (recorded {recorded[:12]}, actual {actual[:12]})")
    units = payload.get("units_done")
    match = _NAME.match(path.name)
    if isinstance(units, bool) or not isinstance(units, int) or (match and int(match.group(1)) != units):
        raise CheckpointCorruptError(path, f"units_done {units!r} does not match the file name")
    state = payload.get("state")
    if not isinstance(state, dict):
        raise CheckpointCorruptError(path, "state is not an object")
    return Checkpoint(path=path, sha256=actual, kind=str(payload.get("kind")),
                      fingerprint=str(payload.get("fingerprint")), units_done=units,
                      written_at=float(payload.get("written_at", 0.0)), state=state)


class CheckpointStore:
    """The checkpoint files of one job in one state directory."""

    def __init__(self, directory: Path, *, kind: str, fingerprint: str, keep: int = 3) -> None:
        if keep < 1:
            raise ValueError("keep must be >= 1")
        self.directory = Path(directory)
        self.kind = kind
        self.fingerprint = fingerprint
        self.keep = keep

    def paths(self) -> list[Path]:
        """Checkpoint files, newest (most units) first."""
        found = [p for p in self.directory.iterdir() if _NAME.match(p.name)]
        return sorted(found, key=lambda p: p.name, reverse=True)

    def save(self, units_done: int, state: dict[str, Any], *, now: float | None = None) -> Checkpoint:
        written_at = time.time() if now is None else now
        data, digest = encode_checkpoint(kind=self.kind, fingerprint=self.fingerprint, units_done=units_done,
                                         written_at=written_at, state=state)
        path = self.directory / checkpoint_name(units_done)
        atomic_write(path, data)
        self._prune()
        return Checkpoint(path=path, sha256=digest, kind=self.kind, fingerprint=self.fingerprint,
                          units_done=units_done, written_at=written_at, state=state)

    def _prune(self) -> None:
        stale = self.paths()[self.keep:]
        for path in stale:
            path.unlink(missing_ok=True)
        if stale:
            fsync_dir(self.directory)

    def load_newest(self, accept: Callable[[Checkpoint], None] | None = None) -> Checkpoint | None:
        """Newest checkpoint that verifies, matches this job and that ``accept`` does not reject.

        ``accept`` may raise ``CheckpointRejectedError`` (e.g. the output file on disk disagrees). Invalid
        checkpoints are logged and renamed to ``*.rejected``. ``None`` means start from scratch.
        """
        for path in self.paths():
            try:
                ckpt = verify_checkpoint(path)
                if ckpt.kind != self.kind or ckpt.fingerprint != self.fingerprint:
                    raise CheckpointRejectedError(path, "written by a job with other arguments (fingerprint differs)")
                if accept is not None:
                    accept(ckpt)
            except CheckpointError as exc:
                log.warning("skipping invalid checkpoint, falling back to an older one",
                            extra=kv(path=path, reason=exc.reason))
                path.replace(path.with_name(path.name + ".rejected"))
                continue
            return ckpt
        return None
