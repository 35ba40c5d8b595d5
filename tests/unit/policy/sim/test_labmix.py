"""The lab scenario: its nodes and jobs stay equal to the real lab's, and its workload names parse."""

import math

import numpy as np
import pytest

from harness.nodes import REAL_NODES
from lab import schedule
from policy.sim.cluster import LAB_CLUSTER, NODE_TYPES, parse_cluster
from policy.sim.config import SimConfig, build_episode
from policy.sim.errors import ConfigError, UnknownClassError
from policy.sim.labmix import (
    FLAT_REQUEST_M,
    HONEST_CAP_M,
    LAB_SCALE,
    MIX,
    REQUEST_RATIO,
    TEMPLATES,
    VARIANTS,
    cpu_request_m,
    lab_variant,
    sample_lab,
)
from policy.state import DEFAULT_DISK_MBPS, DEFAULT_NET_MBPS


def test_the_lab_nodes_are_the_real_nodes():
    nodes = parse_cluster(LAB_CLUSTER, np.random.default_rng(0))
    assert nodes.types == tuple(s.name for s in REAL_NODES)
    for shape, cap in zip(REAL_NODES, nodes.capacity, strict=True):
        assert tuple(cap) == (shape.cpu_millis / 1000, shape.memory_mib / 1024, DEFAULT_NET_MBPS, DEFAULT_DISK_MBPS)
    assert all(NODE_TYPES[t].max_pods == 110 for t in nodes.types)  # the kubelet's default


def test_the_lab_jobs_are_the_lab_schedule_core_templates():
    assert MIX == schedule.MIX and VARIANTS == schedule.VARIANTS
    assert (REQUEST_RATIO, FLAT_REQUEST_M, HONEST_CAP_M) == (schedule.REQUEST_RATIO, schedule.FLAT_REQUEST_M,
                                                             schedule.HONEST_CAP_M)
    mine = {f"{t.kind}-{t.size}": t for ts in TEMPLATES.values() for t in ts}
    assert {k: tuple(sizes) for k, sizes in schedule.SHAPES["core"].items()} == {
        k: tuple(t.size for t in ts) for k, ts in TEMPLATES.items()}
    for key, t in mine.items():
        real = schedule.TEMPLATES[key]
        assert (t.units, t.cpu_use_m, t.mem_use_mi, t.net_mbit, t.io_mbps) == (
            real.units, real.cpu_use_m, real.mem_use_mi, real.net_mbit, real.io_mbps), key
        assert t.work() == schedule.scaled_units(real.units, LAB_SCALE) * t.seconds_per_unit
        for variant in VARIANTS:
            assert cpu_request_m(t.cpu_use_m, variant) == schedule.cpu_request_m(real, variant), (key, variant)


@pytest.mark.parametrize("key", ["io-m", "net-m"])
def test_io_and_net_seconds_per_unit_follow_from_their_arguments(key):
    args = dict(a.removeprefix("--").split("=") for a in schedule.TEMPLATES[key].args if "=" in a)
    mine = next(t for ts in TEMPLATES.values() for t in ts if f"{t.kind}-{t.size}" == key)
    assert mine.seconds_per_unit == pytest.approx(int(args["chunk-bytes"]) / (float(args["bandwidth"]) * 2**20))


@pytest.mark.parametrize("workload,variant", [("lab-under", "under"), ("lab-flat", "flat"),
                                              ("lab-honest", "honest"), ("drs", None), ("cpu:2,io:1", None)])
def test_lab_workload_names(workload, variant):
    assert lab_variant(workload) == variant


def test_an_unknown_lab_variant_names_the_known_ones():
    with pytest.raises(UnknownClassError, match="lab-flat"):
        lab_variant("lab-fair")
    with pytest.raises(ConfigError):
        cpu_request_m(1000, "fair")


@pytest.mark.parametrize("variant,compute_m,small_m", [("under", 200, 20), ("flat", 100, 100),
                                                       ("honest", 450, 100)])
def test_an_episode_of_a_lab_workload_carries_the_variants_requests(variant, compute_m, small_m):
    cfg = SimConfig(cluster=LAB_CLUSTER, workload=f"lab-{variant}", profile_error=0.0, load=0.65, n_jobs=200)
    _, jobs, _ = build_episode(cfg, np.random.default_rng(3))
    for j in jobs:
        assert j.requests[0] == pytest.approx((compute_m if j.kind in ("cpu", "train") else small_m) / 1000)
        assert j.expected == j.demand  # the lab annotates every pod with its true use
    kinds = [j.kind for j in jobs]
    for kind, weight in MIX:
        assert abs(kinds.count(kind) / len(kinds) - weight) < 0.1, kind


def test_sample_lab_is_a_function_of_the_generator():
    a, b = (sample_lab("flat", 30, np.random.default_rng(7)) for _ in range(2))
    assert a == b
    works = {j.kind: [] for j in a}
    for j in a:
        works[j.kind].append(j.work)
    assert all(math.isfinite(w) and w > 0 for ws in works.values() for w in ws)
