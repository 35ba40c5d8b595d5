"""bench/bench_watch.py: the events a scheduled pod makes, and one timed pass that applies them all."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))  # run as a script, bench/ is on its path

import bench_watch  # noqa: E402


def test_four_events_per_pod_in_a_scheduled_pod_s_order():
    lines = [json.loads(line) for line in bench_watch.events(2)]
    assert [e["type"] for e in lines] == ["ADDED", "MODIFIED", "MODIFIED", "DELETED"] * 2
    pending, bound, running, _ = (e["object"] for e in lines[:4])
    assert "nodeName" not in pending["spec"] and bound["spec"]["nodeName"] == "bench-0000"
    assert bound["status"]["conditions"][0]["type"] == "PodScheduled"
    assert running["status"]["phase"] == "Running"


def test_one_pass_applies_every_event():
    figures = bench_watch.one_pass(3)
    assert figures["events"] == 12
    assert figures["decode_us"] > 0 and figures["apply_us"] > 0


def test_bad_arguments_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        bench_watch.main(["--pods", "0", "--results", ""])
    with pytest.raises(SystemExit):
        bench_watch.main(["--baseline-tree", str(tmp_path), "--results", ""])
    assert "not a drsched checkout" in capsys.readouterr().err


def test_a_cycle_schedules_each_pod_and_digests_the_same_replies_each_time():
    first, again = bench_watch.one_cycle(3, "demand-aware"), bench_watch.one_cycle(3, "demand-aware")
    assert all(first[k] > 0 for k in ("pod_events_us", "node_event_us", "filter_us", "prioritize_us"))
    assert first["pod_us"] == pytest.approx(sum(first[k] for k in ("pod_events_us", "node_event_us", "filter_us",
                                                                      "prioritize_us")))
    assert first["decisions"] == again["decisions"] and first["policy"] == "demand-aware"
