"""Monitor and Prometheus providers over mock transports: per-node faults, counted reasons, never a crash."""

import asyncio
import json

import httpx
import pytest
from prometheus_client import CollectorRegistry

from extender.errors import UsageUnavailable
from extender.pod_index import PodIndex
from extender.providers.health import UsageHealth, UsageMetrics
from extender.providers.monitor import MonitorProvider
from extender.providers.prometheus import PrometheusProvider
from extender.providers.promql import queries
from extender.telemetry import Telemetry
from extender.usage import UsagePoller, UsageProvider
from kube.cache import ClusterCache
from kube.objects import NodeInfo


def report(node, cpu=1.0):
    units = {"cpu_cores": cpu, "mem_gib": 2.0, "net_mb_per_second": 3.0, "disk_mb_per_second": 4.0}
    return {"node_name": node, "age_seconds": 1.0, "scheduler_units": {"ewma": units},
            "pods": {"u1": {"cpu_cores": {"mean": 0.5}, "memory_bytes": {"mean": 2**30}}}}


def monitor_transport(request: httpx.Request) -> httpx.Response:
    host = request.url.host
    if host == "down":
        raise httpx.ConnectError("refused", request=request)
    if host == "slow":
        raise httpx.ReadTimeout("slow", request=request)
    if host == "err":
        return httpx.Response(503, text="starting")
    if host == "junk":
        return httpx.Response(200, content=b"\x00garbage")
    if host == "other":
        return httpx.Response(200, json=report("somebody-else"))
    return httpx.Response(200, json=report(host))


def health(provider, nodes=()):
    metrics = UsageMetrics(CollectorRegistry())
    return UsageHealth(provider, telemetry=Telemetry(), metrics=metrics, nodes=lambda: nodes, clock=lambda: 100.0), \
        metrics


def errors(metrics, provider, reason):
    return metrics.errors.labels(provider=provider, reason=reason)._value.get()


def test_monitor_provider_fails_only_the_broken_nodes_with_their_reasons():
    agents = {n: f"http://{h}:9847" for n, h in [("ok", "ok"), ("a", "down"), ("b", "slow"), ("c", "err"),
                                                  ("d", "junk"), ("e", "other")]}
    h, metrics = health("monitor", nodes=[*agents, "lonely"])
    p = MonitorProvider(agents=lambda: agents, health=h, timeout_s=0.5, known_nodes=lambda: [*agents, "lonely"],
                        clock=lambda: 100.0, transport=httpx.MockTransport(monitor_transport))
    samples = asyncio.run(p.fetch())
    assert set(samples) == {"ok"} and samples["ok"].timestamp == 99.0
    status = h.status()
    assert {n: s["error"] for n, s in status.items()} == {
        "ok": None, "a": "unreachable", "b": "timeout", "c": "http_status", "d": "bad_response", "e": "wrong_node",
        "lonely": "no_agent"}
    for reason in ("unreachable", "timeout", "http_status", "bad_response", "wrong_node", "no_agent"):
        assert errors(metrics, "monitor", reason) == 1
    assert [s.uid for s in p.take_pod_samples()] == ["u1"] and p.take_pod_samples() == []
    assert metrics.failing.labels(provider="monitor")._value.get() == 6


def test_health_reports_once_per_failure_streak_and_recovers():
    telemetry = Telemetry()
    h = UsageHealth("monitor", telemetry=telemetry, metrics=UsageMetrics(CollectorRegistry()), clock=lambda: 10.0)
    for _ in range(3):
        h.failed("n", "timeout", "x")
    h.failed("n", "unreachable", "y")
    assert telemetry.metrics.fallbacks.labels(reason="usage_node_failed")._value.get() == 2
    h.ok("n", 9.0)
    assert h.status()["n"] == {"age_s": 1.0, "error": None, "detail": None, "failures": 0, "failing_for_s": None}


