"""The cache root and the image cache's view: one root from the environment, one index format read back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import cache
from harness.imagecache import cached_images, find_image
from harness.images.store import BuiltImage, write_index


def _image(name: str, archive: Path, version: str = "v1") -> BuiltImage:
    return BuiltImage(name=name, tag=f"docker.io/drsched/{name}:{version}", archive=archive, archive_bytes=1,
                      archive_sha256="sha256:00", image_id="sha256:11", user="65532", key=f"key-{name}-{version}",
                      built_s=0.1)


def test_the_cache_root_is_drsched_cache_else_the_users_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    assert (cache.images_dir(), cache.lab_dir()) == (tmp_path / "images", tmp_path / "lab")
    monkeypatch.delenv(cache.CACHE_ENV)
    assert cache.cache_root() == Path.home() / ".cache" / "drsched"


def test_the_view_keeps_images_whose_archive_exists_and_the_newest_index_wins(tmp_path: Path) -> None:
    for version in ("v1", "v2"):
        (tmp_path / version).mkdir()
        archive = tmp_path / version / "workloads.tar"
        archive.write_bytes(b"x")
        write_index(tmp_path / version / "images.json", {
            "workloads": _image("workloads", archive, version),
            "monitor": _image("monitor", tmp_path / version / "missing.tar", version)})
        os.utime(tmp_path / version / "images.json", (1000 + int(version[1]), 1000 + int(version[1])))
    assert sorted(cached_images(tmp_path)) == ["docker.io/drsched/workloads:v1", "docker.io/drsched/workloads:v2"]
    found = find_image("workloads", tmp_path)
    assert found is not None and (found.tag, found.key) == ("docker.io/drsched/workloads:v2", "key-workloads-v2")
    assert find_image("monitor", tmp_path) is None


def test_an_unreadable_index_is_skipped_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "images.json").write_text("{not json")
    assert cached_images(tmp_path) == {}
    assert "unreadable image index" in caplog.text
