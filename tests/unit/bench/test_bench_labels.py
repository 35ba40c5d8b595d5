"""bench/bench_labels.py: first-sight pods bring new label requirements, repeats hit the memo, every case runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))  # run as a script, bench/ is on its path

import bench_labels  # noqa: E402

from kube.affinity import node_requirement  # noqa: E402


def test_first_sight_pods_each_bring_a_new_requirement_and_repeats_share_one():
    first = {node_requirement(bench_labels.shadow_pod(i, "t", "first")) for i in range(5)}
    repeat = {node_requirement(bench_labels.shadow_pod(i, "t", "repeat")) for i in range(5)}
    assert len(first) == 5 and len(repeat) == 1 and node_requirement(bench_labels.shadow_pod(0, "t", "none")) is None


def test_the_cluster_is_labelled_and_a_requirement_allows_a_third_of_it(tmp_path):
    from extender.static_cluster import load_static_cluster

    bench_labels.write_cluster(tmp_path / "c.yaml", 9)
    nodes = load_static_cluster(tmp_path / "c.yaml").nodes
    need = node_requirement(bench_labels.shadow_pod(0, "t", "first"))
    assert sum(need.matches(n.labels) for n in nodes) == 3


def test_a_small_run_times_every_case_and_shadows_every_binding(tmp_path, capsys):
    out = tmp_path / "labels.json"
    assert bench_labels.main(["--nodes", "30", "--rounds", "2", "--calls", "2", "--binding-calls", "2",
                              "--note", "test", "--results", str(out)]) == 0
    figures = json.loads(out.read_text())["figures"]
    assert set(figures["label_check_us"]) == set(figures["binding_us"]) == {"none", "first", "repeat"}
    assert set(figures["canary_us"]) == {"off", "first", "repeat"} and figures["note"] == "test"
    # 2 rounds x 2 timed bindings, and the one before timing
    assert {v["bindings"]["recorded"] for v in figures["binding_us"].values()} == {5}
    assert "first sight - repeat" in capsys.readouterr().out
