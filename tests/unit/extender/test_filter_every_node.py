"""A filter naming every cached node once is answered from the whole view's snapshot, without gathering the
candidates' rows: the reply (FailedNodes, their order, the passing names) is the one the candidates' own
snapshot gives, for every hot-filter mode, on random clusters and node orders."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from extender.decide import filter_reasons
from extender.runtime import Runtime, load_policy
from extender.settings import build_settings
from extender.telemetry import Telemetry
from extender.wire import ExtenderArgs
from kube.cache import ClusterCache, NodeUsage, PodRecord
from kube.objects import NodeInfo
from policy.served import HOT_FILTERS

NOW = 50_000.0
POD = {"metadata": {"name": "p", "namespace": "ns", "uid": "u-p",
                    "annotations": {"drsched.io/profile": "cpu=1,mem=2,net=100,disk=20"}},
       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}}
NODE = st.tuples(st.sampled_from((2.0, 4.0, 8.0)),           # cpu (memory 4x)
                 st.booleans(),                              # ready
                 st.integers(0, 3),                          # pods bound (max 3)
                 st.floats(0.0, 1.2),                        # usage, fraction of capacity
                 st.sampled_from((None, 1.0, 30.0, 500.0)))  # sample age (None: no sample)


def runtime(nodes, mode: str) -> Runtime:
    settings_ = build_settings(None, policy="demand-aware", hot_filter=mode, log_level="WARNING")
    cache = ClusterCache(clock=lambda: NOW)
    for i, (cpu, ready, pods, use, age) in enumerate(nodes):
        name = f"n{i}"
        cache.upsert_node(NodeInfo(name=name, capacity=(cpu, 4 * cpu, 1000.0, 500.0), max_pods=3.0, ready=ready))
        for k in range(pods):
            cache.upsert_pod(PodRecord(namespace="ns", name=f"{name}-{k}", uid=f"{name}-{k}", node=name,
                                       requests=np.array([cpu / 4, cpu / 2]), demand=np.zeros(4)))
        if age is not None:
            cache.apply_usage({name: NodeUsage(cpu=use * cpu, mem=use * 4 * cpu, net=use * 900, disk=0.0,
                                               timestamp=NOW - age)})
    telemetry = Telemetry()
    return Runtime(settings=settings_, cache=cache, telemetry=telemetry,
                   policy=load_policy(settings_, telemetry)[0])


def expected(rt: Runtime, names: list[str]) -> dict:
    """The reply from the candidates' own snapshot, in request order (the path every other request takes)."""
    view = rt.cache.view()
    idx = view.lookup(names)
    reasons = filter_reasons(view.snapshot(NOW, idx, tuple(names)), rt.pod_view(POD)[0], rt.thresholds,
                             rt.settings.max_usage_age_s)
    failed = {names[i]: r for i, r in reasons.items()}
    return {"Nodes": None, "NodeNames": [n for n in names if n not in failed], "FailedNodes": failed,
            "FailedAndUnresolvableNodes": {}, "Error": ""}


@settings(max_examples=200, deadline=None)
@given(nodes=st.lists(NODE, min_size=1, max_size=12), mode=st.sampled_from(HOT_FILTERS), seed=st.integers(0, 99))
def test_every_node_once_gets_the_candidates_own_answer(nodes, mode, seed):
    rt = runtime(nodes, mode)
    names = [f"n{i}" for i in np.random.default_rng(seed).permutation(len(nodes))]
    assert rt._every_node(ExtenderArgs(Pod=POD, NodeNames=names), rt.cache.view()) is not None
    with mock.patch("extender.runtime.time.time", return_value=NOW):
        got = rt.filter(ExtenderArgs(Pod=POD, NodeNames=names))
    want = expected(rt, names)
    assert got == want
    assert list(got["FailedNodes"]) == list(want["FailedNodes"])  # the same order too


def test_other_name_lists_take_the_candidates_path():
    rt = runtime([(4.0, True, 0, 0.1, 1.0)] * 3, "prefer-cool")
    view = rt.cache.view()
    for names in (["n0", "n1"], ["n0", "n1", "n1"], ["n0", "n1", "ghost"], []):
        assert rt._every_node(ExtenderArgs(Pod=POD, NodeNames=names), view) is None, names
    assert rt._every_node(ExtenderArgs(Pod=POD, NodeNames=["n2", "n0", "n1"]), view) is not None
