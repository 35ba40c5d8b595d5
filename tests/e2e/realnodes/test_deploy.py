"""drsched deployed as a user deploys it, `kubectl apply -k` with the local-images overlay, on real nodes:
the monitor DaemonSet runs one agent per node, the extender reads their usage through its `monitor`
provider, and a pod scheduled by the drsched kube-scheduler (on the host, calling the extender through
its Service's ClusterIP) runs to completion. A cpu job makes its agent's per-pod usage rise, and, with the
monitor's view for emulated nodes, its own node's CPU and not the others'."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kubernetes import client

from harness.extender_proc import parse_metrics, sum_samples
from harness.realcluster import BUSY_IMAGE, RealCluster

from .drsched import MONITOR_PORT, MONITOR_TOKEN, NS, get_json, get_text, pods_of

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes]


def test_monitor_runs_one_agent_per_real_node_and_the_extender_reads_them(deployed: RealCluster) -> None:
    agents = pods_of(deployed, "drsched-monitor")
    assert sorted(p.spec.node_name for p in agents) == sorted(n.name for n in deployed.nodes)
    for agent in agents:
        usage = get_json(f"http://{agent.status.pod_ip}:{MONITOR_PORT}/usage")
        assert usage is not None and usage["node_name"] == agent.spec.node_name
        # The emulated-node view: the node's own quota and bridge, not the host's CPUs and interfaces.
        node = deployed.node(agent.spec.node_name)
        assert usage["node"]["capacity_cores"] == pytest.approx(node.shape.cpu_millis / 1000)
        assert usage["node"]["capacity_memory_bytes"] == node.shape.memory_mib << 20
        assert usage["node"]["interfaces"] == [node.bridge]
    service = deployed.core.read_namespaced_service("drsched-extender", NS)
    url = f"http://{service.spec.cluster_ip}:8888/readyz"
    ready = get_json(url)
    assert ready is not None and (ready["usage_provider"], ready["nodes"]) == ("monitor", len(deployed.nodes))
    # Every node gets fresh usage once each agent has a sample (the extender polls every 10 s).
    deployed.poll(lambda: True if (get_json(url) or {}).get("stale_nodes") == {} else None, timeout=40,
                  what=f"no stale node in {url}: {get_json(url)}")
    for extender in pods_of(deployed, "drsched-extender"):
        metrics = parse_metrics(get_text(f"http://{extender.status.pod_ip}:8888/metrics"))
        assert sum_samples(metrics, "drsched_extender_usage_fetch_total", provider="monitor", outcome="ok") > 0


def _requests_total(cluster: RealCluster) -> float:
    return sum(
        sum_samples(
            parse_metrics(get_text(f"http://{p.status.pod_ip}:8888/metrics")), "drsched_extender_requests_total"
        )
        for p in pods_of(cluster, "drsched-extender")
    )


def test_pod_placed_by_the_extender_runs_and_its_agent_sees_its_cpu(
    deployed: RealCluster, unique: Callable[[str], str]
) -> None:
    name = unique("drsched-busy")
    requests_before = _requests_total(deployed)
    deployed.create_pod(client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(
            scheduler_name="drsched", restart_policy="Never",
            containers=[client.V1Container(
                name="busy", image=BUSY_IMAGE, image_pull_policy="Never", args=["-threads", "1", "-seconds", "20"],
                resources=client.V1ResourceRequirements(requests={"cpu": "50m", "memory": "16Mi"}),
            )],
        ),
    ))  # fmt: skip
    node = deployed.wait_pod_bound(name, timeout=60)
    assert _requests_total(deployed) > requests_before  # kube-scheduler asked the extender
    pod = deployed.wait_pod_phase(name, "Running", timeout=60)
    (agent,) = [a for a in pods_of(deployed, "drsched-monitor") if a.spec.node_name == node]

    def pod_cpu() -> float | None:
        usage = get_json(f"http://{agent.status.pod_ip}:{MONITOR_PORT}/usage", MONITOR_TOKEN) or {}
        cores = usage.get("pods", {}).get(pod.metadata.uid, {}).get("cpu_cores", {}).get("current") or 0.0
        return cores if cores > 0.05 else None

    deployed.poll(pod_cpu, timeout=15, what=f"agent on {node} reporting CPU of pod {name}")
    deployed.wait_pod_phase(name, "Succeeded", timeout=60)
    deployed.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)


def test_a_cpu_job_raises_its_own_nodes_cpu_and_not_the_others(
    deployed: RealCluster, unique: Callable[[str], str]
) -> None:
    node = max(deployed.shapes, key=lambda s: s.cpu_millis).name
    agents = {a.spec.node_name: a.status.pod_ip for a in pods_of(deployed, "drsched-monitor")}

    def node_cpu() -> dict[str, float]:
        out = {}
        for name, ip in agents.items():
            usage = get_json(f"http://{ip}:{MONITOR_PORT}/usage") or {}
            out[name] = (usage.get("node", {}).get("cpu_cores") or {}).get("current") or 0.0
        return out

    name = unique("node-cpu")
    deployed.create_pod(client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(
            restart_policy="Never", node_selector={"kubernetes.io/hostname": node},
            containers=[client.V1Container(
                name="busy", image=BUSY_IMAGE, image_pull_policy="Never", args=["-threads", "1", "-seconds", "30"],
                resources=client.V1ResourceRequirements(requests={"cpu": "50m", "memory": "16Mi"}),
            )],
        ),
    ))  # fmt: skip
    deployed.wait_pod_phase(name, "Running", timeout=60)

    def loaded() -> dict[str, float] | None:
        cpu = node_cpu()
        others = [v for n, v in cpu.items() if n != node]
        # The busy thread runs inside `node`'s quota; the others carry only drsched's own small pods.
        return cpu if cpu[node] > 0.2 and all(v < cpu[node] / 2 for v in others) else None

    cpu = deployed.poll(loaded, timeout=25, what=f"node CPU of {node} (and only {node}) rising: {node_cpu()}")
    print(f"node cpu_cores while a busy thread runs on {node}: {cpu}")  # noqa: T201 (the figure, for the log)
    deployed.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
