"""Shadow mode on watch events: a binding by another scheduler is compared with drsched's choice on the
snapshot before the binding, recorded once across replicas, its outcome joined; nothing is changed."""

import time

import numpy as np
import pytest

from extender.decide import Thresholds, heuristic_policy
from extender.kube_index import IndexingWatcher
from extender.pod_index import PodIndex
from extender.recording import Recording
from extender.settings import build_settings
from extender.shadow import owner
from extender.telemetry import Telemetry
from kube.cache import ClusterCache, NodeUsage
from kube.objects import NodeInfo
from policy.baselines import make_scorer
from policy.decisionlog import read_log
from policy.logged import encoding
from policy.offline import predicted_on
from policy.predicted import predicted_slowdowns
from policy.sharing import ORIGINAL, ContentionParams


def kpod(name, node=None, *, scheduler="default-scheduler", namespace="team", phase="Pending", cpu="2", uid=None):
    pod = {"metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}",
                        "creationTimestamp": "2026-12-01T10:00:00Z", "labels": {"app": "x"}},
           "spec": {"schedulerName": scheduler, "containers": [
               {"name": "main", "env": [{"name": "SECRET", "value": "hunter2"}], "args": ["--token=hunter2"],
                "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]},
           "status": {"phase": phase}}
    if node:
        pod["spec"]["nodeName"] = node
    if phase == "Succeeded":
        pod["status"]["containerStatuses"] = [{"name": "main", "state": {"terminated": {
            "startedAt": "2026-12-01T10:00:05Z", "finishedAt": "2026-12-01T10:01:05Z", "exitCode": 0}}}]
    return pod


def cluster() -> ClusterCache:
    cache = ClusterCache(assume_grace_s=0.0)
    for name in ("cool", "hot"):
        cache.upsert_node(NodeInfo(name=name, capacity=(8.0, 32.0, 1000.0, 500.0), max_pods=110, ready=True))
    now = time.time()
    cache.apply_usage({"cool": NodeUsage(0.5, 2.0, 0.0, 0.0, now), "hot": NodeUsage(7.0, 2.0, 0.0, 0.0, now)})
    return cache


def recording(tmp_path, cache, **over):
    settings = build_settings(shadow=True, decision_log_dir=tmp_path, decision_log_flush_ms=10, policy="demand-aware",
                              **over)
    telemetry = Telemetry()
    rec = Recording(settings, cache=cache, policy=heuristic_policy(make_scorer("demand-aware")),
                    telemetry=telemetry, thresholds=Thresholds())
    watcher = IndexingWatcher(None, cache, settings, store=None, telemetry=telemetry,  # no API client: it binds
                              index=PodIndex(selector={}, port=1), observer=rec.observe_pod)  # and writes nothing
    rec.start()
    return rec, watcher


def test_a_binding_elsewhere_is_recorded_with_drsched_choice_slowdowns_and_its_outcome(tmp_path):
    cache = cluster()
    rec, watcher = recording(tmp_path, cache)
    rec.shadow.params = ORIGINAL  # the rule hand-computed below (the calibration's active set by default)
    watcher._apply("pods", "ADDED", kpod("p"))
    watcher._apply("pods", "MODIFIED", kpod("p", "hot"))
    assert cache.pod("team", "p").node == "hot"  # the binding itself is applied as without shadow mode
    summary = rec.summary()
    assert summary["bindings"]["recorded"] == 1 and summary["differ"] == 1 and summary["agreement_rate"] == 0.0
    last = summary["recent"][0]
    assert last["actual"] == "hot" and last["chosen"] == "cool" and not last["agree"]
    # 7 + 2 cores on 8: the pod runs at 8/9 -> slowdown 1.125; alone-fast on the cool node
    assert last["slowdown"] == pytest.approx({"hot": 1.125, "cool": 1.0}) and last["predicted_gain"] > 0.12
    watcher._apply("pods", "MODIFIED", kpod("p", "hot", phase="Succeeded"))
    assert rec.summary()["observed_mean_jct_s"] == {"agreed": {"pods": 0, "mean": None},
                                                    "differed": {"pods": 1, "mean": 65.0}}
    rec.log.stop(timeout=60)  # a loaded machine can starve the writer past the 5 s default
    log = read_log(tmp_path)
    (decision, outcome), = log.joined()
    assert decision["mode"] == "shadow" and decision["actual"] == "hot" and decision["chosen"] == "cool"
    assert decision["nodes"] == ["cool", "hot"] and decision["scores"] == [10, 0] and decision["raw"][0] is not None
    assert decision["model_version"] == "heuristic:demand-aware" and decision["scheduler"] == "default-scheduler"
    assert decision["workload"] is None  # a standalone pod belongs to no workload
    assert outcome["phase"] == "Succeeded" and outcome["node"] == "hot" and outcome["jct_s"] == 65.0
    text = "".join(p.read_text() for p in tmp_path.iterdir())
    assert "hunter2" not in text and "SECRET" not in text  # names and resource figures only


def test_agreement_when_the_other_scheduler_picks_drsched_node(tmp_path):
    rec, watcher = recording(tmp_path, cluster())
    watcher._apply("pods", "ADDED", kpod("p"))
    watcher._apply("pods", "MODIFIED", kpod("p", "cool"))
    s = rec.summary()
    assert s["agree"] == 1 and s["agreement_rate"] == 1.0 and s["mean_predicted_gain"] == 0.0
    assert rec.telemetry.metrics.shadow_agreement.labels(result="agree")._value.get() == 1


@pytest.mark.parametrize(("events", "why"), [
    ([("ADDED", kpod("p", scheduler="drsched")), ("MODIFIED", kpod("p", "hot", scheduler="drsched"))],
     "drsched's own pods are not shadowed"),
    ([("ADDED", kpod("p", namespace="other")), ("MODIFIED", kpod("p", "hot", namespace="other"))],
     "outside shadow_namespaces"),
    ([("ADDED", kpod("p", "hot"))], "never seen pending: bound before the watch saw it"),
    ([("ADDED", kpod("p")), ("MODIFIED", kpod("p")), ("DELETED", kpod("p"))], "never bound"),
])
def test_only_selected_bindings_are_shadowed(tmp_path, events, why):
    rec, watcher = recording(tmp_path, cluster(), shadow_namespaces="team")
    for event_type, pod in events:
        watcher._apply("pods", event_type, pod)
    assert sum(rec.summary()["bindings"].values()) == 0, why


def test_with_two_replicas_each_binding_is_recorded_exactly_once(tmp_path):
    cache_a, cache_b = cluster(), cluster()
    a, wa = recording(tmp_path / "a", cache_a, shadow_replicas=2, shadow_replica_index=0)
    b, wb = recording(tmp_path / "b", cache_b, shadow_replicas=2, shadow_replica_index=1)
    for i in range(60):
        for w in (wa, wb):  # both replicas watch every event
            w._apply("pods", "ADDED", kpod(f"p{i}", cpu="100m"))
            w._apply("pods", "MODIFIED", kpod(f"p{i}", "cool", cpu="100m"))
    a.log.stop(timeout=60)  # a loaded machine can starve the writer past the 5 s default
    b.log.stop(timeout=60)  # a loaded machine can starve the writer past the 5 s default
    rows = {r: {d["uid"] for d in read_log(tmp_path / r).decisions} for r in ("a", "b")}
    assert rows["a"] | rows["b"] == {f"uid-p{i}" for i in range(60)} and not rows["a"] & rows["b"]
    assert rows["a"] and rows["b"] and all(owner(u, 2) == 0 for u in rows["a"])
    assert a.summary()["bindings"]["not_owner"] == len(rows["b"])


def test_shadow_mode_leaves_the_cache_as_the_watch_alone_would(tmp_path):
    plain = cluster()
    bare = IndexingWatcher(None, plain, build_settings(), store=None, telemetry=Telemetry(),
                           index=PodIndex(selector={}, port=1))
    shadowed = cluster()
    _, watcher = recording(tmp_path, shadowed)
    for w in (bare, watcher):
        for i in range(5):
            w._apply("pods", "ADDED", kpod(f"p{i}"))
            w._apply("pods", "MODIFIED", kpod(f"p{i}", "hot" if i % 2 else "cool"))
    va, vb = plain.view(), shadowed.view()
    assert va.names == vb.names and np.array_equal(va.requested, vb.requested) and np.array_equal(va.pods, vb.pods)
    assert np.array_equal(va.assumed, vb.assumed)


def test_a_shadowed_row_names_the_pods_workload(tmp_path):
    rec, watcher = recording(tmp_path, cluster())
    pod = kpod("w")
    pod["metadata"]["labels"]["drsched.io/workload"] = "trainer"
    watcher._apply("pods", "ADDED", pod)
    watcher._apply("pods", "MODIFIED", {**pod, "spec": {**pod["spec"], "nodeName": "hot"}})
    rec.log.stop(timeout=60)
    (decision, _), = read_log(tmp_path).joined()
    assert decision["workload"] == "team/trainer"


def test_a_node_whose_taint_the_pod_does_not_tolerate_is_left_out_of_its_context_and_never_its_choice(tmp_path):
    cache = cluster()
    taint = (("node-role.kubernetes.io/control-plane", "", "NoSchedule"),)
    cache.upsert_node(NodeInfo(name="system", capacity=(8.0, 32.0, 1000.0, 500.0), max_pods=110, ready=True,
                               taints=taint))  # idle: the best node, were it allowed
    rec, watcher = recording(tmp_path, cache)
    watcher._apply("pods", "ADDED", kpod("p"))
    watcher._apply("pods", "MODIFIED", kpod("p", "hot"))
    assert rec.summary()["recent"][0]["chosen"] == "cool"
    tolerant = kpod("q")
    tolerant["spec"]["tolerations"] = [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]
    watcher._apply("pods", "ADDED", tolerant)
    watcher._apply("pods", "MODIFIED", {**tolerant, "spec": {**tolerant["spec"], "nodeName": "hot"}})
    assert rec.summary()["recent"][0]["chosen"] in ("cool", "system")  # both idle: allowed now
    # bound where its taints keep it off (a nodeName set by hand): the actual node joins the context, blocked
    watcher._apply("pods", "ADDED", kpod("r"))
    watcher._apply("pods", "MODIFIED", kpod("r", "system"))
    assert rec.summary()["recent"][0]["chosen"] == "cool"
    rec.log.stop(timeout=60)
    rows = {d["name"]: d for d, _ in read_log(tmp_path).joined()}
    p, q, r = rows["p"]["inputs"], rows["q"]["inputs"], rows["r"]["inputs"]
    assert "system" not in rows["p"]["nodes"] and p["n_nodes"] == p["n_feasible"] == 2  # encoded over its pool
    assert q["ready"][q["at"].index(rows["q"]["nodes"].index("system"))] is True and q["n_nodes"] == 3
    system = rows["r"]["nodes"].index("system")
    assert r["ready"][r["at"].index(system)] is False
    assert r["n_nodes"] == r["n_feasible"] == 3  # the features count it, as serving does
    logged = encoding(rows["r"])  # a policy re-scored from the row cannot pick it either
    assert not logged.enc.mask[logged.names.index("system")]


EQUAL_CPU = ContentionParams(cpu_share="equal")  # a rule under which how many jobs share a node matters


def with_jobs_and_a_daemonset_pod(tmp_path):
    """``cluster()`` whose hot node runs one job and the monitor's DaemonSet pod (7 cores used between them) and
    whose cool node runs the DaemonSet pod alone; the usage sample is newer than the pods (nothing assumed)."""
    cache = cluster()
    rec, watcher = recording(tmp_path, cache)
    for name, node in (("job", "hot"), ("monitor-hot", "hot"), ("monitor-cool", "cool")):
        pod = kpod(name, node, phase="Running", cpu="1" if name == "job" else "20m")
        if name.startswith("monitor"):
            pod["metadata"]["ownerReferences"] = [{"kind": "DaemonSet", "name": "monitor", "controller": True}]
        watcher._apply("pods", "ADDED", pod)
    later = time.time() + 1
    cache.apply_usage({"cool": NodeUsage(0.5, 2.0, 0.0, 0.0, later), "hot": NodeUsage(7.0, 2.0, 0.0, 0.0, later)})
    return cache, rec, watcher


def test_a_daemonset_pod_is_no_job_sharing_the_node(tmp_path):
    cache, rec, watcher = with_jobs_and_a_daemonset_pod(tmp_path)
    rec.shadow.params = EQUAL_CPU
    view = cache.view()
    hot = view.index["hot"]
    assert view.pods[hot] == 2 and view.daemon_pods[hot] == 1
    watcher._apply("pods", "ADDED", kpod("p", cpu="4"))
    watcher._apply("pods", "MODIFIED", kpod("p", "hot", cpu="4"))
    last = rec.summary()["recent"][0]
    # equal cores: the job (7) and the pod (4) get 4 each, the pod all it wants; were the monitor a job, the 7
    # cores would be two jobs of 3.5 and all three would get 8/3: the pod at 2/3, slowdown 1.5
    assert last["slowdown"]["hot"] == pytest.approx(1.0)
    snap, pod = view.snapshot(time.time()), cache.pod_view("team", "p")
    assert predicted_slowdowns(snap, pod, [hot], params=EQUAL_CPU, max_usage_age=rec.shadow.max_usage_age) \
        == pytest.approx([1.5])
    rec.log.stop(timeout=60)
    (decision, _), = read_log(tmp_path).joined()
    inputs = decision["inputs"]
    assert {decision["nodes"][at]: n for at, n in zip(inputs["at"], inputs["daemon_pods"], strict=True)} \
        == {"hot": 1, "cool": 1}


def test_live_and_offline_predict_the_same_slowdowns_from_the_same_snapshot(tmp_path):
    """The live predicted gain and ``policy.offline``'s re-scoring of the row are one function (``policy.predicted``)
    on one snapshot: the offline figures are the live ones, exactly, and the row's recorded DaemonSet counts win
    over the ``--daemon-pods`` an old log needs."""
    _, rec, watcher = with_jobs_and_a_daemonset_pod(tmp_path)
    rec.shadow.params = EQUAL_CPU
    watcher._apply("pods", "ADDED", kpod("p", cpu="6"))
    watcher._apply("pods", "MODIFIED", kpod("p", "hot", cpu="6"))
    last = rec.summary()["recent"][0]
    assert last["chosen"] == "cool" and last["slowdown"]["hot"] > 1.0  # a gain to predict
    rec.log.stop(timeout=60)
    (decision, _), = read_log(tmp_path).joined()
    nodes = ["hot", "cool"]
    live = [last["slowdown"][n] for n in nodes]
    for fallback in (0, 5):
        assert predicted_on(decision, nodes, params=EQUAL_CPU, daemon_pods=fallback) == live
    assert [decision["slowdown"][n] for n in nodes] == pytest.approx(live, abs=1e-6)
    assert decision["predicted_gain"] == pytest.approx(live[0] - live[1], abs=1e-6)
    assert rec.summary()["mean_predicted_gain"] == pytest.approx(live[0] - live[1], abs=1e-6)


def with_zones(tmp_path):
    """``cluster()`` with zone labels (cool in zone a, hot in zone b) and an idle node in zone c."""
    cache = cluster()
    for name, zone in (("cool", "a"), ("hot", "b"), ("spare", "c")):
        cache.upsert_node(NodeInfo(name=name, capacity=(8.0, 32.0, 1000.0, 500.0), max_pods=110, ready=True,
                                   labels={"zone": zone}))
    return cache, *recording(tmp_path, cache)


@pytest.mark.parametrize(("constrain", "allowed"), [
    (lambda spec: spec.update(nodeSelector={"zone": "b"}), {"hot"}),
    (lambda spec: spec.update(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b", "c"]}]}]}}}),
     {"hot", "spare"}),
    (lambda spec: spec.update(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a", "c"]}]}]}}}),
     {"hot"}),
    (lambda spec: None, {"cool", "hot", "spare"}),
])
def test_the_shadow_s_choice_is_a_node_the_pod_s_selector_and_required_affinity_allow(tmp_path, constrain, allowed):
    _, rec, watcher = with_zones(tmp_path)
    pending = kpod("p")
    constrain(pending["spec"])
    watcher._apply("pods", "ADDED", pending)
    watcher._apply("pods", "MODIFIED", {**pending, "spec": {**pending["spec"], "nodeName": "hot"}})
    chosen = rec.summary()["recent"][0]["chosen"]
    assert chosen in allowed and (chosen != "hot" or allowed == {"hot"})  # the idle nodes win where allowed
    rec.log.stop(timeout=60)
    (decision, _), = read_log(tmp_path).joined()
    inputs = decision["inputs"]
    ready = {decision["nodes"][at]: r for at, r in zip(inputs["at"], inputs["ready"], strict=True)}
    assert {n for n, r in ready.items() if r} == allowed  # the others recorded as nodes it could not go to
    logged = encoding(decision)  # a policy re-scored from the row picks among the allowed ones too
    assert {n for n, ok in zip(logged.names, logged.enc.mask, strict=True) if ok} == allowed


def test_a_workload_s_label_constraints_are_judged_over_the_nodes_once_until_a_label_changes(tmp_path):
    cache, rec, watcher = with_zones(tmp_path)
    judged = []
    for i in range(4):
        pending = kpod(f"p{i}", cpu="100m")
        pending["spec"]["nodeSelector"] = {"zone": "b" if i % 2 else "c"}  # two workloads, interleaved
        watcher._apply("pods", "ADDED", pending)
        watcher._apply("pods", "MODIFIED", {**pending, "spec": {**pending["spec"], "nodeName": "hot"}})
        judged.append({need: id(refused) for need, refused in rec.shadow._labels_memo.items()})
    assert len(judged[-1]) == 2 and judged[1] == judged[-1]  # each judged once, then remembered
    cache.upsert_node(NodeInfo(name="spare", capacity=(8.0, 32.0, 1000.0, 500.0), max_pods=110, ready=True,
                               labels={"zone": "b"}))
    pending = kpod("q", cpu="100m")
    pending["spec"]["nodeSelector"] = {"zone": "b"}
    watcher._apply("pods", "ADDED", pending)
    watcher._apply("pods", "MODIFIED", {**pending, "spec": {**pending["spec"], "nodeName": "hot"}})
    assert rec.summary()["recent"][0]["chosen"] == "spare"  # its new label lets the pod go there


@pytest.mark.parametrize("tolerations", [
    None,
    [{"key": "dedicated", "operator": "Equal", "value": "team1", "effect": "NoSchedule"}],
    [{"key": "dedicated", "operator": "Exists"}],
    [{"key": "dedicated", "operator": "Equal", "value": "team2", "effect": "NoExecute"}],  # another effect
    [{"operator": "Exists"}],  # every taint
    [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}],
])
def test_the_nodes_blocked_by_taints_are_those_outside_the_pool_judged_node_by_node(tolerations):
    """``_blocked`` reads the pod's pool (its taints judged once per taint set) where it looped over every tainted
    node: the same nodes, whatever the tolerations, on nodes with one, two or no taints and cordons."""
    from kube.objects import UNSCHEDULABLE_TAINT, tolerates

    cache = ClusterCache(assume_grace_s=0.0)
    sets = [(), (("dedicated", "team1", "NoSchedule"),), (("dedicated", "team2", "NoExecute"),),
            (("dedicated", "team1", "NoSchedule"), ("gpu", "", "NoSchedule")), (UNSCHEDULABLE_TAINT,)]
    for i in range(40):
        cache.upsert_node(NodeInfo(name=f"n{i:02d}", capacity=(8.0, 32.0, 1000.0, 500.0), max_pods=110, ready=True,
                                   taints=sets[i % len(sets)]))
    rec = Recording(build_settings(shadow=True, policy="demand-aware"), cache=cache, telemetry=Telemetry(),
                    policy=heuristic_policy(make_scorer("demand-aware")), thresholds=Thresholds())  # no log
    pod = kpod("p")
    if tolerations is not None:
        pod["spec"]["tolerations"] = tolerations
    view = cache.view()
    want = [not tolerates(pod, view.taints.get(n, ())) for n in view.names]
    assert rec.shadow._blocked(pod, view).tolist() == want
