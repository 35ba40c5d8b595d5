"""Read-only view of the drsched image cache that `make images` fills (`harness.images` builds it).

The real-node harness only consumes images: it reads each `<cache>/images/<version>/images.json`
index (fully-qualified tag -> archive importable by `ctr images import`) and never builds or writes
there, so the image build and the node harness stay independent.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

INDEX_SCHEMA = 2


def images_dir() -> Path:
    return Path(os.environ.get("DRSCHED_CACHE", Path.home() / ".cache" / "drsched")) / "images"


def cached_images(root: Path | None = None) -> dict[str, Path]:
    """Every cached image whose archive exists: fully-qualified tag -> archive path (newest index wins)."""
    found: dict[str, Path] = {}
    indexes = sorted((root or images_dir()).glob("*/images.json"), key=lambda p: p.stat().st_mtime)
    for index in indexes:
        try:
            data = json.loads(index.read_text())
        except (OSError, ValueError) as exc:
            log.warning("unreadable image index path=%s error=%s", index, exc)
            continue
        if not isinstance(data, dict) or data.get("schema") != INDEX_SCHEMA:
            log.warning("image index with unknown schema path=%s", index)
            continue
        for entry in data.get("images", []):
            archive = Path(str(entry.get("archive", "")))
            if entry.get("tag") and archive.is_file():
                found[str(entry["tag"])] = archive
    return found


def find_image(name: str, root: Path | None = None) -> tuple[str, Path] | None:
    """The cached image whose repository ends in `/<name>` (e.g. "workloads"), as (tag, archive)."""
    matches = [(tag, path) for tag, path in cached_images(root).items() if tag.rsplit(":", 1)[0].endswith(f"/{name}")]
    return matches[-1] if matches else None
