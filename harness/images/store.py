"""The image index (``images.json``): what another process needs to import the archives without building.

One record per image: fully qualified tag, archive path and size (a docker-archive holds the layers
uncompressed, so this is the image's unpacked size), the archive's sha256, the image id (``sha256:`` + the
digest of its config: the same in buildah, in containerd after ``ctr images import`` and in the kubelet's
image list; manifest digests differ, containerd writes its own manifest for a docker-archive), the user
it runs as and the cache key it was built from. Written atomically, so a reader never sees half an index.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

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
    """The index at ``path`` by image name; empty when it is missing or unreadable (everything gets rebuilt)."""
    try:
        data = json.loads(path.read_text())
        if data.get("schema") != SCHEMA:
            return {}
        known = {f.name for f in fields(BuiltImage)}
        images = {}
        for record in data["images"]:
            values = {k: v for k, v in record.items() if k in known}
            values["archive"] = Path(values["archive"])
            images[record["name"]] = BuiltImage(**values)
        return images
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
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
