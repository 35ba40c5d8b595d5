"""drsched deployed as a user deploys it, `kubectl apply -k` with the local-images overlay, on real nodes:
the monitor DaemonSet runs one agent per node, the extender reads their usage through its `monitor`
provider, and a pod scheduled by the drsched kube-scheduler (on the host, calling the extender through
its Service's ClusterIP) runs to completion. A cpu job makes its agent's per-pod usage rise."""

from __future__ import annotations

import json
import secrets
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes import client

from harness.extender_proc import parse_metrics, sum_samples
from harness.imagecache import find_image
from harness.realcluster import BUSY_IMAGE, RealCluster

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes]
OVERLAY = Path(__file__).resolve().parents[3] / "manifests" / "overlays" / "local-images"
NS = "drsched-system"
MONITOR_PORT = 9847


def _get_json(url: str, token: str | None = None) -> dict | None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=2) as resp:  # noqa: S310
            return json.loads(resp.read())
    except (OSError, ValueError):
        return None


def _get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310
        return resp.read().decode()


MONITOR_TOKEN = secrets.token_hex(16)


@pytest.fixture(scope="module")
def deployed(real_cluster: RealCluster) -> Iterator[RealCluster]:
    archives = []
    for name in ("extender", "monitor", "migration"):
        found = find_image(name)
        if found is None:
            pytest.skip(f"IMAGES NOT BUILT: no {name} image in the image cache; run `make images` first")
        archives.append(found[1])
    cluster = real_cluster
    cluster.import_images(archives)
    # As the monitor README says a user does: the token that lets the extender (and only it) read the agents'
    # per-pod usage, created before the agents start (they read it once, at start).
    cluster.create_namespace(NS)
    cluster.core.create_namespaced_secret(NS, client.V1Secret(
        metadata=client.V1ObjectMeta(name="drsched-monitor-token"), string_data={"token": MONITOR_TOKEN}))
    done = cluster.kubectl("apply", "--server-side", "-k", str(OVERLAY), timeout=120)
    assert done.returncode == 0, done.stderr
    apps = client.AppsV1Api(cluster.api)

    def all_ready() -> bool | None:
        ds = apps.read_namespaced_daemon_set("drsched-monitor", NS).status
        deps = [apps.read_namespaced_deployment(n, NS).status for n in ("drsched-extender", "drsched-migration")]
        ok = ds.number_ready == len(cluster.nodes) and all((d.available_replicas or 0) >= 1 for d in deps)
        return True if ok else None

    cluster.poll(all_ready, timeout=180, what="monitor agents on every node, extender and migration available")
    service = cluster.core.read_namespaced_service("drsched-extender", NS)
    url = f"http://{service.spec.cluster_ip}:8888/"
    cluster.poll(lambda: True if (_get_json(url + "readyz") or {}).get("status") == "ready" else None,
                 timeout=60, what=f"extender ready through its Service {url}")  # fmt: skip
    config = cluster.render_scheduler_config("drsched-scheduler.yaml", extender_url=url)
    cluster.start_scheduler("drsched-scheduler", config_path=config)
    yield cluster
    cluster.stop_component("drsched-scheduler")
    cluster.kubectl("delete", "-k", str(OVERLAY), "--wait=true", timeout=120)


def _pods(cluster: RealCluster, app: str) -> list[client.V1Pod]:
    return cluster.core.list_namespaced_pod(NS, label_selector=f"app.kubernetes.io/name={app}").items


def test_monitor_runs_one_agent_per_real_node_and_the_extender_reads_them(deployed: RealCluster) -> None:
    agents = _pods(deployed, "drsched-monitor")
    assert sorted(p.spec.node_name for p in agents) == sorted(n.name for n in deployed.nodes)
    for agent in agents:
        usage = _get_json(f"http://{agent.status.pod_ip}:{MONITOR_PORT}/usage")
        assert usage is not None and usage["node_name"] == agent.spec.node_name
    service = deployed.core.read_namespaced_service("drsched-extender", NS)
    ready = _get_json(f"http://{service.spec.cluster_ip}:8888/readyz")
    assert ready is not None and (ready["usage_provider"], ready["nodes"]) == ("monitor", len(deployed.nodes))
    for extender in _pods(deployed, "drsched-extender"):
        metrics = parse_metrics(_get_text(f"http://{extender.status.pod_ip}:8888/metrics"))
        assert sum_samples(metrics, "drsched_extender_usage_fetch_total", provider="monitor", outcome="ok") > 0


def _requests_total(cluster: RealCluster) -> float:
    return sum(
        sum_samples(
            parse_metrics(_get_text(f"http://{p.status.pod_ip}:8888/metrics")), "drsched_extender_requests_total"
        )
        for p in _pods(cluster, "drsched-extender")
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
    (agent,) = [a for a in _pods(deployed, "drsched-monitor") if a.spec.node_name == node]

    def pod_cpu() -> float | None:
        usage = _get_json(f"http://{agent.status.pod_ip}:{MONITOR_PORT}/usage", MONITOR_TOKEN) or {}
        cores = usage.get("pods", {}).get(pod.metadata.uid, {}).get("cpu_cores", {}).get("current") or 0.0
        return cores if cores > 0.05 else None

    deployed.poll(pod_cpu, timeout=15, what=f"agent on {node} reporting CPU of pod {name}")
    deployed.wait_pod_phase(name, "Succeeded", timeout=60)
    deployed.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
