"""Host isolation (`RealCluster(isolation=...)`, issue #21): the control plane and the node runtimes on the
system CPUs, the job nodes' pods on the node CPUs, node quotas scaled to fit with cpu.shares by quota, the
drsched pods' node tainted, and nothing left behind.

It starts its own isolated cluster (before the package's shared one: `conftest.pytest_collection_modifyitems`
runs tests that do not use it first) and reads the answers from the kernel, not from the harness's intent:
`/proc/<pid>/status` `Cpus_allowed_list` and the cgroup files.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from kubernetes import client

from harness import hostres, isolation, nodes, placement
from harness.cluster import Binaries
from harness.isolation import Isolation
from harness.realcluster import BUSY_IMAGE, NodeBinaries, RealCluster

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes]
CONTROL_PLANE = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-proxy", "kube-scheduler")


def _cpus_of(pid: int) -> set[int]:
    status = Path(f"/proc/{pid}/status").read_text()
    return set(isolation.parse_cpu_list(placement.parse_status_field(status, "Cpus_allowed_list")))


def _cgroup_file(hierarchy: str, path: str, name: str) -> str:
    return (nodes.CGROUP_FS / hierarchy / path.strip("/") / name).read_text().strip()


def _burner(name: str, *, node: str | None) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(node_name=node, termination_grace_period_seconds=1, containers=[client.V1Container(
            name="b", image=BUSY_IMAGE, image_pull_policy="Never", args=["-threads", "1", "-seconds", "600"],
        )]),
    )  # fmt: skip


def test_isolated_cluster_keeps_system_and_pods_on_disjoint_cpus(
    node_binaries: NodeBinaries, controlplane_binaries: Binaries, tmp_path: Path
) -> None:
    iso = Isolation.for_this_machine()
    system_cpus, node_cpus = (set(isolation.parse_cpu_list(c)) for c in (iso.system_cpus, iso.node_cpus))
    caller_cpus = _cpus_of(os.getpid())
    before = hostres.snapshot()
    cluster = RealCluster(workdir=tmp_path / "cluster", binaries=controlplane_binaries, node_binaries=node_binaries,
                          isolation=iso)  # fmt: skip
    try:
        cluster.start()
        # The quotas fit the node set (100/200/200/400 m on this 2-core machine), allocatable says so.
        assert sum(s.cpu_millis for s in cluster.shapes) <= iso.node_budget_millis
        if len(node_cpus) == 1:
            assert [s.cpu_millis for s in cluster.shapes] == [100, 200, 200, 400]
        for node in cluster.nodes:
            millis = node.shape.cpu_millis
            quota = millis * nodes.CFS_PERIOD_US // 1000
            assert _cgroup_file("cpu", node.cgroup_root, "cpu.cfs_quota_us") == str(quota)
            assert _cgroup_file("cpu", node.cgroup_root, "cpu.shares") == str(isolation.cpu_shares(millis))
            assert _cgroup_file("cpuset", node.cgroup_root, "cpuset.cpus") == iso.node_cpus
            assert _cgroup_file("cpuset", node.runtime_cgroup, "cpuset.cpus") == iso.system_cpus
            assert cluster.allocatable(node.name)["cpu"] == f"{millis}m"
        assert cluster.system_node is not None
        assert _cgroup_file("cpuset", cluster.system_node.cgroup_root, "cpuset.cpus") == iso.system_cpus
        taints = cluster.core.read_node(cluster.system_node.name).spec.taints or []
        # (The controller-manager may still be lifting its own not-ready taint: ours must be there, whatever else.)
        assert (nodes.SYSTEM_TAINT["key"], nodes.SYSTEM_TAINT["effect"]) in [(t.key, t.effect) for t in taints]

        # One pod placed by hand on the largest node, one by the default scheduler (never on the system node).
        cluster.create_pod(_burner("pinned", node=cluster.nodes[-1].name))
        cluster.create_pod(_burner("scheduled", node=None))
        for name in ("pinned", "scheduled"):
            pod = cluster.wait_pod_phase(name, "Running", timeout=90)
            assert pod.spec.node_name in {n.name for n in cluster.nodes}
        time.sleep(1.0)  # let the busy loops run, so a pod process really exists below its sandbox

        rows = cluster.placement()
        control = {name: cluster.components[name].proc.pid for name in CONTROL_PLANE}
        control |= {f"kubelet-{n.name}": cluster.components[f"kubelet-{n.name}"].proc.pid for n in cluster.all_nodes()}
        for name, pid in control.items():
            assert _cpus_of(pid) == system_cpus, name
            assert placement.parse_proc_cgroup(Path(f"/proc/{pid}/cgroup").read_text())["cpuset"] in (
                isolation.SYSTEM_CGROUP, f"/{name.removeprefix('kubelet-')}.runtime"), name
        pod_rows = [r for r in rows if r.component in ("pod default/pinned", "pod default/scheduled")]
        assert {r.component for r in pod_rows} == {"pod default/pinned", "pod default/scheduled"}, rows
        for row in pod_rows:
            assert _cpus_of(row.pid) == node_cpus, row
            assert not _cpus_of(row.pid) & system_cpus
        assert _cpus_of(os.getpid()) == system_cpus  # the caller (this test) is pinned too
        assert cluster.write_placement(tmp_path / "placement.json") == []
        assert "pod default/pinned" in (tmp_path / "placement.json").read_text()
    finally:
        cluster.close()
    assert hostres.snapshot().added_since(before) == {}
    assert _cpus_of(os.getpid()) == caller_cpus
