"""bench/bench_pod_decode.py: its whole arm decodes as the watch did before extender.pod_events, and both arms run."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))  # run as a script, bench/ is on its path

import bench_pod_decode  # noqa: E402
from bench_watch import pod_steps  # noqa: E402

from extender.kube import dict_watch_class  # noqa: E402


def test_the_whole_arm_decodes_the_whole_pod_and_the_served_watch_is_left_pruned():
    line = orjson.dumps({"type": "MODIFIED", "object": pod_steps(1, "bench-0001")[2][1]}).decode()
    whole = bench_pod_decode.whole_watch().unmarshal_event(line, None)
    assert whole["object"] == orjson.loads(line)["object"]  # managedFields and all
    assert "managedFields" not in dict_watch_class("pods")().unmarshal_event(line, None)["object"]["metadata"]


def test_both_arms_decode_and_apply_every_block():
    figures = bench_pod_decode.interleaved(4, 2)
    assert len(figures["ratio_per_block"]) == 2 and all(x > 0 for x in figures["pruned_us_per_event"])
    assert figures["ratio_min"] <= figures["ratio_median"] <= figures["ratio_max"]
