"""Table tests of ``policy.predicted``: the pod's slowdown on a node, hand-computed, and a node's DaemonSet pods
left out of the jobs it is split among."""

import numpy as np
import pytest

from policy.predicted import predicted_slowdowns, without_daemons
from policy.sharing import ORIGINAL, ContentionParams
from policy.state import PodView
from tests.unit.policy.helpers import snapshot

STD = (4.0, 16.0, 125.0, 200.0)
EQUAL_CPU = ContentionParams(cpu_share="equal")

CASES = [
    # (name, params, estimated usage, pods there, of which DaemonSet pods, pod demand, predicted slowdown)
    ("idle node", ORIGINAL, (0.0, 0.0, 0.0, 0.0), 0, 0, (2.0, 1.0, 0.0, 0.0), 1.0),
    ("cpu saturates: both at 0.8", ORIGINAL, (3.0, 1.0, 0.0, 0.0), 1, 0, (2.0, 1.0, 0.0, 0.0), 1.25),
    ("net saturates: both at 125/160", ORIGINAL, (1.0, 1.0, 100.0, 0.0), 1, 0, (0.5, 1.0, 60.0, 0.0), 1.28),
    ("memory thrash: x 0.8", ORIGINAL, (1.0, 12.0, 0.0, 0.0), 1, 0, (1.0, 8.0, 0.0, 0.0), 1.25),
    ("pod alone too big: node speed counts", ORIGINAL, (0.0, 0.0, 0.0, 0.0), 0, 0, (8.0, 1.0, 0.0, 0.0), 2.0),
    # equal cores: one job of 3 and the pod get 2 each, the pod wants 2
    ("equal cpu, one job", EQUAL_CPU, (3.0, 1.0, 0.0, 0.0), 1, 0, (2.0, 1.0, 0.0, 0.0), 1.0),
    # the same usage as two jobs of 1.5: three shares of 4/3, the pod at (4/3) / 2
    ("equal cpu, two jobs", EQUAL_CPU, (3.0, 1.0, 0.0, 0.0), 2, 0, (2.0, 1.0, 0.0, 0.0), 1.5),
    ("equal cpu, one job and a DaemonSet pod", EQUAL_CPU, (3.0, 1.0, 0.0, 0.0), 2, 1, (2.0, 1.0, 0.0, 0.0), 1.0),
    # only DaemonSet pods: their usage is one job (as usage on a node with no pods)
    ("equal cpu, the DaemonSet pod alone", EQUAL_CPU, (3.0, 1.0, 0.0, 0.0), 1, 1, (2.0, 1.0, 0.0, 0.0), 1.0),
]


@pytest.mark.parametrize("name,params,est,pods,daemons,demand,expected", CASES, ids=[c[0] for c in CASES])
def test_predicted_slowdown_hand_computed(name, params, est, pods, daemons, demand, expected):
    snap = snapshot([STD, STD], usage=[(0.0, 0.0, 0.0, 0.0), est], pods=[0, pods])
    pod = PodView(requests=[0.5, 0.5], demand=demand, demand_source="learned")
    got = predicted_slowdowns(snap, pod, [1, 0], params=params, max_usage_age=60, daemon_pods=np.array([0, daemons]))
    assert got == pytest.approx([expected, 1.0 if demand[0] <= STD[0] else expected])


def test_daemon_pods_never_make_a_node_s_jobs_negative_and_none_leave_the_snapshot_as_it_is():
    snap = snapshot([STD, STD], pods=[1, 3])
    assert without_daemons(snap, 0) is snap and without_daemons(snap, np.zeros(2)) is snap
    assert without_daemons(snap, 2).pods.tolist() == [0, 1]
    assert without_daemons(snap, np.array([0, 1])).pods.tolist() == [1, 2]


def test_slowdown_on_python_floats_is_the_numpy_split_bit_for_bit():
    """``slowdown_on`` splits a node's usage and requests among its jobs on Python floats; the shares, and so the
    slowdown, must be those numpy's division of the 4-vectors gives (random nodes, 0 to 70 jobs, usage with zeros)."""
    from policy.calibration import default_params
    from policy.predicted import _RATE_FLOOR, MAX_SPLIT, slowdown_on
    from policy.sharing import shared_rates

    rng = np.random.default_rng(8)
    for params in (ORIGINAL, default_params()):
        for _ in range(300):
            n = 3
            cap = rng.uniform(1, 64, (n, 4))
            est = cap * rng.uniform(0, 1.3, (n, 4)) * (rng.random((n, 4)) < 0.8)
            snap = snapshot(cap, requested=cap[:, :2] * rng.uniform(0, 1, (n, 2)),
                            pods=rng.integers(0, 70, n).astype(float))
            pod = PodView(requests=rng.uniform(0, 2, 2), demand=rng.uniform(0, 4, 4), demand_source="requests")
            for i in range(n):
                k = min(max(int(snap.pods[i]), 1), MAX_SPLIT) if np.any(est[i] > 0) else 0
                demands = [(est[i] / k).tolist()] * k + [pod.demand.tolist()] if k else [pod.demand.tolist()]
                requests = [(snap.requested[i] / k).tolist()] * k + [pod.requests.tolist()] if k else \
                    [pod.requests.tolist()]
                want = 1.0 / max(shared_rates(demands, requests, snap.capacity[i].tolist(), params)[-1], _RATE_FLOOR)
                assert slowdown_on(snap, pod, i, est, params) == want
