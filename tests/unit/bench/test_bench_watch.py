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
    parts = ("pod_events_us", "heartbeats_us", "filter_us", "prioritize_us")
    assert all(first[k] > 0 for k in parts)
    assert first["pod_us"] == pytest.approx(sum(first[k] for k in parts))
    assert first["decisions"] == again["decisions"] and first["policy"] == "demand-aware"


def test_heartbeats_fall_between_pods_at_the_rate_asked_and_usage_makes_nodes_fail():
    # 100 nodes beating every 2 s at 25 pods/s: 2 heartbeats per pod; usage samples make some nodes hot
    figures = bench_watch.one_cycle(4, "demand-aware", nodes=100, usage=True, heartbeat_s=2.0, pod_rate=25.0)
    assert figures["heartbeats_per_pod"] == 2.0 and figures["heartbeat_event_us"] > 0
    assert figures["heartbeat_cpu_ms_per_s"] == pytest.approx(figures["heartbeat_event_us"] * 100 / 2.0 / 1000)
    without = bench_watch.one_cycle(4, "demand-aware", nodes=100, heartbeat_s=2.0, pod_rate=25.0)
    assert figures["decisions"] != without["decisions"]


def test_a_kwok_heartbeat_moves_only_what_a_kwok_heartbeat_moves():
    a, b = bench_watch.kwok_node("bench-0007", 1), bench_watch.kwok_node("bench-0007", 2)
    a["metadata"].pop("resourceVersion"), b["metadata"].pop("resourceVersion")
    for node in (a, b):
        node["metadata"]["managedFields"][1].pop("time")
        for cond in node["status"]["conditions"]:
            cond.pop("lastHeartbeatTime")
    assert a == b and len(json.dumps(bench_watch.kwok_node("bench-0007", 1))) > 3000
