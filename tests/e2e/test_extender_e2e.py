"""The REAL extender (`python -m extender --kubeconfig ...`) behind the stock kube-scheduler, on the real cluster.

What each test shows, through what the extender itself exposes (`/metrics`, `/debug/explain` and its
decision history) and what the apiserver says (where pods are bound, Pending reasons):
- every opted-in pod is filtered, scored and bound by the extender, and with a dominant weight the node
  the scheduler picks is the extender's top-scored one; that test serves the shipped model and fails when
  the extender could only serve its degraded heuristic fallback;
- an unreachable extender: `ignorable: true` degrades to stock scheduling; `ignorable: false` keeps the
  pod Pending with the error visible, until the extender is back;
- nodes the filter rejects as hot are never chosen, with `nodeCacheCapable` true and false;
- the extender's cache follows the watch (nodes, pods, allocations); bind is idempotent;
- the extender survives an apiserver restart (re-lists and keeps serving).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes import client

from harness.cluster import ControlPlane
from harness.extender_proc import ExtenderProcess, Extenders, mtls, sum_samples, variant
from harness.objects import KwokNodeShape, fake_node, small_pod
from tests.helpers import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

HOT = ("kwok-medium", "kwok-large")


def _until(check, *, timeout: float = 30, what: str):
    """``wait_for`` where any exception counts as not yet (an apiserver or extender away for a moment)."""
    return wait_for(check, timeout=timeout, what=what, every=0.2, ignore=(Exception,))


def _probe_pod(cpu: str) -> dict:
    """A pod as kube-scheduler puts it in ExtenderArgs (only what the extender reads)."""
    return {"metadata": {"name": "probe", "namespace": "default", "uid": "probe-uid"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}}


def _decision(ext: ExtenderProcess, name: str, *, bound: bool) -> dict:
    def check():
        explained = ext.explain(name)
        decision = explained and explained["last_decision"]
        return decision if decision and (not bound or decision.get("bound_to")) else None

    return _until(check, what=f"the extender's decision for {name}")


def test_each_pod_is_filtered_scored_and_bound_by_the_extender_on_its_top_node(
    cluster: ControlPlane, drsched_scheduler, extenders: Extenders, unique
) -> None:
    certs = mtls(cluster.pki, name="bind-top")
    ext = extenders.start(policy="model", bind=True, tls=certs.server, client_context=certs.client)
    # the shipped model itself, not the heuristic the extender falls back to when the model cannot be loaded
    ready = ext.get("/readyz")
    assert (ready["status"], ready["policy"]) == ("ready", "model"), ready
    # weight 100: one extender point (1000) outweighs every difference the default Score plugins make
    drsched_scheduler(variant(cluster.render_scheduler_config("drsched-scheduler-bind.yaml", extender_url=ext.url,
                                                              tls=certs.scheduler), weight=100))
    names = [unique(f"bound-{i}") for i in range(3)]
    for name in names:
        cluster.create_pod(small_pod(name, scheduler_name="drsched", cpu="500m", memory="256Mi"))
    nodes = {name: cluster.wait_pod_bound(name) for name in names}

    for name, node in nodes.items():
        decision = _decision(ext, name, bound=True)
        assert decision["bound_to"] == node
        assert decision["policy"] == ext.get("/readyz")["policy"]
        assert decision["scores"].get(node) == max(decision["scores"].values()), decision
    metrics = ext.metrics()
    for verb in ("filter", "prioritize", "bind"):
        assert sum_samples(metrics, "drsched_extender_requests_total", verb=verb, outcome="ok") >= len(names), verb
    assert ext.counter("drsched_extender_binds_total", outcome="ok") >= len(names)


def test_unreachable_ignorable_extender_falls_back_to_stock_scheduling(
    cluster: ControlPlane, drsched_scheduler, extenders: Extenders, unique
) -> None:
    ext = extenders.start()
    drsched_scheduler(cluster.render_scheduler_config("drsched-scheduler.yaml", extender_url=ext.url))
    ext.stop()
    name = unique("ignorable")
    cluster.create_pod(small_pod(name, scheduler_name="drsched"))
    cluster.wait_pod_bound(name)  # by the stock plugins alone
    assert not ext.running


def test_unreachable_required_extender_keeps_pods_pending_until_it_is_back(
    cluster: ControlPlane, drsched_scheduler, extenders: Extenders, unique
) -> None:
    ext = extenders.new()  # not running yet: the scheduler finds nobody at its URL
    drsched_scheduler(variant(cluster.render_scheduler_config("drsched-scheduler.yaml", extender_url=ext.url),
                              ignorable=False))
    name = unique("required")
    cluster.create_pod(small_pod(name, scheduler_name="drsched"))

    def pending_reason() -> str | None:
        pod = cluster.core.read_namespaced_pod(name, "default")
        events = cluster.core.list_namespaced_event("default", field_selector=f"involvedObject.name={name}").items
        messages = [c.message or "" for c in pod.status.conditions or [] if c.type == "PodScheduled"]
        messages += [e.message or "" for e in events if e.reason == "FailedScheduling"]
        return next((m for m in messages if f"127.0.0.1:{ext.port}" in m), None)

    reason = _until(pending_reason, what="a scheduling failure naming the extender")
    assert "extender" in reason.lower() or "filter" in reason.lower(), reason
    assert cluster.core.read_namespaced_pod(name, "default").spec.node_name is None

    ext.start()
    # the scheduler retries after its backoff (podMaxBackoffSeconds 10)
    node = cluster.wait_pod_bound(name, timeout=60)
    assert _decision(ext, name, bound=False)["scores"], "scored by the extender once it was back"
    assert node


@pytest.mark.parametrize("node_cache_capable", [True, False], ids=["node-names", "full-nodes"])
def test_nodes_the_filter_finds_hot_are_never_chosen(
    cluster: ControlPlane, drsched_scheduler, extenders: Extenders, unique, tmp_path: Path, node_cache_capable: bool
) -> None:
    # Nodes and pods come from the API; usage from a file (cpu 90 % and 94 % of allocatable: over the 65 % limit).
    usage = tmp_path / "usage.yaml"
    usage.write_text('usage:\n  kwok-medium: {cpu: "3.6", memory: 1Gi}\n  kwok-large: {cpu: "15", memory: 1Gi}\n')
    ext = extenders.start(usage_file=usage)
    _until(lambda: all(not ext.get("/debug/usage")["nodes"][n]["stale"] for n in HOT), what="usage samples")
    config = cluster.render_scheduler_config("drsched-scheduler.yaml", extender_url=ext.url)
    if not node_cache_capable:  # same file, one field substituted
        config = variant(config, nodeCacheCapable=False)
    drsched_scheduler(config)

    names = [unique(f"cool-{i}") for i in range(3)]
    for name in names:
        cluster.create_pod(small_pod(name, scheduler_name="drsched"))
    chosen = {cluster.wait_pod_bound(name) for name in names}
    assert not chosen & set(HOT), chosen

    explained = ext.explain(names[0])
    reasons = {n["name"]: n["filter"] for n in explained["nodes"]}
    assert all(reasons[n].startswith("hot node: cpu") for n in HOT), reasons
    assert ext.counter("drsched_extender_requests_total", verb="filter", outcome="ok") >= len(names)
    if not node_cache_capable:  # the scheduler sent full Node objects; the reply carried them back
        reply = ext.post("filter", {"Pod": _probe_pod("100m"), "NodeNames": None,
                                    "Nodes": {"metadata": {}, "items": [_node_dict(cluster, n) for n in
                                                                         ("kwok-small", *HOT)]}})
        assert [i["metadata"]["name"] for i in reply["Nodes"]["items"]] == ["kwok-small"]
        assert set(reply["FailedNodes"]) == set(HOT)


def test_cache_follows_the_watch_and_tracks_allocations(cluster: ControlPlane, extenders: Extenders, unique) -> None:
    ext = extenders.start()
    node = unique("tiny")
    body = fake_node(KwokNodeShape(node, cpu="1", memory="2Gi"))
    body.spec = client.V1NodeSpec(taints=[client.V1Taint(key="drsched.io/e2e", value="only", effect="NoSchedule")])
    cluster.create_node(body)  # tainted: no other test's pod lands here

    def filter_reply(cpu: str = "300m") -> dict:
        return ext.post("filter", {"Pod": _probe_pod(cpu), "Nodes": None, "NodeNames": [node]})

    try:
        _until(lambda: filter_reply()["NodeNames"] == [node], what="the new node in the extender's cache")
        filler = unique("filler")
        pod = small_pod(filler, cpu="800m")
        pod.spec.node_name = node  # bound directly: only the watch can tell the extender
        cluster.create_pod(pod)
        failed = _until(lambda: filter_reply()["FailedNodes"].get(node), what="the filler's requests counted")
        assert failed.startswith("Insufficient cpu"), failed
        assert filter_reply("100m")["NodeNames"] == [node]  # 800m + 100m still fits in 1 CPU

        cluster.core.delete_namespaced_pod(filler, "default", grace_period_seconds=0)
        _until(lambda: filter_reply()["NodeNames"] == [node], what="the deleted pod's requests released")
    finally:
        cluster.core.delete_node(node)
    reply = _until(lambda: filter_reply()["FailedAndUnresolvableNodes"], what="the deleted node gone from the cache")
    assert reply == {node: "unknown node"}


def test_bind_is_idempotent(cluster: ControlPlane, extenders: Extenders, unique) -> None:
    ext = extenders.start(bind=True)
    name = unique("bind-twice")
    uid = cluster.create_pod(small_pod(name, scheduler_name="nobody")).metadata.uid  # no scheduler serves it
    args = {"PodName": name, "PodNamespace": "default", "PodUID": uid, "Node": "kwok-small"}
    assert ext.post("bind", args) == {"Error": ""}
    assert ext.post("bind", args) == {"Error": ""}  # 409 "already assigned" to the same node: success
    other = ext.post("bind", {**args, "Node": "kwok-medium"})
    assert "already assigned" in other["Error"]
    assert cluster.core.read_namespaced_pod(name, "default").spec.node_name == "kwok-small"
    assert ext.counter("drsched_extender_binds_total", outcome="ok") == 2
    assert ext.counter("drsched_extender_binds_total", outcome="refused") == 1


def _readyz_if(ext: ExtenderProcess, *, up: bool) -> dict | None:
    """/readyz once every watch it lists is up (``up``) or every one is down."""
    ready = ext.get("/readyz")
    return ready if all(w["up"] is up for w in ready["watches"].values()) else None


def test_extender_survives_an_apiserver_restart(cluster: ControlPlane, extenders: Extenders, unique) -> None:
    ext = extenders.start()
    listed_before = ext.log_path.read_text().count("listed")
    assert all(w["up"] for w in ext.get("/readyz")["watches"].values())
    failures_before = {kind: sum_samples(ext.metrics(), "drsched_extender_watch_failures_total", kind=kind)
                       for kind in ("nodes", "pods")}
    apiserver = cluster.components["kube-apiserver"]
    apiserver.stop()
    # While it is away the extender stays ready, serving from its cache, and says which watches are down.
    down = _until(lambda: _readyz_if(ext, up=False), timeout=30, what="/readyz reporting both watches down")
    assert down["status"] in ("ready", "degraded") and "watch of nodes down" in down["reason"], down
    assert all(w["error"] for w in down["watches"].values()), down
    metrics = ext.metrics()
    for kind in ("nodes", "pods"):
        assert sum_samples(metrics, "drsched_extender_watch_up", kind=kind) == 0
        assert sum_samples(metrics, "drsched_extender_watch_failures_total", kind=kind) > failures_before[kind]
    assert ext.running and ext.get("/healthz") == {"status": "ok"}  # serving from its cache meanwhile
    apiserver.start()
    _until(lambda: cluster.core.read_namespace("default"), timeout=60, what="the apiserver back")
    _until(lambda: _readyz_if(ext, up=True), timeout=60, what="/readyz reporting both watches up again")

    name = unique("after-restart")
    pod = small_pod(name, scheduler_name="nobody")
    pod.spec.node_name = "kwok-large"
    cluster.create_pod(pod)
    _until(lambda: ext.explain(name), timeout=60, what="a pod created after the restart in the extender's cache")
    assert ext.log_path.read_text().count("listed") > listed_before  # it re-listed
    assert ext.get("/readyz")["status"] in ("ready", "degraded")
    cluster.check_alive()


def _node_dict(cluster: ControlPlane, name: str) -> dict:
    return cluster.api.sanitize_for_serialization(cluster.core.read_node(name))
