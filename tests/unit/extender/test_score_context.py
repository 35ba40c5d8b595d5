"""Prioritize encodes the whole cached cluster, as training does, then takes the candidates' rows."""

import numpy as np

from extender.decide import heuristic_policy, score
from policy.baselines import make_scorer
from policy.features import encode
from policy.state import ClusterSnapshot, PodView


def _cluster(n=6):
    rng = np.random.default_rng(0)
    cap = np.tile([4.0, 16.0, 125.0, 200.0], (n, 1)) * np.array([[1], [1], [2], [4], [1], [2]])[:n]
    return ClusterSnapshot(names=tuple(f"n{i}" for i in range(n)), capacity=cap, requested=cap[:, :2] * 0.2,
                           usage=cap * rng.random((n, 4)) * 0.5, usage_age=np.ones(n), assumed=np.zeros((n, 4)),
                           pods=np.ones(n), max_pods=np.full(n, 110.0), ready=np.ones(n, bool))


def test_candidate_rows_match_the_full_cluster_encoding():
    full = _cluster()
    pod = PodView(requests=[0.5, 1], demand=[1, 1, 20, 5], demand_source="learned")
    rows = np.array([4, 1, 3])
    cand = full.subset(rows)
    policy = heuristic_policy(make_scorer("demand-aware"))
    scored = score(cand, pod, policy, max_usage_age=60, context=full, rows=rows)
    reference = encode(full, pod)
    np.testing.assert_array_equal(scored.enc.nodes, reference.nodes[rows])
    np.testing.assert_array_equal(scored.enc.cluster, reference.cluster)
    # Encoding the candidates alone would have shifted the cluster-relative columns.
    alone = score(cand, pod, policy, max_usage_age=60)
    assert not np.array_equal(alone.enc.cluster, reference.cluster)
    assert scored.scores.shape == (3,) and scored.scores.max() == 10


def test_usage_sampled_before_the_node_is_listed_is_kept():
    from kube.cache import ClusterCache, NodeUsage
    from kube.objects import NodeInfo

    cache = ClusterCache(clock=lambda: 100.0)
    assert cache.apply_usage({"late": NodeUsage(cpu=1.5, mem=2.0, net=3.0, disk=4.0, timestamp=99.0)}) == 0
    cache.upsert_node(NodeInfo(name="late", capacity=(4.0, 16.0, 125.0, 200.0), max_pods=110, ready=True))
    snap = cache.view().snapshot(100.0)
    assert snap.usage[0].tolist() == [1.5, 2.0, 3.0, 4.0] and snap.usage_age[0] == 1.0
