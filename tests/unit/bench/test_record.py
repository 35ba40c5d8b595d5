"""bench/record.py: a run of the benchmarks that keep every run gets its own file, and never replaces one."""

from __future__ import annotations

import calendar
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))  # the benchmarks import it as a top-level module, as here
import record  # noqa: E402


def test_a_run_file_is_named_by_its_benchmark_and_utc_start_minute():
    at = calendar.timegm((2026, 12, 3, 18, 7, 59))
    assert record.run_path("scheduler", at=at) == ROOT / "results" / "bench" / "runs" / "scheduler-20261203T1807.json"


def test_write_without_overwrite_refuses_an_existing_file(tmp_path):
    path = tmp_path / "runs" / "scheduler-20261203T1807.json"
    assert record.write(path, {"x": 1.23456}, load_before=1.0, overwrite=False) == path
    first = path.read_text()
    assert json.loads(first)["figures"] == {"x": 1.235}
    with pytest.raises(record.ResultsExist, match="scheduler-20261203T1807.json exists"):
        record.write(path, {"x": 2.0}, load_before=1.0, overwrite=False)
    assert path.read_text() == first
    with pytest.raises(record.ResultsExist):
        record.refuse_existing(path)
    record.refuse_existing(tmp_path / "other.json")  # absent: fine
    record.refuse_existing("")  # not writing: fine
