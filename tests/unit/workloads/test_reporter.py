"""The progress reporter: throttled writes, forced writes, smoothed rate, and documents that parse."""

from __future__ import annotations

import pytest

from workloads.progress import read_progress
from workloads.reporter import RATE_SMOOTHING, ProgressReporter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_writes_are_throttled_unless_forced(tmp_path):
    clock = Clock()
    rep = ProgressReporter(tmp_path, kind="cpu", units_total=10, resumed_from=0, interval=1.0, clock=clock)
    assert rep.report(0, checkpoint=None) is not None
    clock.now += 0.5
    assert rep.report(1, checkpoint=None) is None
    assert read_progress(tmp_path / "progress.json").units_done == 0
    assert rep.report(2, checkpoint=None, force=True) is not None
    assert read_progress(tmp_path / "progress.json").units_done == 2


def test_rate_is_smoothed_units_per_second(tmp_path):
    clock = Clock()
    rep = ProgressReporter(tmp_path, kind="cpu", units_total=100, resumed_from=20, interval=0.0, clock=clock)
    clock.now += 2.0
    assert rep.report(30, checkpoint=None).rate == pytest.approx(5.0)  # 10 units in 2 s, counted from resume
    clock.now += 1.0
    assert rep.report(40, checkpoint=None).rate == pytest.approx(RATE_SMOOTHING * 10 + (1 - RATE_SMOOTHING) * 5)


def test_written_document_satisfies_the_contract(tmp_path):
    rep = ProgressReporter(tmp_path, kind="train", units_total=4, resumed_from=0)
    written = rep.report(4, state="done", checkpoint=None, force=True)
    assert read_progress(tmp_path / "progress.json") == written
    assert rep.latest_json() == written.to_json().encode()


def test_checkpoint_write_times_and_restore_cost_are_reported(tmp_path):
    rep = ProgressReporter(tmp_path, kind="cpu", units_total=10, resumed_from=4)
    assert rep.report(4, checkpoint=None, force=True).checkpoint_write_s is None
    rep.restore_s = 0.5
    rep.checkpoint_written(0.25)
    rep.checkpoint_written(0.75)
    doc = read_progress(tmp_path / "progress.json") if rep.report(6, checkpoint=None, force=True) else None
    assert doc.checkpoint_writes == 2 and doc.restore_s == 0.5
    assert (doc.checkpoint_write_s.last, doc.checkpoint_write_s.mean) == (0.75, 0.5)
