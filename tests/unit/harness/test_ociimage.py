"""The one-file OCI archive is a valid image layout that names the image, and it is reproducible."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from harness.ociimage import write_single_binary_image


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def _blob(files: dict[str, bytes], digest: str) -> bytes:
    data = files[f"blobs/sha256/{digest.split(':', 1)[1]}"]
    assert "sha256:" + hashlib.sha256(data).hexdigest() == digest
    return data


def test_archive_is_an_oci_layout_whose_index_names_the_image(tmp_path: Path) -> None:
    binary = tmp_path / "pause"
    binary.write_bytes(b"\x7fELF not really")
    archive = write_single_binary_image(binary=binary, image="docker.io/local/pause:v1", dest=tmp_path / "p.tar")
    files = _members(archive)
    assert json.loads(files["oci-layout"]) == {"imageLayoutVersion": "1.0.0"}
    (entry,) = json.loads(files["index.json"])["manifests"]
    assert entry["annotations"]["io.containerd.image.name"] == "docker.io/local/pause:v1"
    manifest = json.loads(_blob(files, entry["digest"]))
    config = json.loads(_blob(files, manifest["config"]["digest"]))
    assert (config["os"], config["architecture"], config["config"]["Entrypoint"]) == ("linux", "amd64", ["/pause"])
    (layer_ref,) = manifest["layers"]
    layer = _blob(files, layer_ref["digest"])
    assert config["rootfs"]["diff_ids"] == [layer_ref["digest"]]  # uncompressed: diff id == layer digest
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        (member,) = tar.getmembers()
        assert (member.name, member.mode, tar.extractfile(member).read()) == ("pause", 0o755, binary.read_bytes())  # type: ignore[union-attr]


def test_same_binary_gives_the_same_archive(tmp_path: Path) -> None:
    binary = tmp_path / "b"
    binary.write_bytes(b"payload")
    one = write_single_binary_image(binary=binary, image="docker.io/local/b:v1", dest=tmp_path / "1.tar")
    two = write_single_binary_image(binary=binary, image="docker.io/local/b:v1", dest=tmp_path / "2.tar")
    assert one.read_bytes() == two.read_bytes()


@pytest.mark.parametrize("name", ["pause", "pause:v1", "local/pause"])
def test_short_or_untagged_names_are_refused(tmp_path: Path, name: str) -> None:
    binary = tmp_path / "b"
    binary.write_bytes(b"x")
    with pytest.raises(ValueError, match="fully qualified"):
        write_single_binary_image(binary=binary, image=name, dest=tmp_path / "x.tar")
