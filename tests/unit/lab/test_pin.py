"""A run's image archives are pinned: a rebuild of the shared cache while the run waits does not change them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lab.errors import RunError
from lab.experiment import _pin, keep_protocol, record_order
from lab.report import read_rows


def test_a_pinned_archive_keeps_its_bytes_when_the_cache_replaces_it(tmp_path: Path) -> None:
    cache = tmp_path / "images"
    cache.mkdir()
    (cache / "extender.tar").write_bytes(b"this run's build")
    (pinned,) = _pin([cache / "extender.tar"], cache / ".lab-1")
    (cache / "extender.tar.partial").write_bytes(b"another checkout's build")
    os.replace(cache / "extender.tar.partial", cache / "extender.tar")  # as the image builder does
    assert pinned.read_bytes() == b"this run's build" and pinned.name == "extender.tar"


def test_a_protocol_run_records_its_order_once_and_keeps_its_protocol(tmp_path: Path) -> None:
    arms = ["default", "model", "default#2"]
    first = record_order(tmp_path, [1, 2], arms, "k")
    assert record_order(tmp_path, [1, 2, 3], arms, "k")[1] == first[1]  # a resumed run keeps the order
    rows = read_rows(tmp_path / "order.csv")
    assert [int(r["seed"]) for r in rows] == [1] * 3 + [2] * 3 + [3] * 3
    assert [r["arm"] for r in rows if r["seed"] == "1"] == first[1]
    proto = tmp_path / "p.yaml"
    proto.write_text("protocol: a\n")
    keep_protocol(tmp_path, proto, "abc123 2026-12-01")
    keep_protocol(tmp_path, proto)  # the same one again: fine
    assert (tmp_path / "protocol-runs.txt").read_text().count("started") == 2
    proto.write_text("protocol: b\n")
    with pytest.raises(RunError, match="started under another protocol"):
        keep_protocol(tmp_path, proto)
