"""Cluster specs: presets, composition, ranges and errors."""

import numpy as np
import pytest

from policy.sim.cluster import NODE_TYPES, NodeType, parse_cluster, scaled_cluster
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
