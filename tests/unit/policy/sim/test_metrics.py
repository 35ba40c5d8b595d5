"""The imbalance formula and the run summary."""

import numpy as np
import pytest

from policy.sim.metrics import imbalance

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
