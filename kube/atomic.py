"""Crash-safe file replacement, the one way drsched makes a file durable.

Every file a reader may look at while its writer can be killed (a job's progress, checkpoints and final
output; the extender's learned profiles) is written here: a temp file in the same directory, flushed and
fsynced, renamed over the target, then the directory fsynced so the rename itself survives a power loss. A
SIGKILL at any instant leaves either the old file or the new one, plus at worst a stray ``.tmp-*`` file
that ``remove_stale_temps`` cleans up. Standard library only (the workloads' image has nothing else).
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

from kube.logs import kv

log = logging.getLogger(__name__)

TEMP_PREFIX = ".tmp-"


def fsync_dir(directory: Path) -> None:
    """Make renames and creations inside ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically (and durably when ``sync``)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{TEMP_PREFIX}{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if sync:
        fsync_dir(path.parent)


def atomic_rename(src: Path, dst: Path) -> None:
    """Durably move a fully written, already fsynced file into place."""
    os.replace(src, dst)
    fsync_dir(Path(dst).parent)


def remove_stale_temps(directory: Path) -> None:
    """Delete temp files left behind by a killed predecessor (they were never renamed, so never valid)."""
    for stale in Path(directory).glob(f"{TEMP_PREFIX}*"):
        log.info("removing stale temp file", extra=kv(path=stale))
        stale.unlink(missing_ok=True)
