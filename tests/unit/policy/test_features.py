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


def _by_name(names, values):
    return dict(zip(names, np.asarray(values).tolist(), strict=True))


def test_every_named_column_holds_what_its_name_says():
    # Two nodes with distinct values per resource, so a column read from the wrong place shows.
    cap = np.array([[4, 16, 100, 200], [12, 48, 300, 600]], dtype=float)
    usage = np.array([[1, 2, 10, 40], [3, 6, 30, 120]], dtype=float)
    assumed = np.array([[0.5, 1, 5, 10], [0, 0, 0, 0]], dtype=float)
    requested = np.array([[1, 4], [2, 8]], dtype=float)
    snap = snapshot(cap, requested=requested, usage=usage, age=[30, 90], assumed=assumed, pods=[11, 22],
                    max_pods=[110, 110])
    pod = PodView(requests=[0.5, 2], demand=[1, 3, 20, 30], demand_source="learned")
    enc = encode(snap, pod, max_usage_age=60)
    mean_cap = cap.mean(axis=0)
    est = np.array([usage[0] + assumed[0], [2, 8, 0, 0]])  # node 1 is stale: requests for cpu/mem, assumed else
    for i in range(2):
        row = _by_name(features.NODE_FEATURES, enc.nodes[i])
        for k, r in enumerate(("cpu", "mem", "net", "disk")):
            assert row[f"est_util_{r}"] == pytest.approx(est[i, k] / cap[i, k])
            assert row[f"after_util_{r}"] == pytest.approx((est[i, k] + pod.demand[k]) / cap[i, k])
            assert row[f"pod_share_{r}"] == pytest.approx(pod.demand[k] / cap[i, k])
            assert row[f"cap_rel_{r}"] == pytest.approx(np.log2(cap[i, k] / mean_cap[k]))
        for k, r in enumerate(("cpu", "mem")):
            assert row[f"req_frac_{r}"] == pytest.approx(requested[i, k] / cap[i, k])
            assert row[f"after_req_{r}"] == pytest.approx((requested[i, k] + pod.requests[k]) / cap[i, k])
        after = (est[i] + pod.demand) / cap[i]
        assert row["pods_frac"] == pytest.approx([11, 22][i] / 110)
        assert row["stale"] == [0, 1][i]
        assert row["usage_age"] == pytest.approx([0.5, 1.0][i])  # min(age / max_usage_age, 1)
        assert row["after_util_max"] == pytest.approx(after.max())
        assert row["overload_before"] == pytest.approx(np.maximum(est[i] / cap[i] - 1, 0).sum())
        assert row["overload_after"] == pytest.approx(np.maximum(after - 1, 0).sum())
    prow = _by_name(features.POD_FEATURES, enc.pod)
    for k, r in enumerate(("cpu", "mem", "net", "disk")):
        assert prow[f"pod_demand_{r}"] == pytest.approx(pod.demand[k] / mean_cap[k])
    assert prow["pod_req_cpu"] == pytest.approx(0.5 / mean_cap[0]) and prow["pod_req_mem"] == pytest.approx(2 / 32)
    assert prow["demand_known"] == 1
    crow = _by_name(features.CLUSTER_FEATURES, enc.cluster)
    util = est / cap
    for k, r in enumerate(("cpu", "mem", "net", "disk")):
        assert crow[f"mean_util_{r}"] == pytest.approx(util[:, k].mean(), rel=1e-6)
        assert crow[f"std_util_{r}"] == pytest.approx(util[:, k].std(), rel=1e-5)
    assert crow["feasible_frac"] == 1.0 and crow["log_nodes"] == pytest.approx(np.log10(3) / 4)


def test_demand_known_is_zero_for_a_pod_without_a_profile():
    enc = encode(snapshot([STD]), PodView.from_requests(1, 1))
    assert _by_name(features.POD_FEATURES, enc.pod)["demand_known"] == 0


def test_derived_columns_come_last_and_named_slices_cover_every_column():
    assert features.NODE_FEATURES[-3:] == ("after_util_max", "overload_before", "overload_after")
    covered = set()
    for sl in (features.EST_UTIL, features.AFTER_UTIL, features.REQ_FRAC, features.AFTER_REQ, features.POD_SHARE,
               features.CAP_REL):
        covered.update(range(sl.start, sl.stop))
    covered.update((features.PODS_FRAC, features.STALE, features.USAGE_AGE, features.AFTER_UTIL_MAX,
                    features.OVERLOAD_BEFORE, features.OVERLOAD_AFTER))
    assert covered == set(range(N_NODE))


def test_every_column_stays_inside_the_observation_bound():
    # Usage far past capacity on every resource: the overload sums are what could leave the box.
    snap = snapshot([STD, [0.5, 1, 1, 1]], usage=[[400, 1600, 1e4, 2e4], [1e3] * 4])
    enc = encode(snap, PodView(requests=[0, 0], demand=[1e3, 1e3, 1e3, 1e3]))
    rows = stack(enc)
    assert np.abs(rows).max() <= features.OBS_BOUND
    assert _by_name(features.NODE_FEATURES, enc.nodes[0])["overload_after"] == features.OBS_BOUND
