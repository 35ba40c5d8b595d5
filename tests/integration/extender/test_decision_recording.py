"""The decision log, exploration, the canary and /debug/shadow through the app (TestClient, static cluster)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from fastapi.testclient import TestClient

from extender.debug_routes import create_debug_app
from extender.selection import PodSelector
from extender.service import create_app
from extender.shadow import ShadowRecorder
from kube.cache import PodRecord
from policy.decisionlog import read_log

from .payloads import NODE_NAMES, V1_POD, args_names, args_nodes, static_settings, v1_node


def pod_in(namespace: str) -> dict:
    pod = copy.deepcopy(V1_POD)
    pod["metadata"]["namespace"] = namespace
    return pod


def test_each_prioritize_is_one_serve_row_with_the_scores_answered(tmp_path):
    with TestClient(create_app(static_settings(decision_log_dir=tmp_path))) as client:
        replies = [client.post("/prioritize", json=args_names(NODE_NAMES + ["ghost"])).json() for _ in range(2)]
    log = read_log(tmp_path)  # the lifespan's end flushed it
    assert len(log.decisions) == 2 and not log.torn
    row, reply = log.decisions[0], replies[0]
    assert row["mode"] == "serve" and row["nodes"] == NODE_NAMES + ["ghost"]
    assert row["scores"] == [h["Score"] for h in reply] and row["raw"][-1] is None  # ghost: unknown, no value
    assert row["chosen"] == max(reply, key=lambda h: h["Score"])["Host"] and row["propensity"] == 1.0
    assert (row["namespace"], row["name"], row["uid"]) == ("default", V1_POD["metadata"]["name"],
                                                           V1_POD["metadata"]["uid"])
    assert row["demand_source"] == "annotation" and row["explored"] is None
    assert row["workload"] == "default/Deployment/trainer"  # the profile's key: the ReplicaSet's hash cut


def test_exploration_serves_a_unique_best_drawn_among_near_ties_and_logs_its_propensity(tmp_path):
    settings = static_settings(decision_log_dir=tmp_path, explore=True, explore_margin=10)
    with TestClient(create_app(settings)) as client:
        reply = client.post("/prioritize", json=args_names()).json()
        metrics = client.get("/metrics").text
    row = read_log(tmp_path).decisions[0]
    positive = [h["Host"] for h in reply if h["Score"] > 0]
    top = [h["Host"] for h in reply if h["Score"] == 10]
    assert len(positive) >= 2 and top == [row["chosen"]]
    assert sorted(row["explored"]) == sorted(positive) and row["propensity"] == pytest.approx(1 / len(positive))
    assert "drsched_extender_explored_total 1.0" in metrics


def test_the_canary_answers_neutrally_outside_its_selector_and_decides_inside(tmp_path):
    settings = static_settings(canary_namespaces="team-a", decision_log_dir=tmp_path)
    with TestClient(create_app(settings)) as client:
        outside, inside = pod_in("default"), pod_in("team-a")
        scores_out = [h["Score"] for h in client.post("/prioritize", json=args_names(pod=outside)).json()]
        scores_in = [h["Score"] for h in client.post("/prioritize", json=args_names(pod=inside)).json()]
        filtered_out = client.post("/filter", json=args_names(NODE_NAMES + ["ghost"], pod=outside)).json()
        filtered_in = client.post("/filter", json=args_names(pod=inside)).json()
        nodes = [v1_node("node-b"), v1_node("tiny", cpu="500m")]
        nodes_out = client.post("/filter", json=args_nodes(nodes, pod=outside)).json()
        metrics = client.get("/metrics").text
    assert scores_out == [0] * len(NODE_NAMES) and len(set(scores_in)) > 1
    assert filtered_out["NodeNames"] == NODE_NAMES + ["ghost"] and filtered_out["FailedNodes"] == {}
    assert filtered_in["FailedNodes"]  # inside the canary drsched's filter applies (node-a hot, node-e not ready)
    assert [n["metadata"]["name"] for n in nodes_out["Nodes"]["items"]] == ["node-b", "tiny"]
    assert 'drsched_extender_canary_neutral_total{verb="prioritize"} 1.0' in metrics
    assert 'drsched_extender_canary_neutral_total{verb="filter"} 2.0' in metrics
    assert [d["namespace"] for d in read_log(tmp_path).decisions] == ["team-a"]  # neutral answers are not decisions


def test_a_static_clusters_labels_let_explain_try_the_canary_and_a_node_selector_offline():
    # examples/static-cluster.yaml: batch-7 is labelled drsched=on, web-1 is not; node-b in zone-a, node-c zone-b
    with TestClient(create_app(static_settings(canary_selector="drsched=on"))) as client:
        debug = TestClient(create_debug_app(client.app))
        labelled = debug.get("/debug/explain", params={"namespace": "jobs", "name": "batch-7"}).json()
        other = debug.get("/debug/explain", params={"namespace": "default", "name": "web-1"}).json()
        pod = copy.deepcopy(V1_POD)
        pod["metadata"]["labels"] = {"drsched": "on"}
        pod["spec"]["nodeSelector"] = {"topology.kubernetes.io/zone": "zone-b"}
        posted = debug.post("/debug/explain", json=args_names(pod=pod)).json()
        plain = debug.post("/debug/explain", json=args_names()).json()
    assert (labelled["canary"], other["canary"]) == (True, False)
    assert (posted["canary"], plain["canary"]) == (True, False)  # a request's pod carries its own labels
    assert {n["name"]: n["node_selector"] for n in posted["nodes"]} == {
        "node-a": False, "node-b": False, "node-c": True, "node-d": False, "node-e": False}
    assert {n["node_selector"] for n in plain["nodes"]} == {None}  # no nodeSelector, no affinity: nothing to judge


def test_debug_shadow_says_off_and_summarises_when_on():
    app = create_app(static_settings())
    with TestClient(app) as client:
        debug = TestClient(create_debug_app(app))
        assert debug.get("/debug/shadow").json() == {"enabled": False, "decision_log": None}
        rt = app.state.runtime
        # a static cluster has no watch; the recorder is fed the binding a watch would see
        rt.recording.shadow = shadow = ShadowRecorder(
            cache=rt.cache, policy=rt.policy, telemetry=rt.telemetry, selector=PodSelector.of(),
            thresholds=rt.thresholds, max_usage_age=rt.settings.max_usage_age_s)
        pod = copy.deepcopy(V1_POD)
        pod["spec"]["nodeName"] = "node-a"  # the hot node
        pending = PodRecord(namespace="default", name=pod["metadata"]["name"], uid="u", node=None,
                            requests=np.array([1.0, 2.0]), demand=np.array([1.0, 2.0, 300.0, 20.0]))
        shadow.on_binding(pod, pending)
        body = debug.get("/debug/shadow").json()
        metrics = client.get("/metrics").text
    assert body["enabled"] and body["bindings"]["recorded"] == 1 and body["compared"] == 1
    assert body["recent"][0]["actual"] == "node-a" and body["recent"][0]["chosen"] != "node-a"
    assert body["agreement_rate"] == 0.0 and body["mean_predicted_gain"] >= 0
    assert 'drsched_extender_shadow_decisions_total{result="differ"} 1.0' in metrics



def test_a_log_directory_that_cannot_be_written_refuses_to_start(tmp_path):
    from kube.errors import ConfigError

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(ConfigError, match="decision_log_dir .*a-file.*: cannot write"):
        with TestClient(create_app(static_settings(decision_log_dir=blocker / "log"))):
            pass


def test_decision_log_nodes_keeps_the_best_nodes_of_each_row(tmp_path):
    with TestClient(create_app(static_settings(decision_log_dir=tmp_path, decision_log_nodes=2))) as client:
        reply = client.post("/prioritize", json=args_names()).json()
    row = read_log(tmp_path).decisions[0]
    best = sorted(reply, key=lambda h: -h["Score"])[:2]
    assert row["nodes_total"] == len(NODE_NAMES) and len(row["nodes"]) == 2 and row["chosen"] in row["nodes"]
    assert sorted(row["scores"]) == sorted(h["Score"] for h in best)


def test_a_filter_that_leaves_at_most_one_node_is_logged_so_no_prioritize_is_explained(tmp_path):
    with TestClient(create_app(static_settings(decision_log_dir=tmp_path))) as client:
        many = client.post("/filter", json=args_names(NODE_NAMES)).json()
        one = client.post("/filter", json=args_names(["node-a", "node-e", "node-b", "ghost"])).json()
    assert len(many["NodeNames"]) > 1 and one["NodeNames"] == ["node-b"]
    log = read_log(tmp_path)
    assert not log.decisions and len(log.filters) == 1  # only the filter kube-scheduler would not follow up
    row = log.filters[0]
    assert (row["uid"], row["passed"], row["nodes_total"]) == (V1_POD["metadata"]["uid"], 1, 4)


def test_a_served_row_evaluates_any_policy_offline_and_one_that_agrees_gets_the_observed_jct(tmp_path):
    """The extender's own log, not a hand-built row: its kept inputs rebuild the decision for the contention
    model, and a policy choosing what drsched chose is credited the outcome exactly."""
    import json

    from policy.baselines import make_scorer
    from policy.decisionlog import outcome_row
    from policy.offline import model_based

    with TestClient(create_app(static_settings(decision_log_dir=tmp_path))) as client:
        client.post("/prioritize", json=args_names())
    row = read_log(tmp_path).decisions[0]
    outcome = outcome_row(ts=row["ts"] + 40, replica="r", pod=(row["namespace"], row["name"], row["uid"]),
                          node=row["chosen"], phase="Succeeded", created=0.0, started=2.0, finished=32.0)
    with (tmp_path / "decisions-outcomes.jsonl").open("w") as f:
        f.write(json.dumps(outcome) + "\n")
    pairs = read_log(tmp_path).joined()
    assert len(pairs) == 1 and pairs[0][1] is not None
    agreed = set()
    for rule in ("lookahead", "default-k8s", "worst-fit", "random"):
        e = model_based(pairs, make_scorer(rule, seed=0), draws=20)
        assert e.n == 1 and sum(e.skipped.values()) == 0 and e.observed == 32.0
        if e.agreed:
            agreed.add(rule)
            assert e.value == 32.0
        else:  # another node of this static cluster: the model's ratio of the two, applied to the 30 s run
            assert e.value > 2.0
    assert 0 < len(agreed) < 4, agreed  # both branches taken
