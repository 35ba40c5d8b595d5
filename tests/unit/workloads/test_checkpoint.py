"""Checkpoint files: write, verify, keep-K pruning, fallback past corrupt or foreign checkpoints."""

from __future__ import annotations

import json
import logging

import pytest

from kube.atomic import atomic_write, remove_stale_temps
from workloads.checkpoint import (
    CheckpointCorruptError,
    CheckpointRejectedError,
    CheckpointStore,
    checkpoint_name,
    encode_checkpoint,
    fingerprint,
    verify_checkpoint,
)

FP = fingerprint({"kind": "cpu", "units": 10})


def store(tmp_path, keep=3, fp=FP) -> CheckpointStore:
    return CheckpointStore(tmp_path, kind="cpu", fingerprint=fp, keep=keep)


def test_save_then_verify_round_trips_floats_exactly(tmp_path):
    weights = [0.1, 1 / 3, -2.5e-308, 1e300, 123456789.123456789]
    saved = store(tmp_path).save(7, {"weights": weights}, now=5.0)
    assert saved.path.name == "ckpt-0000000007.json"
    loaded = verify_checkpoint(saved.path)
    assert loaded.state["weights"] == weights
    assert loaded.sha256 == saved.sha256 and loaded.units_done == 7 and loaded.written_at == 5.0
    assert saved.ref().units_done == 7 and saved.ref().path == str(saved.path)


def test_keeps_the_last_k(tmp_path):
    s = store(tmp_path, keep=2)
    for units in (2, 4, 6, 8):
        s.save(units, {"u": units})
    assert [p.name for p in s.paths()] == [checkpoint_name(8), checkpoint_name(6)]


def corrupt_truncate(path):
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def corrupt_flip_state(path):
    doc = json.loads(path.read_text())
    doc["payload"]["state"]["u"] = 999
    path.write_text(json.dumps(doc))


def corrupt_empty(path):
    path.write_bytes(b"")


def corrupt_rename_units(path):
    # A valid file under the wrong name must not be trusted for those units.
    path.rename(path.with_name(checkpoint_name(9)))


@pytest.mark.parametrize("corrupt", [corrupt_truncate, corrupt_flip_state, corrupt_empty, corrupt_rename_units])
def test_corrupt_newest_falls_back_to_previous(tmp_path, corrupt, caplog):
    s = store(tmp_path)
    s.save(3, {"u": 3})
    newest = s.save(6, {"u": 6})
    corrupt(newest.path)
    with caplog.at_level(logging.WARNING, logger="workloads.checkpoint"):
        loaded = s.load_newest()
    assert loaded is not None and loaded.units_done == 3 and loaded.state == {"u": 3}
    assert "falling back" in caplog.text
    assert [p.name for p in s.paths()] == [checkpoint_name(3)]
    assert list(tmp_path.glob("*.rejected"))


def test_verify_raises_typed_error(tmp_path):
    path = tmp_path / checkpoint_name(1)
    path.write_text("{garbled")
    with pytest.raises(CheckpointCorruptError) as info:
        verify_checkpoint(path)
    assert info.value.path == path


def test_foreign_fingerprint_is_rejected(tmp_path):
    store(tmp_path, fp=fingerprint({"kind": "cpu", "units": 99})).save(5, {"u": 5})
    assert store(tmp_path).load_newest() is None


def test_accept_callback_can_reject(tmp_path):
    s = store(tmp_path)
    s.save(2, {"u": 2})
    s.save(4, {"u": 4})

    def accept(ckpt):
        if ckpt.units_done == 4:
            raise CheckpointRejectedError(ckpt.path, "output file disagrees")

    assert s.load_newest(accept).units_done == 2


def test_no_checkpoints_means_fresh_start(tmp_path):
    assert store(tmp_path).load_newest() is None


def test_encode_is_canonical_and_hash_covers_payload(tmp_path):
    data, digest = encode_checkpoint(kind="cpu", fingerprint=FP, units_done=1, written_at=1.0, state={"b": 1, "a": 2})
    again, digest2 = encode_checkpoint(kind="cpu", fingerprint=FP, units_done=1, written_at=1.0, state={"a": 2, "b": 1})
    assert digest == digest2 and data == again
    path = tmp_path / checkpoint_name(1)
    atomic_write(path, data)
    assert verify_checkpoint(path).sha256 == digest


def test_stale_temp_files_are_removed(tmp_path):
    (tmp_path / ".tmp-ckpt-0000000001.json.abc").write_bytes(b"half")
    remove_stale_temps(tmp_path)
    assert not list(tmp_path.iterdir())
