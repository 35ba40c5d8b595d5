"""Cluster specs: presets, composition, ranges and errors."""

import numpy as np
import pytest

from policy.sim.cluster import (
    MULTI_CLUSTER,
    MULTI_ISOLATED_CLUSTER,
    MULTI_LAB_CLUSTER,
    NODE_TYPES,
    NodeType,
    parse_cluster,
    scaled_cluster,
)
from policy.sim.errors import ConfigError, UnknownClassError


@pytest.mark.parametrize("spec,types", [
    ("standard:2", ["standard", "standard"]),
    ("standard:1,netfast:2", ["standard", "netfast", "netfast"]),
    ("small:1", ["small"]),
    ("tiny:2", ["tiny", "tiny"]),
    ("rn-small:1,rn-large:1", ["rn-small", "rn-large"]),
])
def test_explicit_specs(spec, types):
    nodes = parse_cluster(spec, np.random.default_rng(0))
    assert list(nodes.types) == types
    assert nodes.capacity.tolist() == [list(NODE_TYPES[t].capacity) for t in types]
    assert nodes.names[0] == f"{types[0]}-0"


def test_mixed_composition_is_proportional():
    nodes = parse_cluster("mixed:10", np.random.default_rng(0))
    counts = {t: nodes.types.count(t) for t in set(nodes.types)}
    assert counts == {"standard": 4, "compute": 2, "netfast": 2, "small": 2}


def test_size_range_is_drawn_per_episode():
    sizes = {parse_cluster("mixed:4-8", np.random.default_rng(s)).n for s in range(30)}
    assert sizes <= set(range(4, 9)) and len(sizes) > 2


@pytest.mark.parametrize("spec,error", [
    ("gpu:2", UnknownClassError), ("standard", ConfigError), ("standard:0", ConfigError),
    ("standard:x", ConfigError), ("standard:5-2", ConfigError),
])
def test_bad_specs(spec, error):
    with pytest.raises(error):
        parse_cluster(spec, np.random.default_rng(0))


def test_unknown_type_names_it():
    with pytest.raises(UnknownClassError, match="gpu"):
        parse_cluster("gpu:2", np.random.default_rng(0))


@pytest.mark.parametrize("cap,pods", [((0, 1, 1, 1), 10), ((1, -1, 1, 1), 10), ((1, 1, 1, 1), 0)])
def test_node_type_refuses_non_positive(cap, pods):
    with pytest.raises(ConfigError):
        NodeType("bad", cap, pods)


def test_a_mixed_cluster_with_tiny_nodes_holds_nodes_smaller_than_a_job():
    from policy.sim.jobs import JOB_CLASSES

    for seed in range(20):
        nodes = parse_cluster("mixed:2-8,tiny:1-4", np.random.default_rng(seed))
        tiny = [t for t in nodes.types if t == "tiny"]
        assert 1 <= len(tiny) <= 4 and 3 <= nodes.n <= 12
    assert JOB_CLASSES["cpu"].demand[0] / NODE_TYPES["tiny"].capacity[0] == 4.0


@pytest.mark.parametrize("spec,n,grown", [
    ("mixed:12", 1000, "mixed:1000"),
    ("small:12,standard:8,compute:6,netfast:6", 100, "small:37,standard:25,compute:19,netfast:19"),
    ("small:12,standard:8,compute:6,netfast:6", 1000, "small:375,standard:250,compute:188,netfast:187"),
    ("small:12,standard:8,compute:6,netfast:6", 32, "small:12,standard:8,compute:6,netfast:6"),
    ("standard:3,netfast:1", 2, "standard:2"),  # a type whose share rounds to no node is left out
])
def test_scaled_cluster_keeps_the_proportions_by_largest_remainder(spec, n, grown):
    assert scaled_cluster(spec, n) == grown
    assert parse_cluster(grown, np.random.default_rng(0)).n == n


@pytest.mark.parametrize("spec,n", [("mixed:8-32", 100), ("standard:2,standard:2", 8), ("standard:x", 8),
                                    ("standard:4", 0)])
def test_scaled_cluster_refuses_ranges_repeats_and_no_nodes(spec, n):
    with pytest.raises(ConfigError):
        scaled_cluster(spec, n)


def test_the_lab_s_frame_scales_the_multi_resource_nodes_cpu_and_the_lab_s_nodes_hold_the_daemonset_pod():
    rng = np.random.default_rng(0)
    plain, iso, lab = (parse_cluster(c, rng) for c in (MULTI_CLUSTER, MULTI_ISOLATED_CLUSTER, MULTI_LAB_CLUSTER))
    # results/lab/multi-resource-2026-12-07/nodes.csv: 100/200/200/400 m, memory and links as described
    assert iso.capacity[:, 0].tolist() == pytest.approx([0.1, 0.2, 0.2, 0.4])
    assert lab.capacity.tolist() == iso.capacity.tolist()
    assert iso.capacity[:, 1:].tolist() == plain.capacity[:, 1:].tolist()
    assert plain.reserved is None and iso.reserved is None and plain.daemon_pods is None
    # every decision row of that run shows an empty job node at 20 m, 48 Mi, one pod
    assert lab.reserved.tolist() == [[0.02, 48 / 1024]] * 4 and lab.daemon_pods.tolist() == [1.0] * 4
    assert [t.split("-")[1] for t in lab.types] == ["lab"] * 4


@pytest.mark.parametrize("reserved,daemons", [((0.6, 0.0), 1), ((-0.1, 0.0), 1), ((0.1, 0.0), 110), ((0.0,), 0)])
def test_node_type_refuses_reserved_requests_beyond_it(reserved, daemons):
    with pytest.raises(ConfigError, match="reserved"):
        NodeType("bad", (0.5, 1.0, 1.0, 1.0), 110, reserved=reserved, daemon_pods=daemons)
