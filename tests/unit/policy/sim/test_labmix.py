"""The lab scenario: the simulator's lab nodes and jobs are the lab's world, timed, and its workload names parse."""

import math

import numpy as np
import pytest

from policy.labworld import MIX, REAL_NODES, SHAPES, TEMPLATES
from policy.sim.cluster import LAB_CLUSTER, NODE_TYPES, parse_cluster
from policy.sim.config import SimConfig, build_episode
from policy.sim.errors import ConfigError, UnknownClassError
from policy.sim.labmix import TEMPLATES_BY_KIND, demand, lab_variant, sample_lab, seconds_per_unit, work


def test_the_lab_cluster_is_the_four_real_nodes_in_order_at_their_quota_and_memory():
    nodes = parse_cluster(LAB_CLUSTER, np.random.default_rng(0))
    assert nodes.types == ("rn-small", "rn-medium", "rn-medium-mem", "rn-large")
    assert nodes.capacity[:, :2].tolist() == [[0.25, 0.75], [0.5, 1.0], [0.5, 2.0], [1.0, 2.0]]
    assert all(NODE_TYPES[t].max_pods == 110 for t in nodes.types)  # the kubelet's default
    assert [s.name for s in REAL_NODES] == list(nodes.types)


@pytest.mark.parametrize(("key", "seconds"), [("cpu-s", 6.5), ("cpu-l", 13.0), ("train-m", 6.5), ("io-m", 7.5),
                                              ("net-m", 7.5)])
def test_a_core_template_takes_its_units_at_the_lab_scale_times_its_unit_time(key, seconds):
    assert work(TEMPLATES[key]) == pytest.approx(seconds)


@pytest.mark.parametrize(("key", "per_unit"), [("io-m", 0.25), ("net-m", 0.0625)])
def test_io_and_net_units_take_their_chunk_through_the_4_mib_s_cap(key, per_unit):
    assert seconds_per_unit(TEMPLATES[key]) == per_unit  # 1 MiB and 256 KiB at 4 MiB/s


def test_the_simulator_draws_the_core_shape_templates_of_every_kind_of_the_mix():
    assert [k for k, _ in MIX] == list(TEMPLATES_BY_KIND)
    assert {k: tuple(t.size for t in ts) for k, ts in TEMPLATES_BY_KIND.items()} == SHAPES["core"]
    assert demand(TEMPLATES["net-m"]) == pytest.approx((0.1, 96 / 1024, 4 * 1.048576, 0.0))


@pytest.mark.parametrize("workload,variant", [("lab-under", "under"), ("lab-flat", "flat"),
                                              ("lab-honest", "honest"), ("drs", None), ("cpu:2,io:1", None)])
def test_lab_workload_names(workload, variant):
    assert lab_variant(workload) == variant


def test_an_unknown_lab_variant_names_the_known_ones():
    with pytest.raises(UnknownClassError, match="lab-flat"):
        lab_variant("lab-fair")
    with pytest.raises(ConfigError, match="honest"):
        sample_lab("fair", 3, np.random.default_rng(0))


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
