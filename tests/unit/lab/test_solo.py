"""Solo times: the median of the runs, and a cache file that keeps every run (an older one-run file counts as one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.solo import Solo, _store, load, load_runs, median_solo


@pytest.mark.parametrize("seconds, median", [([10.0], 10.0), ([10.0, 12.0, 30.0], 12.0), ([9.0, 11.0], 10.0),
                                             ([30.0, 10.0, 12.0], 12.0)])
def test_the_solo_time_is_the_median_of_the_runs(seconds, median) -> None:
    assert median_solo([Solo(s, 2 * s) for s in seconds]) == Solo(median, 2 * median)


def test_a_cache_file_keeps_every_run_and_an_old_one_is_one_run(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"seconds": 14.0, "cpu_m": 990.0, "node": "rn-large"}))
    assert load_runs(old) == [Solo(14.0, 990.0)]
    new = tmp_path / "new.json"
    runs = [Solo(10.0, 900.0), Solo(13.0, 950.0), Solo(11.0, 1000.0)]
    assert _store(new, runs, node="rn-large", argv=["cpu"], image_digest="d") == Solo(11.0, 950.0)
    assert load_runs(new) == runs and load(new) == Solo(11.0, 950.0)
    assert json.loads(new.read_text())["seconds"] == 11.0  # what a one-run reader sees: the median
    (tmp_path / "bad.json").write_text("{")
    assert load_runs(tmp_path / "bad.json") == [] and load(tmp_path / "missing.json") is None
