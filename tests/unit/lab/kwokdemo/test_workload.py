"""lab.kwokdemo.workload: the KWOK demo's nodes and pods are seeded, the usage file counts a pod once it has
ramped up, and the summary sees an overloaded node. Pure: no cluster, no binaries."""

from __future__ import annotations

import numpy as np
import pytest

from lab.kwokdemo.workload import DemoNode, DemoPod, make_nodes, make_pods, summarize, usage_file


def test_pods_and_nodes_are_seeded() -> None:
    def draw(seed: int):
        rng = np.random.default_rng(seed)
        return make_nodes(8, rng), make_pods(20, rng, submit_s=10, run_for_s=10)

    (n1, p1), (n2, p2), (_, p3) = draw(3), draw(3), draw(4)
    assert p1 == p2 and p1 != p3
    assert [n.background.tolist() for n in n1] == [n.background.tolist() for n in n2]
    assert {n.kind for n in n1} == {"standard", "compute", "netfast", "small"}
    assert sum(bool(n.busy) for n in n1) == 4
    assert p1[0].at == 0 and all(a.at <= b.at for a, b in zip(p1, p1[1:], strict=False))
    assert all(p.run_for >= 5 for p in p1)


def test_usage_file_counts_a_pod_once_it_has_ramped_up() -> None:
    rng = np.random.default_rng(1)
    nodes, pods = make_nodes(2, rng), make_pods(2, rng, submit_s=5, run_for_s=10)
    label = nodes[0].label
    running = {"drsched": {pods[0].name: (label, 100.0)}, "default": {}}
    young = usage_file(nodes, pods, running, now=102.0, ramp_s=4.0)["usage"]
    old = usage_file(nodes, pods, running, now=105.0, ramp_s=4.0)["usage"]
    base_cpu = nodes[0].background[0]
    assert float(young[f"drsched-{label}"]["cpu"]) == pytest.approx(base_cpu, abs=1e-3)
    assert float(old[f"drsched-{label}"]["cpu"]) == pytest.approx(base_cpu + pods[0].demand[0], abs=1e-3)
    assert old[f"default-{label}"] == young[f"default-{label}"]  # the other pool is untouched


def test_summary_sees_an_overloaded_node() -> None:
    node = DemoNode(label="small-1", kind="small", capacity=np.array([2.0, 8.0, 125.0, 100.0]), max_pods=32,
                    background=np.array([0.2, 1.0, 10.0, 5.0]), busy="")
    pods = [DemoPod(name=f"net-{i}", kind="net", at=float(i), run_for=10.0, requests=(0.5, 0.5),
                    demand=(0.5, 1.0, 60.0, 0.5)) for i in range(2)]
    s = summarize([node], pods, {"net-0": "small-1", "net-1": "small-1"})
    assert s.placed == 2 and s.hottest == "small-1 net"
    assert s.peak_bottleneck == pytest.approx((10 + 120) / 125)
    assert s.overloaded_arrivals == 1
