"""A run's image archives are pinned: a rebuild of the shared cache while the run waits does not change them."""

from __future__ import annotations

import os
from pathlib import Path

from lab.experiment import _pin


def test_a_pinned_archive_keeps_its_bytes_when_the_cache_replaces_it(tmp_path: Path) -> None:
    cache = tmp_path / "images"
    cache.mkdir()
    (cache / "extender.tar").write_bytes(b"this run's build")
    (pinned,) = _pin([cache / "extender.tar"], cache / ".lab-1")
    (cache / "extender.tar.partial").write_bytes(b"another checkout's build")
    os.replace(cache / "extender.tar.partial", cache / "extender.tar")  # as the image builder does
    assert pinned.read_bytes() == b"this run's build" and pinned.name == "extender.tar"
