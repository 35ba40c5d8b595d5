"""The lab scenario: the simulator's lab nodes and jobs are the lab's worlds, timed, and its workload names parse."""

import math

import numpy as np
import pytest

from policy.labworld import (
    ALIBABA_USE_PER_REQUEST,
    ISOLATED_SCALE,
    MISLEADING_LEVEL,
    MIX,
    REAL_NODES,
    SHAPES,
    TEMPLATES,
    VARIANTS,
    WORLDS,
)
from policy.sim.arrivals import offered_work
from policy.sim.cluster import LAB_CLUSTER, MULTI_CLUSTER, NODE_TYPES, parse_cluster
from policy.sim.config import SimConfig, build_episode
from policy.sim.errors import ConfigError, UnknownClassError
from policy.sim.labmix import (
    CPU_SECONDS_PER_UNIT,
    LAB_WORKLOADS,
    NODE_SCALES,
    LabWorkload,
    demand,
    lab_workload,
    parse_lab_workload,
    sample_lab,
    seconds_per_unit,
    templates,
    window_load,
    work,
)


def test_the_lab_cluster_is_the_four_real_nodes_in_order_at_their_quota_and_memory():
    nodes = parse_cluster(LAB_CLUSTER, np.random.default_rng(0))
    assert nodes.types == ("rn-small", "rn-medium", "rn-medium-mem", "rn-large")
    assert nodes.capacity[:, :2].tolist() == [[0.25, 0.75], [0.5, 1.0], [0.5, 2.0], [1.0, 2.0]]
    assert all(NODE_TYPES[t].max_pods == 110 for t in nodes.types)  # the kubelet's default
    assert [s.name for s in REAL_NODES] == list(nodes.types)


def test_the_multi_resource_cluster_is_that_worlds_nodes_with_their_links_as_net_capacity():
    nodes = parse_cluster(MULTI_CLUSTER, np.random.default_rng(0))
    assert nodes.types == ("mr-small", "mr-medium", "mr-medium-mem", "mr-large")
    assert nodes.capacity[:, :3].tolist() == [[0.25, 0.75, 10.0], [0.5, 1.0, 2.5], [0.5, 2.0, 2.5], [1.0, 2.0, 1.25]]
    shapes = WORLDS["multi-resource"].nodes
    assert nodes.capacity[:, 2].tolist() == [s.net_mbit / 8 for s in shapes]  # Mbit/s -> MB/s
    assert nodes.capacity[:, 0].tolist() == [s.cpu_millis / 1000 for s in shapes]
    assert all(NODE_TYPES[t].max_pods == 110 for t in nodes.types)


@pytest.mark.parametrize(("key", "seconds"), [("cpu-s", 6.5), ("cpu-l", 13.0), ("train-m", 6.5), ("io-m", 7.5),
                                              ("net-m", 7.5)])
def test_a_core_template_takes_its_units_at_the_lab_scale_times_its_unit_time(key, seconds):
    assert work(TEMPLATES[key]) == pytest.approx(seconds)


@pytest.mark.parametrize(("key", "per_unit"), [("io-m", 0.25), ("net-m", 0.0625)])
def test_io_and_net_units_take_their_chunk_through_the_4_mib_s_cap(key, per_unit):
    assert seconds_per_unit(TEMPLATES[key]) == per_unit  # 1 MiB and 256 KiB at 4 MiB/s


def test_the_simulator_draws_the_core_shape_templates_of_every_kind_of_the_mix():
    assert {k: tuple(t.size for t in templates("drs", k)) for k, _ in MIX} == SHAPES["core"]
    assert demand(TEMPLATES["net-m"]) == pytest.approx((0.1, 96 / 1024, 4 * 1.048576, 0.0))


def test_the_multi_resource_world_draws_the_pulling_net_template_and_the_core_compute_ones():
    assert [t.key for t in templates("multi-resource", "net")] == ["net-p"]
    assert [t.key for t in templates("multi-resource", "cpu")] == ["cpu-s", "cpu-l"]
    assert demand(TEMPLATES["net-p"])[2] == pytest.approx(4 * 1.048576)  # its 4 MiB/s cap, in MB/s
    assert work(TEMPLATES["net-p"], WORLDS["multi-resource"].scale) == pytest.approx(15.0)  # 60 MiB at 4 MiB/s


@pytest.mark.parametrize("workload,expected", [
    ("lab-under", ("drs", "under", "core")), ("lab-flat", ("drs", "flat", "core")),
    ("lab-honest", ("drs", "honest", "core")), ("lab-misleading-small", ("drs", "misleading", "small")),
    ("lab-multi-resource-under", ("multi-resource", "under", "core")),
    ("lab-multi-resource-honest-fraction", ("multi-resource", "honest", "fraction")),
    ("lab-multi-resource-under-x0.4", ("multi-resource", "under", "core", 0.4)),
    ("lab-misleading-small-x0.4", ("drs", "misleading", "small", 0.4)),
    ("drs", None), ("cpu:2,io:1", None)])
def test_lab_workload_names(workload, expected):
    parsed = parse_lab_workload(workload)
    if expected is None:
        assert parsed is None
    else:
        assert parsed == LabWorkload(*expected)
        assert lab_workload(*expected) == workload


def test_every_world_has_a_workload_per_variant_job_shape_and_frame():
    assert len(LAB_WORKLOADS) == len(WORLDS) * len(VARIANTS) * len(SHAPES) * len(NODE_SCALES)


