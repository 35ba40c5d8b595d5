"""RealCluster's isolation option before anything starts: the default is untouched, the isolated one scales its
nodes, places them and starts control-plane processes inside the system cgroup."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import isolation, nodes
from harness.cluster import Binaries
from harness.isolation import Isolation
from harness.procs import Component
from harness.realcluster import NodeBinaries, RealCluster
from policy.labworld import REAL_NODES


def _cluster(tmp_path: Path, iso: Isolation | None) -> RealCluster:
    return RealCluster(workdir=tmp_path, binaries=Binaries(Path("/bin")),
                       node_binaries=NodeBinaries(bin_dir=Path("/bin"), images=()), isolation=iso)  # fmt: skip


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    argvs: list[list[str]] = []
    monkeypatch.setattr(Component, "start", lambda self: argvs.append(self.argv))
    return argvs


def test_without_isolation_nothing_changes(tmp_path: Path, started: list[list[str]]) -> None:
    cluster = _cluster(tmp_path, None)
    assert cluster.shapes == REAL_NODES and cluster.all_nodes() == []
    assert cluster._node_cpus(REAL_NODES[0], system=False) is None
    cluster._add("etcd", ["/bin/etcd", "--x"])
    assert started == [["/bin/etcd", "--x"]]


def test_isolated_nodes_are_scaled_and_placed(tmp_path: Path, started: list[list[str]]) -> None:
    iso = Isolation(system_cpus="0", node_cpus="1")
    cluster = _cluster(tmp_path, iso)
    assert [s.cpu_millis for s in cluster.shapes] == [100, 200, 200, 400]
    job = cluster._node_cpus(cluster.shapes[-1], system=False)
    assert job == nodes.CpuPlacement(pods="1", runtime="0", shares=isolation.cpu_shares(400))
    assert cluster._node_cpus(iso.system_shape(), system=True) == nodes.CpuPlacement(pods="0", runtime="0",
                                                                                    shares=None)  # fmt: skip
    cluster._add("etcd", ["/bin/etcd", "--x"])
    assert started == [nodes.cgroup_join_argv(isolation.SYSTEM_CGROUP, ["/bin/etcd", "--x"])]


def test_a_system_process_starts_in_the_system_cgroup_and_links_are_not_scaled(
        tmp_path: Path, started: list[list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    from policy.labworld import MULTI_NODES

    cluster = RealCluster(workdir=tmp_path, binaries=Binaries(Path("/bin")), shapes=MULTI_NODES,
                          node_binaries=NodeBinaries(bin_dir=Path("/bin"), images=()),
                          isolation=Isolation(system_cpus="0", node_cpus="1"))  # fmt: skip
    assert [(s.cpu_millis, s.net_mbit) for s in cluster.shapes] == [(100, 80), (200, 20), (200, 20), (400, 10)]
    cluster.start_system_process("drsched-source", ["python", "-m", "workloads", "source"])
    assert started == [nodes.cgroup_join_argv(isolation.SYSTEM_CGROUP, ["python", "-m", "workloads", "source"])]
    stopped = []
    monkeypatch.setattr(Component, "stop", lambda self: stopped.append(self.name))
    cluster.stop_system_process("drsched-source")
    cluster.stop_system_process("drsched-source")  # gone already: nothing
    assert stopped == ["drsched-source"] and "drsched-source" not in cluster.components
