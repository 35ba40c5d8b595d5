"""Smoke tests of the e2e control plane itself, with the stock default-scheduler and no extender."""

from __future__ import annotations

import re

import pytest
from kubernetes import client

from harness.cluster import CONTROLPLANE_DIR, ControlPlane
from harness.objects import HETEROGENEOUS_NODES, KWOK_NODE_ANNOTATION, small_pod

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_apiserver_reports_the_pinned_release(cluster: ControlPlane) -> None:
    pinned = re.search(r"k8s\.io/kubernetes => k8s\.io/kubernetes (v\S+)", (CONTROLPLANE_DIR / "go.mod").read_text())
    assert pinned is not None
    assert client.VersionApi(cluster.api).get_code().git_version == pinned.group(1)


def test_kwok_nodes_are_ready_with_their_capacities(cluster: ControlPlane) -> None:
    nodes = {n.metadata.name: n for n in cluster.core.list_node(label_selector="type=kwok").items}
    for shape in HETEROGENEOUS_NODES:
        node = nodes[shape.name]
        assert {c.type: c.status for c in node.status.conditions}["Ready"] == "True"
        assert node.status.allocatable["cpu"] == shape.cpu


def test_default_scheduler_binds_a_pod_and_kwok_runs_it(cluster: ControlPlane, unique) -> None:
    name = unique("smoke")
    cluster.create_pod(small_pod(name))
    node = cluster.core.read_node(cluster.wait_pod_bound(name))
    assert node.metadata.annotations.get(KWOK_NODE_ANNOTATION[0]) == KWOK_NODE_ANNOTATION[1]
    pod = cluster.wait_pod_phase(name, "Running")
    assert pod.status.pod_ip


def test_run_for_annotation_completes_a_plain_pod(cluster: ControlPlane, unique) -> None:
    name = unique("run-for")
    cluster.create_pod(small_pod(name, run_for="2s"))
    cluster.wait_pod_phase(name, "Running")
    pod = cluster.wait_pod_phase(name, "Succeeded", timeout=30)
    assert pod.status.container_statuses[0].state.terminated.reason == "Completed"


def test_pod_that_fits_nowhere_stays_pending_with_a_reason(cluster: ControlPlane, unique) -> None:
    name = unique("too-big")
    cluster.create_pod(small_pod(name, cpu="64"))
    with pytest.raises(TimeoutError, match="Insufficient cpu"):
        cluster.wait_pod_bound(name, timeout=5)
    cluster.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)


def test_rbac_is_enforced(cluster: ControlPlane) -> None:
    admin = cluster.kubectl("auth", "can-i", "create", "pods/binding")
    assert admin.stdout.strip() == "yes", admin.stderr
    stranger = cluster.kubectl("auth", "can-i", "create", "pods/binding", "--as=system:serviceaccount:default:default")
    assert stranger.stdout.strip() == "no", stranger.stderr
