"""A logged decision rebuilds bitwise the encoding the served policy scored (issue #23's warm start needs it).

Each decision goes through the real prioritize / shadow path on a random cached cluster (some nodes without
a usage sample, some stale, some full or not ready, pods bound since the sample); ``score`` is wrapped only
to keep what the policy was given."""

import time
from types import SimpleNamespace

import numpy as np
import pytest

import extender.runtime as runtime_mod
from extender.decide import Thresholds, model_policy
from extender.recording import Recording
from extender.runtime import Runtime
from extender.settings import build_settings
from extender.telemetry import Telemetry
from extender.wire import ExtenderArgs
from kube.cache import ClusterCache, NodeUsage, PodRecord
from kube.objects import UNSCHEDULABLE_TAINT, NodeInfo
from policy.decisionlog import read_log
from policy.features import STALE, feasible_mask, mean_capacity
from policy.logged import encoding
from policy.model import SHIPPED_MODEL, load_model


def random_cache(rng: np.random.Generator, n: int, now: float) -> ClusterCache:
    cache = ClusterCache(assume_grace_s=0.0, clock=lambda: now)
    for i in range(n):
        cap = (float(rng.choice([2, 4, 8, 16, 64])), float(rng.choice([8, 16, 64, 256])) * rng.uniform(0.9, 1.1),
               float(rng.choice([1250, 125])), float(rng.choice([500, 200])))
        cache.upsert_node(NodeInfo(name=f"node-{i:03d}", capacity=cap, max_pods=float(rng.choice([3, 110])),
                                   ready=bool(rng.random() > 0.1)))
        for j in range(int(rng.integers(0, 4))):
            cache.upsert_pod(PodRecord(namespace="ns", name=f"b{i}-{j}", uid=f"b{i}-{j}", node=f"node-{i:03d}",
                                       requests=np.array([rng.uniform(0, cap[0] / 3), rng.uniform(0, cap[1] / 3)]),
                                       demand=rng.uniform(0, 1, 4) * np.array(cap) / 4, bound_at=now - 1.0,
                                       daemon=j == 0 and i % 3 == 0))  # a DaemonSet's pod on every third node
    samples = {}
    for i in range(n):
        if rng.random() < 0.85:  # the rest have no sample
            age = float(rng.choice([rng.uniform(0, 30), rng.uniform(61, 300)]))
            samples[f"node-{i:03d}"] = NodeUsage(*(rng.uniform(0, 1.2, 4) * 4).tolist(), timestamp=now - age)
    cache.apply_usage(samples)
    return cache


def pending(name: str) -> dict:
    return {"metadata": {"name": name, "namespace": "team", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "1500m", "memory": "3Gi"}}}]},
            "status": {"phase": "Pending"}}


def request(cache: ClusterCache, names: list[str], mode: str) -> ExtenderArgs:
    """A prioritize request for pod p over ``names``: by name (names mode), or as full Node objects."""
    if mode == "names":
        return ExtenderArgs(Pod=pending("p"), NodeNames=names)
    view = cache.view()
    items = [{"metadata": {"name": n}, "status": {
        "allocatable": {"cpu": str(view.capacity[view.index[n], 0]),
                        "memory": f"{view.capacity[view.index[n], 1]}Gi", "pods": "110"},
        "conditions": [{"type": "Ready", "status": "True"}]}} for n in names]
    return ExtenderArgs.model_validate({"Pod": pending("p"), "Nodes": {"items": items}})


def runtime(tmp_path, cache: ClusterCache, keep: int, keep_inputs: int = 32) -> Runtime:
    settings = build_settings(decision_log_dir=tmp_path, decision_log_nodes=keep, decision_log_flush_ms=10,
                              decision_log_input_nodes=keep_inputs)
    telemetry = Telemetry()
    policy = model_policy(load_model(SHIPPED_MODEL))
    rec = Recording(settings, cache=cache, policy=policy, telemetry=telemetry, thresholds=Thresholds())
    rec.start()
    return Runtime(settings=settings, cache=cache, telemetry=telemetry, policy=policy, recording=rec)


