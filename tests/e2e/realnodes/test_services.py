"""A ClusterIP Service on real nodes is reachable from the host: kube-proxy's rules and the per-node
bridges carry the traffic to pods on different nodes."""

from __future__ import annotations

import urllib.request
from collections.abc import Callable

import pytest
from kubernetes import client

from harness.realcluster import BUSY_IMAGE, RealCluster

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes]


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310 (a ClusterIP inside this machine)
            return resp.read().decode().strip()
    except OSError:
        return None


def test_cluster_ip_service_reaches_pods_on_different_nodes(
    rcluster: RealCluster, unique: Callable[[str], str]
) -> None:
    app = unique("echo")
    labels = {"app": app}
    pod_names = []
    for shape in rcluster.shapes[:2]:
        name = f"{app}-{shape.name}"
        pod_names.append(name)
        rcluster.create_pod(client.V1Pod(
            metadata=client.V1ObjectMeta(name=name, labels=labels),
            spec=client.V1PodSpec(
                node_selector={"kubernetes.io/hostname": shape.name},
                containers=[client.V1Container(
                    name="echo", image=BUSY_IMAGE, image_pull_policy="Never", args=["-listen", ":8080"],
                    ports=[client.V1ContainerPort(container_port=8080)],
                    resources=client.V1ResourceRequirements(requests={"cpu": "10m", "memory": "8Mi"}),
                )],
            ),
        ))  # fmt: skip
    service = rcluster.core.create_namespaced_service("default", client.V1Service(
        metadata=client.V1ObjectMeta(name=app),
        spec=client.V1ServiceSpec(selector=labels, ports=[client.V1ServicePort(port=80, target_port=8080)]),
    ))  # fmt: skip
    for name in pod_names:
        rcluster.wait_pod_phase(name, "Running", timeout=60)
    url = f"http://{service.spec.cluster_ip}:80/"
    seen: set[str] = set()

    def both_pods_answered() -> bool | None:
        answer = _get(url)
        if answer is not None:
            seen.add(answer)
        return True if seen == {f"busy {n}" for n in pod_names} else None

    rcluster.poll(both_pods_answered, timeout=60, what=f"answers from both pods through {url}")
    rcluster.core.delete_namespaced_service(app, "default")
    for name in pod_names:
        rcluster.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
