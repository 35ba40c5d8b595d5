"""The imbalance formula and the run summary."""

import numpy as np
import pytest

from policy.sim.metrics import imbalance, placement_counts

CAP = np.array([[4.0, 16.0, 100.0, 100.0]] * 2)


@pytest.mark.parametrize("usage,expected", [
    ([[0, 0, 0, 0], [0, 0, 0, 0]], 0.0),
    ([[2, 8, 50, 50], [2, 8, 50, 50]], 0.0),
    ([[4, 0, 0, 0], [0, 0, 0, 0]], 0.5 / 4),        # cpu fractions 1 and 0: std 0.5; other resources 0
    ([[4, 16, 100, 100], [0, 0, 0, 0]], 0.5),
    ([[1, 8, 0, 0], [3, 8, 0, 0]], 0.25 / 4),       # cpu 0.25 vs 0.75: std 0.25
])
def test_imbalance(usage, expected):
    assert imbalance(np.array(usage, dtype=float), CAP) == pytest.approx(expected)


def test_imbalance_of_one_node_is_zero():
    assert imbalance(np.array([[4.0, 0, 0, 0]]), CAP[:1]) == 0.0


@pytest.mark.parametrize("placements,kinds,expected", [
    ((), ("cpu",), {}),
    ((("cpu", "small"), ("io", "small"), ("cpu", "small"), ("cpu", "compute")), ("cpu",), {"small": 2, "compute": 1}),
    ((("cpu", "a"), ("train", "b"), ("net", "b")), ("cpu", "train"), {"a": 1, "b": 1}),
    ((("io", "a"),), ("cpu", "train"), {}),
])
def test_placement_counts(placements, kinds, expected):
    assert placement_counts(placements, kinds) == expected


def test_a_run_records_every_placement_with_its_node_type():
    from policy.baselines import make_scorer
    from policy.sim.cluster import LAB_CLUSTER
    from policy.sim.config import SimConfig
    from policy.sim.episode import run_episode

    cfg = SimConfig(cluster=LAB_CLUSTER, workload="lab-flat", profile_error=0.0, load=0.65, n_jobs=12)
    result = run_episode(cfg, 5, make_scorer("default-k8s"))
    assert len(result.placements) == result.decisions == 12
    assert {t for _, t in result.placements} <= {"rn-small", "rn-medium", "rn-medium-mem", "rn-large"}
    assert sorted(k for k, _ in result.placements) == sorted(result.kinds)