def capture(monkeypatch, module, name: str = "score") -> list:
    """What each call of ``module.<name>`` scored, with its ``enc`` and ``raw``: ``score``'s ``Scored``, or
    ``whole``'s (Encoded, raw values, fresh) -- the shadow encodes with ``whole``, it maps no 0-10 scores."""
    seen = []

    def wrapper(*args, **kwargs):
        out = real(*args, **kwargs)
        seen.append(SimpleNamespace(enc=out[0], raw=out[1]) if isinstance(out, tuple) else out)
        return out

    real = getattr(module, name)
    monkeypatch.setattr(module, name, wrapper)
    return seen


def assert_rebuilt(row, scored, names: list[str], model) -> None:
    """The row's rebuilt encoding is, bitwise, the scored one at the row's kept nodes that the cache knew."""
    dec = encoding(row)
    at = [names.index(n) for n in dec.names]
    described = [row["nodes"][i] for i in row["inputs"]["at"]]
    assert dec.names == tuple(n for n in described if n in names) and len(at) >= 3
    np.testing.assert_array_equal(dec.enc.nodes, scored.enc.nodes[at], strict=True)
    np.testing.assert_array_equal(dec.enc.mask, scored.enc.mask[at], strict=True)
    np.testing.assert_array_equal(dec.enc.pod, scored.enc.pod, strict=True)
    np.testing.assert_array_equal(dec.enc.cluster, scored.enc.cluster, strict=True)
    # and so the policy's values, to float32 rounding: BLAS sums a matrix product of fewer rows in another
    # order, so the same row's Q-value can differ in its last bit with the batch it is in
    np.testing.assert_allclose(model.q_values(dec.enc), scored.raw[at], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("seed,keep,mode", [(0, 0, "names"), (1, 4, "names"), (2, 0, "nodes"), (3, 4, "nodes")])
def test_a_served_decision_rebuilds_the_policy_s_encoding(tmp_path, monkeypatch, seed, keep, mode):
    rng = np.random.default_rng(seed)
    now = time.time()
    cache = random_cache(rng, 40, now)
    rt = runtime(tmp_path, cache, keep)  # decision_log_input_nodes 32 > the 26 nodes: inputs for every kept one
    seen = capture(monkeypatch, runtime_mod)
    names = [f"node-{i:03d}" for i in sorted(rng.choice(40, 25, replace=False).tolist())]
    rt.prioritize(request(cache, [*names, "ghost"] if mode == "names" else names, mode))  # ghost: not cached
    rt.recording.log.stop(timeout=60)  # a loaded machine can starve the writer past the 5 s default
    (row,) = read_log(tmp_path).decisions
    (scored,) = seen
    assert row["inputs"]["n_nodes"] == (40 if mode == "names" else 25)
    if keep:  # the best nodes, the chosen among them
        assert len(row["nodes"]) == keep
    else:  # every node, and the cases the encoder treats apart: infeasible, stale usage, no sample
        assert len(row["nodes"]) == len(names) + (mode == "names")
        dec = encoding(row)
        assert 0 < dec.enc.mask.sum() < len(names) and dec.enc.nodes[:, STALE].any()
        assert None in row["inputs"]["usage_age"]
    assert (row["inputs"]["capacity"][-1] is None) == (mode == "names" and keep == 0)  # ghost: unknown
    assert_rebuilt(row, scored, names, rt.policy.scorer.model)
    # each described node's DaemonSet pods, as the cache counts them, in both modes (Nodes mode takes the
    # request's capacities but the cache's pods, so their DaemonSet count too); null for a node the cache lacks
    view = cache.view()
    described = [row["nodes"][i] for i in row["inputs"]["at"]]
    counted = [int(view.daemon_pods[view.index[n]]) if n in view.index else None for n in described]
    assert row["inputs"]["daemon_pods"] == counted and (any(counted) or keep)


@pytest.mark.parametrize("mode", ["names", "nodes"])
def test_inputs_are_bounded_while_the_score_vector_keeps_every_node(tmp_path, monkeypatch, mode):
    """decision_log_input_nodes = 5: the row scores all 26 nodes, but describes only the best 5 by score and the
    chosen one (at most 6 of them), and those still rebuild bitwise."""
    rng = np.random.default_rng(11)
    cache = random_cache(rng, 40, time.time())
    rt = runtime(tmp_path, cache, keep=0, keep_inputs=5)
    seen = capture(monkeypatch, runtime_mod)
    names = [f"node-{i:03d}" for i in sorted(rng.choice(40, 26, replace=False).tolist())]
    rt.prioritize(request(cache, names, mode))
    rt.recording.log.stop(timeout=60)  # a loaded machine can starve the writer past the 5 s default
    (row,) = read_log(tmp_path).decisions
    (scored,) = seen
    at = row["inputs"]["at"]
    assert len(row["nodes"]) == 26 and 5 <= len(at) <= 6 and at == sorted(at)
    assert row["nodes"].index(row["chosen"]) in at
    best = sorted(range(26), key=lambda i: (-row["scores"][i], -(row["raw"][i] if row["raw"][i] is not None
                                                                else -np.inf)))[:5]
    assert set(best) <= set(at)
    assert all(len(row["inputs"][f]) == len(at) for f in ("capacity", "usage", "ready"))
    assert_rebuilt(row, scored, names, rt.policy.scorer.model)


def test_a_shadowed_binding_rebuilds_the_policy_s_encoding(tmp_path, monkeypatch):
    from extender.kube_index import IndexingWatcher
    from extender.pod_index import PodIndex

    rng = np.random.default_rng(7)
    now = time.time()
    cache = random_cache(rng, 30, now)
    settings = build_settings(shadow=True, decision_log_dir=tmp_path, decision_log_flush_ms=10, decision_log_nodes=5)
    telemetry = Telemetry()
    policy = model_policy(load_model(SHIPPED_MODEL))
    rec = Recording(settings, cache=cache, policy=policy, telemetry=telemetry, thresholds=Thresholds())
    watcher = IndexingWatcher(None, cache, settings, store=None, telemetry=telemetry,
                              index=PodIndex(selector={}, port=1), observer=rec.observe_pod)
    rec.start()
    seen = capture(monkeypatch, rec.shadow.rows, "whole")  # the shadow encodes through its row cache
    pod = {**pending("s"), "spec": {**pending("s")["spec"], "schedulerName": "default-scheduler"}}
    watcher._apply("pods", "ADDED", pod)
    watcher._apply("pods", "MODIFIED", {**pod, "spec": {**pod["spec"], "nodeName": "node-017"}})
    rec.log.stop(timeout=60)  # a loaded machine can starve the writer past the 5 s default
    (row,) = read_log(tmp_path).decisions
    (scored,) = seen
    assert row["mode"] == "shadow" and row["actual"] == "node-017" and "node-017" in row["nodes"]
    assert_rebuilt(row, scored, list(cache.view().names), policy.scorer.model)


@pytest.mark.parametrize("keep,outside", [(0, False), (4, False), (0, True)])
def test_a_decision_over_a_pool_logs_the_pools_figures_and_rebuilds(tmp_path, monkeypatch, keep, outside):
    """Tainted and cordoned nodes are outside the pod's pool: the row's cluster figures are the pool's (with a
    candidate outside it, the pool's and that node's), what the policy saw, so the row rebuilds bitwise."""
    rng = np.random.default_rng(5)
    now = time.time()
    cache = random_cache(rng, 40, now)
    view = cache.view()
    for i, taint in ((3, ("dedicated", "x", "NoSchedule")), (17, ("gpu", "", "NoExecute")), (30, UNSCHEDULABLE_TAINT)):
        r = view.index[f"node-{i:03d}"]
        cache.upsert_node(NodeInfo(name=f"node-{i:03d}", capacity=tuple(view.capacity[r].tolist()),
                                   max_pods=float(view.max_pods[r]), ready=bool(view.ready[r]), taints=(taint,)))
    rt = runtime(tmp_path, cache, keep)
    seen = capture(monkeypatch, runtime_mod)
    names = [f"node-{i:03d}" for i in range(40) if i not in (3, 17, 30)][::2] + (["node-017"] if outside else [])
    rt.prioritize(request(cache, names, "names"))
    rt.recording.log.stop(timeout=60)
    (row,) = read_log(tmp_path).decisions
    (scored,) = seen
    view = cache.view()
    over = np.array([n not in ("node-003", "node-017", "node-030") or (outside and n == "node-017")
                     for n in view.names])
    snap = view.snapshot(now, np.flatnonzero(over))
    inputs = row["inputs"]
    assert inputs["n_nodes"] == 37 + outside and inputs["mean_capacity"] == mean_capacity(snap).tolist()
    assert inputs["n_feasible"] == int(feasible_mask(snap, rt.pod_view(pending("p"))[0]).sum())
    assert_rebuilt(row, scored, names, rt.policy.scorer.model)
