"""Table tests for the progress contract parser (workloads.progress)."""

from __future__ import annotations

import json

import pytest

from workloads.progress import (
    CheckpointRef,
    Progress,
    ProgressDecodeError,
    ProgressFieldError,
    ProgressMissingError,
    WriteTimes,
    parse_progress,
    read_progress,
)

SHA = "ab" * 32


def valid() -> dict:
    return {"schema": 1, "kind": "cpu", "units_done": 40, "units_total": 100, "progress": 0.4, "rate": 12.5,
            "started_at": 1700000000.0, "updated_at": 1700000003.2, "resumed_from": 20,
            "checkpoint": {"units_done": 40, "path": "/s/ckpt-0000000040.json", "sha256": SHA, "at": 1700000003.1},
            "state": "running", "pid": 4242}


def with_(**changes) -> str:
    doc = valid()
    for key, value in changes.items():
        if value is KeyError:
            doc.pop(key)
        else:
            doc[key] = value
    return json.dumps(doc)


def test_valid_document_round_trips():
    parsed = parse_progress(json.dumps(valid()), path="p.json")
    assert parsed == Progress(kind="cpu", units_done=40, units_total=100, progress=0.4, rate=12.5,
                              started_at=1700000000.0, updated_at=1700000003.2,
                              checkpoint=CheckpointRef(40, "/s/ckpt-0000000040.json", SHA, 1700000003.1),
                              state="running", pid=4242, resumed_from=20)
    assert parse_progress(parsed.to_json()) == parsed


def test_measured_costs_round_trip():
    doc = {**valid(), "restore_s": 0.25, "checkpoint_writes": 3, "checkpoint_write_s": {"last": 0.01, "mean": 0.02}}
    parsed = parse_progress(json.dumps(doc))
    assert parsed.restore_s == 0.25 and parsed.checkpoint_writes == 3
    assert parsed.checkpoint_write_s == WriteTimes(last=0.01, mean=0.02)
    assert parse_progress(parsed.to_json()) == parsed


def test_optional_fields_default_and_extra_keys_are_ignored():
    doc = valid()
    del doc["schema"], doc["resumed_from"]
    doc["checkpoint"] = None
    doc["future_field"] = {"x": 1}
    parsed = parse_progress(json.dumps(doc))
    assert parsed.resumed_from == 0 and parsed.checkpoint is None and parsed.schema == 1
    assert (parsed.restore_s, parsed.checkpoint_writes, parsed.checkpoint_write_s) == (None, 0, None)


@pytest.mark.parametrize("text", ["", "{", '{"kind": "cpu",', "not json", b"\xff\xfe\x00", "[1, 2]", "null", "3"])
def test_garbled_documents_raise_decode_error(text):
    with pytest.raises(ProgressDecodeError) as info:
        parse_progress(text, path="/state/progress.json")
    assert info.value.path == "/state/progress.json"
    assert info.value.field is None
    assert "/state/progress.json" in str(info.value)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"kind": KeyError}, "kind"),
        ({"kind": ""}, "kind"),
        ({"kind": 3}, "kind"),
        ({"units_done": KeyError}, "units_done"),
        ({"units_done": "40"}, "units_done"),
        ({"units_done": 40.0}, "units_done"),
        ({"units_done": True}, "units_done"),
        ({"units_done": -1}, "units_done"),
        ({"units_done": 101}, "units_done"),
        ({"units_total": 0}, "units_total"),
        ({"units_total": None}, "units_total"),
        ({"progress": 1.5}, "progress"),
        ({"progress": "0.4"}, "progress"),
        ({"progress": KeyError}, "progress"),
        ({"rate": -0.1}, "rate"),
        ({"rate": float("nan")}, "rate"),
        ({"rate": float("inf")}, "rate"),
        ({"started_at": None}, "started_at"),
        ({"updated_at": KeyError}, "updated_at"),
        ({"checkpoint": KeyError}, "checkpoint"),
        ({"checkpoint": []}, "checkpoint"),
        ({"checkpoint": {"units_done": 1, "path": "x", "sha256": SHA}}, "checkpoint.at"),
        ({"checkpoint": {"units_done": 1, "path": "x", "sha256": "xyz", "at": 1.0}}, "checkpoint.sha256"),
        ({"checkpoint": {"units_done": 1, "path": "", "sha256": SHA, "at": 1.0}}, "checkpoint.path"),
        ({"checkpoint": {"units_done": 200, "path": "x", "sha256": SHA, "at": 1.0}}, "checkpoint.units_done"),
        ({"state": "paused"}, "state"),
        ({"state": KeyError}, "state"),
        ({"pid": 0}, "pid"),
        ({"pid": "12"}, "pid"),
        ({"schema": 2}, "schema"),
        ({"resumed_from": -3}, "resumed_from"),
        ({"restore_s": -1.0}, "restore_s"),
        ({"restore_s": "1"}, "restore_s"),
        ({"checkpoint_writes": 1.5}, "checkpoint_writes"),
        ({"checkpoint_write_s": [0.1]}, "checkpoint_write_s"),
        ({"checkpoint_write_s": {"last": 0.1}}, "checkpoint_write_s.mean"),
        ({"checkpoint_write_s": {"last": float("nan"), "mean": 0.1}}, "checkpoint_write_s.last"),
    ],
)
def test_bad_fields_name_the_file_and_field(changes, field):
    with pytest.raises(ProgressFieldError) as info:
        parse_progress(with_(**changes), path="/state/progress.json")
    assert info.value.field == field
    assert "/state/progress.json" in str(info.value) and repr(field) in str(info.value)


def test_read_missing_file(tmp_path):
    with pytest.raises(ProgressMissingError) as info:
        read_progress(tmp_path / "progress.json")
    assert info.value.path == str(tmp_path / "progress.json")


def test_read_file(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text(json.dumps(valid()))
    assert read_progress(path).units_done == 40
    path.write_text(json.dumps(valid())[:-5])
    with pytest.raises(ProgressDecodeError):
        read_progress(path)