def prom_transport(mode):
    def handle(request: httpx.Request) -> httpx.Response:
        if mode == "down":
            raise httpx.ConnectError("refused", request=request)
        if mode == "junk":
            return httpx.Response(200, text="<html>")
        if mode == "bad_query":
            return httpx.Response(400, json={"status": "error", "errorType": "bad_data", "error": "parse error"})
        q = request.url.params["query"]
        value = "990" if "timestamp(" in q else "2.5"
        result = [{"metric": {"instance": "10.0.0.1:9100"}, "value": [1000, value]},
                  {"metric": {"instance": "10.0.0.9:9100"}, "value": [1000, value]}]
        return httpx.Response(200, json={"status": "success", "data": {"resultType": "vector", "result": result}})
    return httpx.MockTransport(handle)


@pytest.mark.parametrize(("mode", "reason"), [("down", "unreachable"), ("junk", "bad_response"),
                                              ("bad_query", "query_error")])
def test_prometheus_failure_marks_every_known_node(mode, reason):
    h, metrics = health("prometheus", nodes=["a", "b"])
    p = PrometheusProvider(url="http://prom:9090", queries=queries({}, label="instance", window="1m"),
                           label="instance", health=h, timeout_s=0.5, known_nodes=lambda: ["a", "b"],
                           transport=prom_transport(mode))
    with pytest.raises(UsageUnavailable):
        asyncio.run(p.fetch())
    assert {s["error"] for s in h.status().values()} == {reason}
    assert errors(metrics, "prometheus", reason) == 2


def test_prometheus_maps_instances_and_counts_the_rest():
    h, metrics = health("prometheus", nodes=["a", "b"])
    p = PrometheusProvider(url="http://prom:9090/", queries=queries({}, label="instance", window="1m"),
                           label="instance", health=h, timeout_s=0.5, known_nodes=lambda: ["a", "b"],
                           addresses=lambda: {"10.0.0.1": "a"}, clock=lambda: 5000.0,
                           transport=prom_transport("ok"))
    samples = asyncio.run(p.fetch())
    assert set(samples) == {"a"} and samples["a"].cpu == 2.5 and samples["a"].timestamp == 4990.0
    assert h.status()["b"]["error"] == "no_data"
    assert errors(metrics, "prometheus", "unmapped") == 1


def test_prometheus_drops_the_series_of_a_not_ready_node():
    # node-exporter outlives a dead kubelet: its series stay fresh, and must not make the node look usable.
    h, metrics = health("prometheus", nodes=["a", "b"])
    p = PrometheusProvider(url="http://prom:9090/", queries=queries({}, label="instance", window="1m"),
                           label="instance", health=h, timeout_s=0.5, known_nodes=lambda: ["a", "b"],
                           addresses=lambda: {"10.0.0.1": "a", "10.0.0.9": "b"}, clock=lambda: 5000.0,
                           transport=prom_transport("ok"), not_ready=lambda: {"b": "Ready=Unknown since t"})
    assert set(asyncio.run(p.fetch())) == {"a"}
    assert h.status()["b"]["error"] == "node_not_ready" and h.status()["a"]["error"] is None
    assert errors(metrics, "prometheus", "node_not_ready") == 1 and errors(metrics, "prometheus", "no_data") == 0


def test_poller_survives_a_provider_bug_and_requests_read_the_last_snapshot():
    class Broken(UsageProvider):
        name = "broken"

        async def fetch(self):
            raise RuntimeError("bug")

    cache = ClusterCache()
    cache.upsert_node(NodeInfo(name="n", capacity=(1, 1, 1, 1), max_pods=10, ready=True))
    telemetry = Telemetry()
    poller = UsagePoller(Broken(), cache, telemetry, interval_s=1, timeout_s=0.5)
    assert asyncio.run(poller.poll_once()) is False
    assert telemetry.metrics.usage_fetch.labels(provider="broken", outcome="error")._value.get() == 1


