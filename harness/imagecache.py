"""Read-only view of the drsched image cache that `make images` fills (`harness.images` builds it).

The real-node harness only consumes images: it reads each `<cache>/images/<version>/images.json`
index (through `harness.images.store`, the one reader and writer of that format) and never builds or
writes there, so the image build and the node harness stay independent.
"""

from __future__ import annotations

from pathlib import Path

from harness.cache import images_dir
from harness.images.store import BuiltImage, read_index


def cached_images(root: Path | None = None) -> dict[str, BuiltImage]:
    """Every cached image whose archive exists, by fully-qualified tag (newest index wins)."""
    found: dict[str, BuiltImage] = {}
    for index in sorted((root or images_dir()).glob("*/images.json"), key=lambda p: p.stat().st_mtime):
        for image in read_index(index).values():
            if image.tag and image.archive.is_file():
                found[image.tag] = image
    return found


def find_image(name: str, root: Path | None = None) -> BuiltImage | None:
    """The cached image whose repository ends in `/<name>` (e.g. "workloads")."""
    matches = [image for tag, image in cached_images(root).items() if tag.rsplit(":", 1)[0].endswith(f"/{name}")]
    return matches[-1] if matches else None
