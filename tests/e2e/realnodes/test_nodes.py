"""Real nodes are what they claim: Ready, allocatable equal to their cgroup quota, and a pod on one runs
a real process inside that node's cgroup, held to the node's CPU quota, to Completed. When one kubelet dies,
drsched (deployed) keeps scheduling on the others, the extender marks that node's usage stale, and the
migration controller leaves that node's jobs alone."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.utils import parse_quantity

from harness import nodes
from harness.extender_proc import parse_metrics, sum_samples
from harness.realcluster import BUSY_IMAGE, RealCluster

from . import drsched

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes]


def busy_pod(name: str, *, node: str, threads: int, seconds: float) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(
            restart_policy="Never",
            node_selector={"kubernetes.io/hostname": node},
            containers=[client.V1Container(
                name="busy", image=BUSY_IMAGE, image_pull_policy="Never",
                args=["-threads", str(threads), "-seconds", str(seconds)],
                resources=client.V1ResourceRequirements(requests={"cpu": "100m", "memory": "16Mi"}),
            )],
        ),
    )  # fmt: skip


def _cgroup_knob(hierarchy: str, path: str, knob: str) -> str:
    return (nodes.CGROUP_FS / hierarchy / path.strip("/") / knob).read_text()


def _throttled_periods(path: str) -> int:
    stat = dict(line.split() for line in _cgroup_knob("cpu", path, "cpu.stat").splitlines())
    return int(stat["nr_throttled"])


def _cmdlines(pids: set[int]) -> list[str]:
    lines = []
    for pid in pids:
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return lines


def test_every_node_is_ready_with_allocatable_equal_to_its_quota(rcluster: RealCluster) -> None:
    assert len(rcluster.shapes) >= 4
    assert len({(s.cpu_millis, s.memory_mib) for s in rcluster.shapes}) == len(rcluster.shapes)
    for shape in rcluster.shapes:
        node = rcluster.core.read_node(shape.name)
        ready = [c.status for c in node.status.conditions if c.type == "Ready"]
        assert ready == ["True"], f"{shape.name} conditions: {node.status.conditions}"
        assert node.status.node_info.kubelet_version == "v1.35.4"
        assert node.status.node_info.container_runtime_version.startswith("containerd://")
        alloc = node.status.allocatable
        assert parse_quantity(alloc["cpu"]) == Decimal(shape.cpu_millis) / 1000, (shape.name, alloc)
        assert parse_quantity(alloc["memory"]) == shape.memory_mib << 20, (shape.name, alloc)
        root = f"/{shape.name}"
        quota = int(_cgroup_knob("cpu", root, "cpu.cfs_quota_us"))
        period = int(_cgroup_knob("cpu", root, "cpu.cfs_period_us"))
        assert Decimal(quota) / period == Decimal(shape.cpu_millis) / 1000
        assert int(_cgroup_knob("memory", root, "memory.limit_in_bytes")) == shape.memory_mib << 20


def test_pod_runs_a_real_process_to_completion_held_to_its_nodes_quota(
    rcluster: RealCluster, unique: Callable[[str], str]
) -> None:
    shape = min(rcluster.shapes, key=lambda s: s.cpu_millis)
    root = f"/{shape.name}"
    name = unique("busy")
    throttled_before = _throttled_periods(root)
    # Two spinning threads would take two cores; the node's quota is a fraction of one.
    rcluster.create_pod(busy_pod(name, node=shape.name, threads=2, seconds=8))
    assert rcluster.wait_pod_bound(name, timeout=60) == shape.name
    rcluster.wait_pod_phase(name, "Running", timeout=60)

    def busy_in_node_cgroup() -> bool | None:
        return True if any("/busy" in c for c in _cmdlines(nodes.cgroup_pids(root))) else None

    rcluster.poll(busy_in_node_cgroup, timeout=10, what=f"the busy process inside cgroup {root}")
    pod = rcluster.wait_pod_phase(name, "Succeeded", timeout=90)
    assert pod.status.container_statuses[0].state.terminated.reason == "Completed"
    fields = dict(kv.split("=") for kv in rcluster.core.read_namespaced_pod_log(name, "default").split())
    cpu_share = float(fields["cpu_s"]) / float(fields["wall_s"])
    # The machine is shared, so the process may get less than the quota, never more (plus one period's slack).
    assert cpu_share <= shape.cpu_millis / 1000 * 1.15 + 0.02, fields
    assert _throttled_periods(root) > throttled_before
    rcluster.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)


def test_controller_manager_runs_deployments_and_creates_service_accounts(
    rcluster: RealCluster, unique: Callable[[str], str]
) -> None:
    ns = unique("ns")
    rcluster.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    # Nobody but the controller-manager creates a new namespace's `default` ServiceAccount here.
    rcluster.poll(lambda: rcluster.core.list_namespaced_service_account(ns).items or None, timeout=30,
                  what=f"ServiceAccount in {ns}")  # fmt: skip
    labels = {"app": "sleeper"}
    template = client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels=labels),
        spec=client.V1PodSpec(containers=[client.V1Container(
            name="s", image=BUSY_IMAGE, image_pull_policy="Never", args=["-threads", "1", "-seconds", "3600"],
            resources=client.V1ResourceRequirements(requests={"cpu": "10m", "memory": "8Mi"}),
        )]),
    )  # fmt: skip
    deployment = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="sleeper"),
        spec=client.V1DeploymentSpec(
            replicas=2, selector=client.V1LabelSelector(match_labels=labels), template=template
        ),
    )
    client.AppsV1Api(rcluster.api).create_namespaced_deployment(ns, deployment)

    def running() -> list[client.V1Pod] | None:
        pods = rcluster.core.list_namespaced_pod(ns, label_selector="app=sleeper").items
        up = [p for p in pods if p.status.phase == "Running"]
        return up if len(up) == 2 else None

    pods = rcluster.poll(running, timeout=90, what="2 Running pods of the Deployment")
    assert all(p.status.pod_ip and p.status.pod_ip.startswith("10.244.") for p in pods)
    rcluster.core.delete_namespace(ns)
    # Namespace deletion goes through the controller-manager's namespace controller and the kubelets.
    rcluster.poll(lambda: True if not rcluster.core.list_namespaced_pod(ns).items else None, timeout=60,
                  what=f"pods of {ns} deleted")  # fmt: skip


def test_scheduling_continues_on_the_other_nodes_when_a_kubelet_dies(
    rcluster: RealCluster, deployed: RealCluster, acting_migration: str, workloads_image: str,
    unique: Callable[[str], str], tmp_path: Path,
) -> None:
    # A worker: not the node of the one migration controller (it keeps running there, but its Service and
    # leadership would be what this test is about then).
    controller_node = drsched.pods_of(rcluster, "drsched-migration")[0].spec.node_name
    shape = min((s for s in rcluster.shapes if s.name != controller_node), key=lambda s: s.cpu_millis)
    victim = rcluster.node(shape.name)
    assert victim.kubelet is not None and victim.kubelet.proc is not None
    metrics = acting_migration
    job = unique("orphan")
    rcluster.create_pod(drsched.migratable_job(job, image=workloads_image, node=victim.name, units=100000,
                                               work=20000, state_dir=drsched.state_dir(tmp_path, "state")))
    rcluster.wait_pod_phase(job, "Running", timeout=90)
    not_slow = drsched.controller_count(metrics, "drsched_migration_skipped_total", reason="not-slow")
    rcluster.poll(lambda: True if drsched.controller_count(metrics, "drsched_migration_skipped_total",
                                                           reason="not-slow") > not_slow else None,
                  timeout=60, what="the controller seeing the job on the victim at full speed")  # fmt: skip
    started = drsched.controller_count(metrics, "drsched_migration_started_total")
    os.kill(victim.kubelet.proc.pid, signal.SIGKILL)
    victim.kubelet.proc.wait(timeout=10)
    try:

        def not_ready() -> bool | None:
            node = rcluster.core.read_node(victim.name)
            ready = [c.status for c in node.status.conditions if c.type == "Ready"]
            return True if ready != ["True"] else None

        # The controller-manager marks it after --node-monitor-grace-period (20 s here).
        rcluster.poll(not_ready, timeout=90, what=f"node {victim.name} NotReady after its kubelet died")
        # Its job still runs (containerd does) and now crawls: a slow job the controller would move, were its
        # node not dead (an Eviction there would hang: no kubelet stops the container).
        nodes.limit_cgroup(victim.cgroup_root, cpu_millis=shape.cpu_millis // 10, memory_bytes=shape.memory_mib << 20)
        skipped = drsched.controller_count(metrics, "drsched_migration_skipped_total", reason="node-not-ready")
        rcluster.poll(lambda: True if drsched.controller_count(metrics, "drsched_migration_skipped_total",
                                                               reason="node-not-ready") >= skipped + 8 else None,
                      timeout=60, what="the controller skipping the dead node's job for 8 cycles")  # fmt: skip
        assert drsched.controller_count(metrics, "drsched_migration_started_total") == started
        names = {p.metadata.name for p in rcluster.core.list_namespaced_pod("default").items}
        assert f"{job}-m1" not in names and job in names
        leases = client.CoordinationV1Api(rcluster.api).list_namespaced_lease("default").items
        assert not [le for le in leases if job in le.metadata.name]

        # The extender stops trusting the dead node's agent (still running, still answering): its usage goes
        # stale, and /readyz and the per-node metric say which node and why. Each replica watches and ages
        # usage on its own, so one may mark the node a few seconds after another: ask each replica directly
        # (the Service would answer from either), wait for it, then require exactly the victim.
        expected = {n.name: float(n.name == victim.name) for n in rcluster.nodes}
        replicas = [p for p in drsched.pods_of(rcluster, "drsched-extender") if p.spec.node_name != victim.name]
        assert replicas
        for extender in replicas:
            readyz = f"http://{extender.status.pod_ip}:8888/readyz"

            def stale(url: str = readyz) -> dict | None:
                entry = ((drsched.get_json(url) or {}).get("stale_nodes") or {}).get(victim.name)
                return entry if entry and entry["error"] == "node_not_ready" else None

            entry = rcluster.poll(stale, timeout=150, what=f"{victim.name} stale in {readyz}")
            assert "Ready=" in entry["detail"], entry
            ready_now = drsched.get_json(readyz) or {}
            assert ready_now["status"] == "ready" and set(ready_now["stale_nodes"]) == {victim.name}, ready_now

            def flags(ip: str = extender.status.pod_ip) -> dict[str, float]:
                text = drsched.get_text(f"http://{ip}:8888/metrics")
                return {n.name: sum_samples(parse_metrics(text), "drsched_extender_node_usage_stale", node=n.name)
                        for n in rcluster.nodes}

            rcluster.poll(lambda f=flags: True if f()[victim.name] == 1.0 else None, timeout=60,
                          what=f"{extender.metadata.name} marking {victim.name} stale in its metrics")  # fmt: skip
            assert flags() == expected

        # drsched goes on scheduling, on the other nodes.
        names = [unique(f"after-{i}") for i in range(3)]
        for name in names:
            pod = busy_pod(name, node="", threads=1, seconds=1)
            pod.spec.node_selector = None
            pod.spec.scheduler_name = "drsched"
            rcluster.create_pod(pod)
        for name in names:
            assert rcluster.wait_pod_bound(name, timeout=60) != victim.name
            rcluster.wait_pod_phase(name, "Succeeded", timeout=90)
            rcluster.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
    finally:
        # Opted out first, so the controller never moves it once its node is back (the test only deletes it).
        rcluster.core.patch_namespaced_pod(job, "default", {"metadata": {"labels": {"drsched.io/migrate": "false"}}},
                                           _content_type="application/merge-patch+json")
        nodes.limit_cgroup(victim.cgroup_root, cpu_millis=shape.cpu_millis, memory_bytes=shape.memory_mib << 20)
        rcluster.components[f"kubelet-{victim.name}"] = victim.start_kubelet()
        rcluster.poll(lambda: rcluster.node_ready(victim.name), timeout=90, what=f"node {victim.name} Ready again")
    rcluster.core.delete_namespaced_pod(job, "default", grace_period_seconds=0)