def test_pod_index_agents_workloads_and_addresses():
    idx = PodIndex(selector={"app.kubernetes.io/name": "drsched-monitor"}, port=9847)

    def agent(uid, node, ip, ready=True, phase="Running"):
        return {"metadata": {"uid": uid, "namespace": "drsched-system", "name": uid,
                             "labels": {"app.kubernetes.io/name": "drsched-monitor"},
                             "ownerReferences": [{"kind": "DaemonSet", "name": "drsched-monitor",
                                                  "controller": True}]},
                "spec": {"nodeName": node},
                "status": {"phase": phase, "podIP": ip,
                           "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}

    idx.replace_pods([agent("a1", "n1", "10.0.0.1"), agent("a2", "n2", "fd00::2", ready=False),
                      agent("a3", "n2", "10.0.0.2"), agent("a4", "n3", "10.0.0.3", phase="Pending")])
    assert idx.agents() == {"n1": "http://10.0.0.1:9847", "n2": "http://10.0.0.2:9847"}
    assert idx.workload("a1") == "drsched-system/DaemonSet/drsched-monitor"
    idx.apply_pod("DELETED", agent("a3", "n2", "10.0.0.2"))
    assert idx.agents()["n2"] == "http://[fd00::2]:9847"
    idx.replace_nodes([{"metadata": {"name": "n1"}, "status": {"addresses": [
        {"type": "InternalIP", "address": "10.0.0.1"}, {"type": "Hostname", "address": "host-1"}]}}])
    assert idx.addresses() == {"10.0.0.1": "n1", "host-1": "n1"}


def test_json_is_what_the_agent_serves():  # keep the fixture honest against the agent's own model
    from monitor.models import UsageReport

    assert {"node_name", "age_seconds", "scheduler_units", "pods"} <= set(UsageReport.model_fields)
    assert json.dumps(report("x"))


def knode(name, ready=None):
    conditions = [] if ready is None else [{"type": "Ready", "status": ready, "reason": "NodeStatusUnknown",
                                             "lastTransitionTime": "2026-11-30T19:00:00Z"}]
    return {"metadata": {"name": name}, "status": {"conditions": conditions}}


def test_pod_index_knows_which_nodes_are_not_ready():
    idx = PodIndex(selector={"app.kubernetes.io/name": "drsched-monitor"}, port=9847)
    idx.replace_nodes([knode("up", "True"), knode("kwok"), knode("dead", "Unknown")])
    assert list(idx.not_ready()) == ["dead"] and idx.not_ready()["dead"].startswith("Ready=Unknown since")
    idx.apply_node("MODIFIED", knode("dead", "True"))  # its kubelet is back
    assert idx.not_ready() == {}
    idx.apply_node("MODIFIED", knode("up", "False"))
    idx.apply_node("DELETED", knode("up", "False"))
    assert idx.not_ready() == {}


def test_monitor_provider_does_not_trust_the_agent_of_a_not_ready_node():
    # A dead kubelet leaves its containers running: the agent still answers, with fresh readings.
    agents = {"ok": "http://ok:9847", "dead": "http://dead:9847"}
    asked = []

    def transport(request):
        asked.append(request.url.host)
        return monitor_transport(request)

    h, metrics = health("monitor", nodes=list(agents))
    p = MonitorProvider(agents=lambda: agents, health=h, timeout_s=0.5, known_nodes=lambda: list(agents),
                        clock=lambda: 100.0, transport=httpx.MockTransport(transport),
                        not_ready=lambda: {"dead": "Ready=Unknown since t (NodeStatusUnknown)"})
    assert set(asyncio.run(p.fetch())) == {"ok"}
    assert asked == ["ok"] and agents == {"ok": "http://ok:9847", "dead": "http://dead:9847"}
    assert h.status()["dead"]["error"] == "node_not_ready" and h.status()["ok"]["error"] is None
    assert errors(metrics, "monitor", "node_not_ready") == 1


def test_every_provider_is_a_whole_usage_provider(tmp_path):
    """The poller calls health, take_pod_samples and aclose on any provider; only the monitor reads pods."""
    from extender.providers.monitor import MonitorProvider
    from extender.providers.prometheus import PrometheusProvider
    from extender.usage import NoUsage, StaticUsageProvider

    for provider in (NoUsage(), StaticUsageProvider(tmp_path / "usage.yaml")):
        assert provider.health is None and provider.take_pod_samples() == [] and not provider.reads_pods
        asyncio.run(provider.aclose())
    assert MonitorProvider.reads_pods and not PrometheusProvider.reads_pods
    assert all(UsageProvider in p.__mro__ for p in (MonitorProvider, PrometheusProvider))
