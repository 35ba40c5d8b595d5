import numpy as np
import pytest

from policy import features
from policy.features import N_CLUSTER, N_NODE, N_POD, encode, estimated_usage, feasible_mask, stack
from policy.state import PodView
from tests.unit.policy.helpers import snapshot

STD = [4, 16, 125, 200]


def test_column_names_match_widths():
    enc = encode(snapshot([STD, STD]), PodView.from_requests(1, 1))
    assert enc.nodes.shape == (2, N_NODE) and enc.pod.shape == (N_POD,) and enc.cluster.shape == (N_CLUSTER,)
    assert stack(enc).shape == (2, N_NODE + N_POD + N_CLUSTER)


@pytest.mark.parametrize(
    "requested,pods,ready,expected",
    [
        ([[3.5, 0], [0, 0]], [0, 0], [True, True], [False, True]),   # cpu does not fit on n0
        ([[0, 15.5], [0, 0]], [0, 0], [True, True], [False, True]),  # memory does not fit on n0
        ([[3, 15], [0, 0]], [0, 0], [True, True], [True, True]),     # exactly full still fits
        ([[0, 0], [0, 0]], [110, 0], [True, True], [False, True]),   # no pod slot
        ([[0, 0], [0, 0]], [0, 0], [True, False], [True, False]),    # not ready
    ],
)
def test_feasible_mask(requested, pods, ready, expected):
    snap = snapshot([STD, STD], requested=requested, pods=pods, ready=ready)
    assert feasible_mask(snap, PodView.from_requests(1, 1)).tolist() == expected


def test_estimated_usage_adds_assumed_and_falls_back_to_requests_when_stale():
    snap = snapshot(
        [STD, STD, STD],
        requested=[[1, 2], [1, 2], [3, 1]],
        usage=[[2, 4, 10, 20], [2, 4, 10, 20], [np.nan] * 4],
        age=[5, 500, np.inf],
        assumed=[[0.5, 0, 5, 0], [0.5, 0, 5, 0], [0, 2, 0, 7]],
    )
    est = estimated_usage(snap, max_usage_age=60)
    assert est[0].tolist() == [2.5, 4, 15, 20]      # fresh: measured + assumed
    assert est[1].tolist() == [1, 2, 5, 0]           # stale: requests, net/disk from assumed only
    assert est[2].tolist() == [3, 2, 0, 7]           # missing: max(requests, assumed)


def test_node_rows_are_ratios_so_scaling_a_cluster_changes_nothing():
    pod = PodView(requests=[0.5, 1], demand=[2, 1, 60, 5], demand_source="learned")
    small = snapshot([STD, STD], requested=[[1, 2], [0, 0]], usage=[[2, 4, 10, 20], [1, 1, 1, 1]])
    big = snapshot([[8, 32, 250, 400]] * 2, requested=[[2, 4], [0, 0]], usage=[[4, 8, 20, 40], [2, 2, 2, 2]])
    pod_big = PodView(requests=[1, 2], demand=[4, 2, 120, 10], demand_source="learned")
    a, b = encode(small, pod), encode(big, pod_big)
    np.testing.assert_allclose(a.nodes, b.nodes, rtol=1e-6)
    np.testing.assert_allclose(a.pod, b.pod, rtol=1e-6)


def test_hand_computed_row():
    snap = snapshot([STD, [8, 32, 250, 400]], requested=[[1, 2], [0, 0]], usage=[[2, 4, 25, 50], [0, 0, 0, 0]],
                    age=[30, 0], pods=[11, 0])
    pod = PodView(requests=[0.5, 1], demand=[1, 2, 25, 0], demand_source="annotation")
    row = dict(zip(features.NODE_FEATURES, encode(snap, pod, max_usage_age=60).nodes[0].tolist(), strict=True))
    assert row["est_util_cpu"] == pytest.approx(0.5)
    assert row["after_util_net"] == pytest.approx(0.4)
    assert row["after_req_cpu"] == pytest.approx(0.375)
    assert row["pod_share_mem"] == pytest.approx(0.125)
    assert row["cap_rel_cpu"] == pytest.approx(np.log2(4 / 6))
    assert row["pods_frac"] == pytest.approx(0.1)
    assert row["stale"] == 0 and row["usage_age"] == pytest.approx(0.5)


def test_encoding_is_finite_for_extreme_inputs():
    snap = snapshot([[0.001, 0.001, 0.001, 0.001], [1e6, 1e6, 1e6, 1e6]], usage=[[1e9] * 4, [0] * 4])
    enc = encode(snap, PodView(requests=[0, 0], demand=[1e9, 0, 0, 0]))
    for part in (enc.nodes, enc.pod, enc.cluster):
        assert np.all(np.isfinite(part))
