"""The image index (``images.json``): what another process needs to import the archives without building.

One record per image: fully qualified tag, archive path and size (a docker-archive holds the layers
uncompressed, so this is the image's unpacked size), the archive's sha256, the image id (``sha256:`` + the
digest of its config: the same in buildah, in containerd after ``ctr images import`` and in the kubelet's
image list; manifest digests differ, containerd writes its own manifest for a docker-archive), the user
it runs as and the cache key it was built from. Written atomically, so a reader never sees half an index.
The one reader and writer of the format: the builder (``harness.images.build``), the image cache's view
(``harness.imagecache``, which the lab and the real-node tests go through) and the tests' pinned copies.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

log = logging.getLogger(__name__)

SCHEMA = 2


@dataclass(frozen=True)
class BuiltImage:
    """One image of the index; ``reused`` is True when this call found it current instead of building it."""

    name: str
    tag: str
    archive: Path
    archive_bytes: int
    archive_sha256: str
    image_id: str
    user: str
    key: str
    built_s: float
    reused: bool = False

    def as_reused(self) -> BuiltImage:
        return replace(self, reused=True)

    def to_json(self) -> dict:
        record = asdict(self)
        record["archive"] = str(self.archive)
        del record["reused"]
        return record


def read_index(path: Path) -> dict[str, BuiltImage]:
    """The index at ``path`` by image name; empty when it is missing or unreadable (everything gets rebuilt;
    an unreadable one is logged)."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
        if data.get("schema") != SCHEMA:
            log.warning("image index with unknown schema path=%s", path)
            return {}
        known = {f.name for f in fields(BuiltImage)}
        images = {}
        for record in data["images"]:
            values = {k: v for k, v in record.items() if k in known}
            values["archive"] = Path(values["archive"])
            images[record["name"]] = BuiltImage(**values)
        return images
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("unreadable image index path=%s error=%s", path, exc)
        return {}


def write_index(path: Path, images: dict[str, BuiltImage]) -> None:
    """Replace the index atomically (temp file, fsync, rename)."""
    body = {"schema": SCHEMA, "images": [images[name].to_json() for name in sorted(images)]}
    partial = path.with_suffix(".json.partial")
    with partial.open("w") as handle:
        json.dump(body, handle, indent=2)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)