def test_the_isolated_frame_draws_the_same_jobs_with_the_lab_s_scaled_use_and_requests():
    # The lab's jobs.csv (results/lab/multi-resource-2026-12-07): compute jobs ask for 80 m, net and io 10 m (the
    # floor: 0.2 x 40 m = 8), against 200 m and 20 m as the world is described; work and draws unchanged.
    plain, iso = (sample_lab("under", 300, np.random.default_rng(11), world="multi-resource", node_scale=f)
                  for f in (1.0, ISOLATED_SCALE))
    assert [j.kind for j in plain] == [j.kind for j in iso]
    assert [j.work for j in iso] == pytest.approx([j.work for j in plain], rel=1e-12)
    for p, j in zip(plain, iso, strict=True):
        compute = j.kind in ("cpu", "train")
        assert j.requests[0] == pytest.approx(0.08 if compute else 0.01)
        assert p.requests[0] == pytest.approx(0.2 if compute else 0.02)
        assert j.demand[0] == pytest.approx(p.demand[0] * ISOLATED_SCALE)
        assert j.demand[1:] == p.demand[1:] and j.requests[1] == p.requests[1]


def test_a_capped_compute_job_takes_longer_alone_by_its_cap():
    whole, capped = TEMPLATES["cpu-s"], TEMPLATES["cpu-60m"]
    assert seconds_per_unit(whole) == CPU_SECONDS_PER_UNIT  # a whole core: the measured unit time
    assert seconds_per_unit(capped) == pytest.approx(CPU_SECONDS_PER_UNIT / 0.06)  # 60 m: 1/0.06 of a core
    assert work(capped, 1.0) == pytest.approx(369 * 0.0065 / 0.06)  # about 40 s at --scale 1
    assert [t.key for t in templates("drs", "cpu", "small")] == ["cpu-60m", "cpu-125m", "cpu-250m"]


def test_misleading_requests_mislead_alike_within_a_workload_and_come_from_the_alibaba_table():
    jobs = sample_lab("misleading", 400, np.random.default_rng(3), shape="small")
    by_use: dict[tuple[str, float], set[float]] = {}
    for j in jobs:
        by_use.setdefault((j.kind, j.demand[0]), set()).add(j.requests[0])
    assert all(len(asked) == 1 for asked in by_use.values())  # one request per workload in an episode
    smallest = min(n.cpu_millis for n in WORLDS["drs"].nodes) / 1000
    assert all(j.demand[0] <= smallest and j.requests[0] <= 0.2 for j in jobs)  # fits the smallest node
    for (_kind, use), (asked,) in by_use.items():
        if asked < 0.2:  # not capped at the most a request asks: use x level / asked is one of the table's ratios
            ratio = use * MISLEADING_LEVEL / asked
            assert min(abs(ratio - r) for r in ALIBABA_USE_PER_REQUEST) < max(0.12 * ratio, 0.01 * MISLEADING_LEVEL
                                                                                / asked)



@pytest.mark.parametrize("workload", ["lab-fair", "lab-multi-resource", "lab-mr-under", "lab-drs-under"])
def test_an_unknown_lab_workload_names_the_known_ones(workload):
    with pytest.raises(UnknownClassError, match="lab-multi-resource-flat"):
        parse_lab_workload(workload)


def test_an_unknown_variant_or_world_names_the_known_ones():
    with pytest.raises(ConfigError, match="honest"):
        sample_lab("fair", 3, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="multi-resource"):
        sample_lab("under", 3, np.random.default_rng(0), world="moon")


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


def test_the_drs_world_draws_exactly_what_it_drew_before_worlds():
    # The jobs of seed 5 before sample_lab took a world (commit ae8f618): the DRS families' results stand.
    jobs = sample_lab("under", 6, np.random.default_rng(5))
    assert [j.kind for j in jobs] == ["net", "net", "train", "cpu", "cpu", "cpu"]
    assert [round(j.work, 4) for j in jobs] == [7.0968, 6.9339, 7.0054, 6.6797, 11.4916, 7.6278]


def test_a_multi_resource_episode_draws_its_mix_and_pulling_net_jobs():
    cfg = SimConfig(cluster=MULTI_CLUSTER, workload="lab-multi-resource-under", profile_error=0.0, load=1.0,
                    n_jobs=400)
    _, jobs, _ = build_episode(cfg, np.random.default_rng(2))
    kinds = [j.kind for j in jobs]
    for kind, weight in WORLDS["multi-resource"].mix:
        assert abs(kinds.count(kind) / len(kinds) - weight) < 0.06, kind
    net = [j for j in jobs if j.kind == "net"]
    assert all(j.demand == demand(TEMPLATES["net-p"]) and j.requests[0] == pytest.approx(0.02) for j in net)
    assert np.median([j.work for j in net]) == pytest.approx(15.0, rel=0.05)
    cpu_works = sorted(j.work for j in jobs if j.kind == "cpu")
    assert cpu_works[len(cpu_works) // 4] < 16 < cpu_works[-len(cpu_works) // 4]  # cpu-s 13 s and cpu-l 26 s


def test_window_load_is_the_arrival_rate_times_the_expected_offered_work():
    cap = parse_cluster(MULTI_CLUSTER, np.random.default_rng(0)).capacity.sum(axis=0)
    # by hand: 1 core of 2.25 for cpu (13 or 26 s) and train (13 s); 0.1 core for io (15 s); the net job's
    # 4 MiB/s of the four links' 16.25 MB/s for 15 s
    by_kind = {"cpu": 19.5 / 2.25, "train": 13 / 2.25, "io": 1.5 / 2.25, "net": 15 * 4 * 1.048576 / 16.25}
    expected = sum(w * by_kind[k] for k, w in WORLDS["multi-resource"].mix) * 48 / 240
    assert window_load("multi-resource", 48, 240.0, cap) == pytest.approx(expected)
    jobs = sample_lab("under", 4000, np.random.default_rng(0), world="multi-resource")
    assert offered_work(jobs, cap) * 48 / 240 == pytest.approx(expected, rel=0.03)  # what the episodes realise
