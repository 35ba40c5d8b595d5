"""The app through FastAPI's TestClient: both payload modes, casing, bad input, fallback, debug, metrics."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fastapi.testclient import TestClient

from extender.service import create_app
from extender.settings import build_settings, get_settings
from policy.model import N_INPUTS, save_model

from .payloads import EXAMPLE, NODE_NAMES, V1_POD, args_names, args_nodes, static_settings, v1_node


def test_filter_names_mode(client):
    r = client.post("/filter", json=args_names(NODE_NAMES + ["ghost"]))
    assert r.status_code == 200
    body = r.json()
    assert list(body) == ["Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"]
    assert body["Nodes"] is None and body["Error"] == ""
    assert body["NodeNames"] == ["node-b", "node-c", "node-d"]
    assert body["FailedNodes"]["node-a"].startswith("hot node: cpu")
    assert body["FailedNodes"]["node-e"] == "node not ready or unschedulable"
    assert body["FailedAndUnresolvableNodes"] == {"ghost": "unknown node"}


def test_filter_nodes_mode_returns_nodes(client):
    nodes = [v1_node("node-b"), v1_node("fresh-1", cpu="500m"), v1_node("fresh-2", ready="False"),
             v1_node("fresh-3", cpu="16")]
    r = client.post("/filter", json=args_nodes(nodes))
    body = r.json()
    assert r.status_code == 200 and body["NodeNames"] is None
    assert [n["metadata"]["name"] for n in body["Nodes"]["items"]] == ["node-b", "fresh-3"]
    assert body["Nodes"]["items"][0] == nodes[0], "passing nodes go back unchanged"
    assert body["FailedNodes"]["fresh-1"].startswith("Insufficient cpu")
    assert "fresh-2" in body["FailedNodes"]


def test_nodes_mode_body_orjson_refuses_gets_the_parsing_paths_answer(client):
    # 1e999 in a field nobody reads: stdlib JSON (the pydantic path) takes it as inf, orjson refuses it;
    # the fast path keeps nodes as bytes, so it must notice and hand the body over
    text = json.dumps(args_nodes([v1_node("node-b"), v1_node("fresh-3", cpu="16")]))
    body = text.replace('"taints": []', '"taints": [], "x": 1e999', 1).encode()
    for verb in ("filter", "prioritize"):
        r = client.post(f"/{verb}", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 200, r.text
        names = [n["metadata"]["name"] for n in r.json()["Nodes"]["items"]] if verb == "filter" \
            else [h["Host"] for h in r.json()]
        assert names == ["node-b", "fresh-3"]


@pytest.mark.parametrize("verb", ["filter", "prioritize"])
def test_a_bug_is_answered_as_an_error_and_counted(app, client, verb, monkeypatch):
    def broken(*_a, **_kw):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(app.state.runtime, "pod_view", broken)
    for payload in (args_names(), args_nodes([v1_node("node-b")])):
        r = client.post(f"/{verb}", json=payload)
        assert r.status_code in (200, 400) and r.json()["Error"] == "internal error: ZeroDivisionError: boom"
    text = client.get("/metrics").text
    assert f'drsched_extender_internal_errors_total{{verb="{verb}"}} 2.0' in text
    assert 'drsched_extender_internal_errors_total{verb="bind"} 0.0' in text


@pytest.mark.parametrize("casing", [str.lower, lambda k: k[0].lower() + k[1:], str.upper])
def test_any_casing_accepted(client, casing):
    payload = {casing(k): v for k, v in args_names().items()}
    assert client.post("/filter", json=payload).json()["NodeNames"] == ["node-b", "node-c", "node-d"]


def test_prioritize_integer_scores_in_request_order(client):
    names = ["node-d", "ghost", "node-a", "node-b", "node-c", "node-e"]
    r = client.post("/prioritize", json=args_names(names))
    assert r.status_code == 200
    body = r.json()
    assert [h["Host"] for h in body] == names
    assert all(isinstance(h["Score"], int) and 0 <= h["Score"] <= 10 for h in body)
    assert '"Score":' in r.text and ".0" not in r.text
    scores = {h["Host"]: h["Score"] for h in body}
    assert scores["ghost"] == 0 and scores["node-e"] == 0 and max(scores.values()) == 10


def test_prioritize_nodes_mode():
    # demand-aware, pinned: on two idle nodes it prefers the big one (lower utilisation after placing);
    # the shipped DQN is indifferent there (both placements run the pod at full speed).
    with TestClient(create_app(static_settings(policy="demand-aware"))) as client:
        r = client.post("/prioritize", json=args_nodes([v1_node("x1"), v1_node("x2", cpu="64", mem="256Gi")]))
    assert [h["Host"] for h in r.json()] == ["x1", "x2"] and r.json()[1]["Score"] == 10


def test_prioritize_without_profile_uses_requests(client):
    pod = json.loads(json.dumps(V1_POD))
    del pod["metadata"]["annotations"]
    assert client.post("/prioritize", json=args_names(pod=pod)).status_code == 200


@pytest.mark.parametrize("body, status, match", [
    (b'{"Pod":', 400, "JSON"),
    (b"[1, 2]", 400, "invalid request"),
    (b'{"Pod": {}, "NodeNames": "node-a"}', 400, "NodeNames"),
    (b'{"Pod": 3, "NodeNames": []}', 400, "Pod"),
    (b"", 400, ""),
])
def test_bad_input_is_400(client, body, status, match):
    verbs = ("/filter", "/prioritize") if b"NodeNames" in body else ("/filter", "/prioritize", "/preempt")
    for verb in verbs:
        r = client.post(verb, content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == status, (verb, r.text)
        assert match in r.json()["Error"]


def test_semantic_errors(client):
    r = client.post("/filter", json={"Pod": None, "Nodes": None, "NodeNames": ["node-a"]})
    assert r.status_code == 200 and r.json()["Error"] == "request has no Pod" and r.json()["NodeNames"] is None
    assert client.post("/prioritize", json={"Pod": None, "NodeNames": ["node-a"]}).status_code == 400
    pod = json.loads(json.dumps(V1_POD))
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "two"
    r = client.post("/filter", json=args_names(pod=pod))
    assert r.status_code == 200 and "cannot parse quantity 'two'" in r.json()["Error"]
    r = client.post("/prioritize", json={"Pod": V1_POD, "Nodes": None, "NodeNames": None})
    assert r.status_code == 400 and "neither NodeNames nor Nodes" in r.json()["Error"]


def test_bad_profile_annotation_falls_back_and_counts(client):
    pod = json.loads(json.dumps(V1_POD))
    pod["metadata"]["annotations"]["drsched.io/profile"] = "cpu=lots"
    assert client.post("/prioritize", json=args_names(pod=pod)).status_code == 200
    assert 'drsched_extender_fallback_total{reason="bad_profile_annotation"} 1.0' in client.get("/metrics").text


def test_oversized_body_is_400():
    with TestClient(create_app(static_settings(max_body_bytes=1000))) as c:
        r = c.post("/filter", json=args_names())
        assert r.status_code == 400 and "limit" in r.json()["Error"]

        def chunks():
            yield b'{"Pod": {}, "NodeNames": ["' + b"x" * 2000 + b'"]}'
        r = c.post("/filter", content=chunks(), headers={"Content-Type": "application/json"})
        assert r.status_code == 400


def test_bind_records_and_assumes(client, debug):
    r = client.post("/bind", json={"PodName": "batch-7", "PodNamespace": "jobs", "PodUID": "u-7", "Node": "node-b"})
    assert r.status_code == 200 and r.json() == {"Error": ""}
    again = client.post("/bind", json={"PodName": "batch-7", "PodNamespace": "jobs", "PodUID": "u-7",
                                       "Node": "node-b"})
    assert again.json() == {"Error": ""}, "idempotent"
    explain = debug.get("/debug/explain", params={"namespace": "jobs", "name": "batch-7"}).json()
    assert explain["last_decision"]["bound_to"] == "node-b"
    assert 'drsched_extender_binds_total{outcome="ok"} 2.0' in client.get("/metrics").text


def test_bind_missing_fields_is_400(client):
    assert client.post("/bind", json={"PodName": "p"}).status_code == 400


def test_preempt_returns_victims_as_uids(client):
    meta = {"Pod": V1_POD, "NodeNameToVictims": None,
            "NodeNameToMetaVictims": {"node-a": {"Pods": [{"UID": "u1"}], "NumPDBViolations": 1}}}
    assert client.post("/preempt", json=meta).json() == {"NodeNameToMetaVictims": meta["NodeNameToMetaVictims"]}
    full = {"Pod": V1_POD, "NodeNameToMetaVictims": None,
            "NodeNameToVictims": {"node-b": {"Pods": [{"metadata": {"name": "v", "uid": "u2"}}],
                                             "NumPDBViolations": 0}}}
    assert client.post("/preempt", json=full).json() == {
        "NodeNameToMetaVictims": {"node-b": {"Pods": [{"UID": "u2"}], "NumPDBViolations": 0}}}


def test_explain_get_and_post(client, debug):
    from policy.features import NODE_FEATURES

    r = debug.get("/debug/explain", params={"namespace": "jobs", "name": "batch-7"})
    body = r.json()
    assert r.status_code == 200 and body["pod"]["demand_source"] == "annotation"
    assert {n["name"] for n in body["nodes"]} == set(NODE_NAMES)
    assert list(body["nodes"][0]["features"]) == list(NODE_FEATURES)
    by = {n["name"]: n for n in body["nodes"]}
    assert by["node-d"]["stale"] and by["node-a"]["filter"].startswith("hot node")
    assert debug.get("/debug/explain", params={"name": "nope"}).status_code == 404
    r = debug.post("/debug/explain", json=args_names(["node-b", "ghost"]))
    assert r.json()["unknown_nodes"] == ["ghost"] and [n["name"] for n in r.json()["nodes"]] == ["node-b"]


def test_health_ready_metrics(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz").json()
    assert ready["status"] in ("ready", "degraded") and ready["nodes"] == 5
    client.post("/prioritize", json=args_names())
    text = client.get("/metrics").text
    for series in ("drsched_extender_request_seconds_bucket", 'drsched_extender_decisions_total{policy=',
                   "drsched_extender_cache_age_seconds", "drsched_extender_stale_nodes 2.0",
                   "drsched_extender_stale_nodes_scored_total 2.0", "drsched_extender_model_info{"):
        assert series in text, series
    # Which nodes are stale, by name: the per-node gauge and /readyz agree.
    stale = {line.split('"')[1] for line in text.splitlines()
             if line.startswith("drsched_extender_node_usage_stale{") and line.endswith(" 1.0")}
    assert "node-d" in stale and len(stale) == 2
    assert set(ready["stale_nodes"]) == stale and ready["stale_nodes"]["node-d"]["age_s"] > 0


def test_url_prefix():
    with TestClient(create_app(static_settings(url_prefix="/scheduler/"))) as c:
        assert c.post("/scheduler/filter", json=args_names()).status_code == 200
        assert c.post("/filter", json=args_names()).status_code == 404


def test_corrupt_model_falls_back_and_says_degraded(tmp_path):
    bad = tmp_path / "m.npz"
    bad.write_bytes(b"not a zip at all")
    bad.with_suffix(".json").write_text(json.dumps({"format": "drsched-qnet/1", "feature_version": 1}))
    with TestClient(create_app(static_settings(model_path=str(bad)))) as c:
        ready = c.get("/readyz")
        assert ready.status_code == 200 and ready.json()["status"] == "degraded"
        assert "truncated or not an .npz" in ready.json()["reason"] and ready.json()["policy"] == "demand-aware"
        assert c.post("/prioritize", json=args_names()).status_code == 200
        assert 'drsched_extender_fallback_total{reason="model_corrupt"} 1.0' in c.get("/metrics").text


def test_a_half_replaced_model_pair_falls_back_and_says_why(tmp_path):
    rng = np.random.default_rng(0)
    a, b = (save_model(tmp_path / name, [rng.normal(size=(N_INPUTS, 8)), rng.normal(size=(8, 1))],
                       [np.zeros(8), np.zeros(1)], meta={"version": name}) for name in ("a", "b"))
    a.write_bytes(b.read_bytes())  # b's weights under a's metadata: valid shapes, only the digest tells
    with TestClient(create_app(static_settings(model_path=str(a)))) as c:
        ready = c.get("/readyz").json()
        assert ready["status"] == "degraded" and ready["policy"] == "demand-aware"
        reason = ready["reason"]
        assert "weights do not match their metadata" in reason and str(a.with_suffix(".json")) in reason
        assert 'drsched_extender_fallback_total{reason="model_corrupt"} 1.0' in c.get("/metrics").text


def test_real_model_is_served(tmp_path):
    rng = np.random.default_rng(0)
    path = save_model(tmp_path / "m", [rng.normal(size=(N_INPUTS, 8)), rng.normal(size=(8, 1))],
                      [np.zeros(8), np.zeros(1)], meta={"version": "t-1"})
    with TestClient(create_app(static_settings(model_path=str(path)))) as c:
        ready = c.get("/readyz").json()
        assert ready == {**ready, "status": "ready", "policy": "model", "version": "t-1"}
        body = c.post("/prioritize", json=args_names()).json()
        assert max(h["Score"] for h in body) == 10


def test_dependency_override_of_settings():
    app = create_app()  # no settings given: the lifespan asks get_settings, which the test overrides
    app.dependency_overrides[get_settings] = lambda: build_settings(static_cluster=str(EXAMPLE), policy="koord")
    with TestClient(app) as c:
        assert c.get("/readyz").json()["policy"] == "koord"
        assert c.post("/filter", json=args_names()).status_code == 200


def test_unreachable_kubeconfig_is_a_config_error(tmp_path):
    from kube.errors import ConfigError

    (tmp_path / "kc").write_text("not: a kubeconfig\n")
    with pytest.raises(ConfigError, match="kubeconfig"):
        with TestClient(create_app(build_settings(kubeconfig=str(tmp_path / "kc")))):
            pass


def test_explain_gives_filtered_nodes_score_zero(client, debug):
    # node-a is hot in the example cluster: the filter rejects it, so it must not show a winning score.
    body = debug.post("/debug/explain", json=args_names(NODE_NAMES)).json()
    by_name = {n["name"]: n for n in body["nodes"]}
    hot = [n for n in body["nodes"] if n["filter"] != "passed"]
    assert hot and all(n["score"] == 0 for n in hot)
    assert max(n["score"] for n in body["nodes"] if n["filter"] == "passed") == 10
    assert by_name["node-a"]["filter"].startswith("hot node")


def test_bind_refused_or_broken_is_answered_in_its_error_field_and_counted(monkeypatch):
    """Bind's errors go through the same map as the other verbs: 200 with Error, binds_total and requests_total."""
    from extender.errors import BindError

    app = create_app(static_settings(bind_enabled=True, insecure_bind_without_client_ca=True))
    bind = {"PodName": "p", "PodNamespace": "default", "PodUID": "u", "Node": "node-b"}
    with TestClient(app) as client:
        rt = app.state.runtime
        monkeypatch.setattr(rt.binder, "bind", lambda **_: (_ for _ in ()).throw(BindError('pods "p" not found')))
        refused = client.post("/bind", json=bind)
        monkeypatch.setattr(rt.binder, "bind", lambda **_: 1 / 0)
        broken = client.post("/bind", json=bind)
        monkeypatch.undo()
        ok = client.post("/bind", json=bind)
        text = client.get("/metrics").text
    assert (refused.status_code, refused.json()) == (200, {"Error": 'pods "p" not found'})
    assert (broken.status_code, broken.json()) == \
        (200, {"Error": "internal error: ZeroDivisionError: division by zero"})
    assert (ok.status_code, ok.json()) == (200, {"Error": ""})
    for outcome in ("refused", "error", "ok"):
        assert f'drsched_extender_binds_total{{outcome="{outcome}"}} 1.0' in text
        assert f'drsched_extender_requests_total{{outcome="{outcome}",verb="bind"}} 1.0' in text
    assert 'drsched_extender_internal_errors_total{verb="bind"} 1.0' in text
