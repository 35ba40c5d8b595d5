"""Write single-file container images as OCI archives that `ctr images import` accepts.

The real nodes need a pod sandbox ("pause") image before any pod can start, and no image registry is
reachable here. The image is one static binary, so its archive is written directly (an OCI image
layout in a tar: one uncompressed layer, a config, a manifest and an index naming the image) instead of
going through an image builder. The output is byte-for-byte reproducible for the same input file.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

OCI_LAYER = "application/vnd.oci.image.layer.v1.tar"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"


def _digest(blob: bytes) -> str:
    return "sha256:" + hashlib.sha256(blob).hexdigest()


def _add(tar: tarfile.TarFile, name: str, data: bytes, *, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = 0  # reproducible: the same binary gives the same digests
    tar.addfile(info, io.BytesIO(data))


def single_binary_layer(binary: Path, *, path_in_image: str) -> bytes:
    """An uncompressed layer tar holding `binary` at `path_in_image` (mode 0755, root-owned)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _add(tar, path_in_image.lstrip("/"), binary.read_bytes(), mode=0o755)
    return buf.getvalue()


def write_single_binary_image(*, binary: Path, image: str, dest: Path, entrypoint: str = "/pause") -> Path:
    """Write `dest` (an OCI archive) for a linux/amd64 image `image` whose entrypoint is `binary`.

    `image` must be fully qualified (`docker.io/local/pause:v1`): the CRI plugin looks images up by
    that exact name, and containerd names the imported image from the index annotation.
    """
    if "/" not in image or ":" not in image.rsplit("/", 1)[-1]:
        raise ValueError(f"image name {image!r} must be fully qualified with a tag, e.g. docker.io/local/pause:v1")
    layer = single_binary_layer(binary, path_in_image=entrypoint)
    config = json.dumps({
        "architecture": "amd64",
        "os": "linux",
        "config": {"Entrypoint": [entrypoint]},
        "rootfs": {"type": "layers", "diff_ids": [_digest(layer)]},
    }, sort_keys=True).encode()  # fmt: skip
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": OCI_CONFIG, "digest": _digest(config), "size": len(config)},
        "layers": [{"mediaType": OCI_LAYER, "digest": _digest(layer), "size": len(layer)}],
    }, sort_keys=True).encode()  # fmt: skip
    index = json.dumps({
        "schemaVersion": 2,
        "mediaType": OCI_INDEX,
        "manifests": [{
            "mediaType": OCI_MANIFEST, "digest": _digest(manifest), "size": len(manifest),
            "platform": {"architecture": "amd64", "os": "linux"},
            "annotations": {"io.containerd.image.name": image, "org.opencontainers.image.ref.name": image},
        }],
    }, sort_keys=True).encode()  # fmt: skip
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(dest.suffix + ".tmp")
    with tarfile.open(tmp, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _add(tar, "oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        _add(tar, "index.json", index)
        for blob in (layer, config, manifest):
            _add(tar, f"blobs/sha256/{_digest(blob).split(':', 1)[1]}", blob)
    tmp.replace(dest)
    return dest
