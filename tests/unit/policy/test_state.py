import numpy as np
import pytest

from policy.state import ClusterSnapshot, PodView, SnapshotError
from tests.unit.policy.helpers import snapshot


def test_capacity_must_be_positive_and_names_the_node():
    with pytest.raises(SnapshotError, match="n1.*capacity must be > 0"):
        snapshot([[4, 16, 125, 200], [0, 16, 125, 200]])


@pytest.mark.parametrize("field,value", [("requested", np.zeros((2, 3))), ("usage", np.zeros((1, 4)))])
def test_shapes_are_checked(field, value):
    kwargs = {field: value}
    with pytest.raises(SnapshotError, match=field):
        snapshot([[4, 16, 125, 200], [4, 16, 125, 200]], **kwargs)


@pytest.mark.parametrize("requests,demand", [([1], [1, 1, 0, 0]), ([1, 1], [1, 1, 0]), ([-1, 1], [0, 0, 0, 0]),
                                             ([1, 1], [0, np.nan, 0, 0]), ([np.inf, 1], [0, 0, 0, 0]),
                                             ([1, np.nan], [0, 0, 0, 0]), ([1, 1], [0, 0, -np.inf, 0])])
def test_pod_view_rejects_bad_values(requests, demand):
    with pytest.raises(SnapshotError):
        PodView(requests=requests, demand=demand)


def test_subset_keeps_rows_together():
    snap = snapshot([[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]], pods=[0, 1, 2])
    sub = snap.subset(np.array([2, 0]))
    assert sub.names == ("n2", "n0")
    assert sub.capacity[:, 0].tolist() == [3, 1]
    assert sub.pods.tolist() == [2, 0]


def test_empty_snapshot():
    assert ClusterSnapshot.empty().n_nodes == 0


def test_trusted_constructor_gives_the_same_record():
    checked = snapshot([[4, 16, 125, 200], [8, 32, 125, 200]], pods=[1, 2])
    fast = ClusterSnapshot.trusted(**{name: getattr(checked, name) for name in (
        "names", "capacity", "requested", "usage", "usage_age", "assumed", "pods", "max_pods", "ready", "now")})
    for name in ("capacity", "requested", "usage", "usage_age", "assumed", "pods", "max_pods", "ready"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(checked, name))
    assert fast.names == checked.names and fast.n_nodes == 2
