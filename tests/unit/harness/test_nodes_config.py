"""A real node's rendered configuration: allocatable math, per-node isolation, and the required settings."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from harness import nodes
from harness.hostres import Snapshot
from policy.labworld import REAL_NODES, RealNodeShape


def _node(index: int, shape: RealNodeShape) -> nodes.RealNode:
    env = nodes.NodeEnv(
        kubelet_bin="/bin/kubelet", api_url="https://192.0.2.2:6443", ca_cert=Path("/pki/ca.crt"),
        client_cert=Path("/pki/n.crt"), client_key=Path("/pki/n.key"), node_ip="192.0.2.2", index=index,
    )  # fmt: skip
    return nodes.RealNode(shape, env=env, workdir=Path(f"/w/{shape.name}"), logs=Path("/w/logs"))


@pytest.mark.parametrize(
    ("cpus", "mem_kib", "cpu_millis", "memory_mib", "want_cpu", "want_mem"),
    [
        (2, 24_000_000, 250, 768, "1750m", f"{24_000_000 - (768 + 100) * 1024}Ki"),
        (2, 24_000_000, 2000, 1024, "0m", f"{24_000_000 - (1024 + 100) * 1024}Ki"),
        (1, 1_000_000, 2000, 2048, "0m", "0Ki"),  # a node bigger than the machine reserves nothing
    ],
)
def test_system_reserved_leaves_exactly_the_quota_allocatable(
    monkeypatch: pytest.MonkeyPatch,
    cpus: int,
    mem_kib: int,
    cpu_millis: int,
    memory_mib: int,
    want_cpu: str,
    want_mem: str,
) -> None:
    monkeypatch.setattr(nodes, "machine_cpus", lambda: cpus)
    monkeypatch.setattr(nodes, "machine_memory_bytes", lambda: mem_kib * 1024)
    node = _node(0, RealNodeShape("n", "n", cpu_millis, memory_mib))
    assert node.system_reserved() == {"cpu": want_cpu, "memory": want_mem}


def test_each_node_gets_its_own_runtime_network_and_ports() -> None:
    rendered = [_node(i, s) for i, s in enumerate(REAL_NODES)]
    for attr in ("bridge", "subnet", "kubelet_port", "healthz_port", "socket", "cgroup_root"):
        values = [getattr(n, attr) for n in rendered]
        assert len(set(values)) == len(values), attr
    for node in rendered:
        containerd = tomllib.loads(node._containerd_config())
        cri = containerd["plugins"]["io.containerd.grpc.v1.cri"]
        assert cri["restrict_oom_score_adj"] is True
        assert cri["sandbox_image"] == nodes.PAUSE_IMAGE
        assert cri["cni"]["conf_dir"].startswith(str(node.dir))
        assert (containerd["root"], containerd["state"]) == (str(node.image_store), str(node.data / "containerd/state"))
        kubelet = node._kubelet_config()
        assert (kubelet["failCgroupV1"], kubelet["failSwapOn"], kubelet["cgroupDriver"]) == (False, False, "cgroupfs")
        assert kubelet["cgroupRoot"] == f"/{node.name}"
        assert kubelet["containerRuntimeEndpoint"] == f"unix://{node.socket}"


def test_snapshot_diff_lists_only_what_was_added() -> None:
    empty = frozenset[str]()
    before = Snapshot(mounts=frozenset({"/"}), cgroups=empty, links=frozenset({"lo"}), netns=empty, iptables=empty)
    after = Snapshot(
        mounts=frozenset({"/", "/w/rootfs"}), cgroups=frozenset({"cpu/rn-small"}), links=frozenset({"lo"}),
        netns=empty, iptables=empty,
    )  # fmt: skip
    assert after.added_since(before) == {"mounts": ["/w/rootfs"], "cgroups": ["cpu/rn-small"]}
    assert before.added_since(after) == {}


def test_unavailable_reason_names_what_is_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(nodes.os, "geteuid", lambda: 1000)
    assert nodes.unavailable_reason() == "real nodes need root (running as uid 1000)"
    monkeypatch.setattr(nodes.os, "geteuid", lambda: 0)
    monkeypatch.setattr(nodes, "CGROUP_FS", tmp_path)  # a cgroup v2-only machine has none of the v1 hierarchies
    reason = nodes.unavailable_reason()
    assert reason is not None and "cgroup v1 hierarchies cpu, cpuacct" in reason
    for hierarchy in nodes.V1_HIERARCHIES:
        (tmp_path / hierarchy).mkdir()
        (tmp_path / hierarchy / "cgroup.procs").write_text("")
    monkeypatch.setattr(nodes.shutil, "which", lambda tool: None if tool == "runc" else f"/usr/bin/{tool}")
    reason = nodes.unavailable_reason()
    assert reason is not None and reason.startswith("real nodes need runc")


def test_nodes_carry_a_role_only_when_asked_and_the_system_node_is_tainted() -> None:
    shape = REAL_NODES[0]
    plain = _node(0, shape)
    assert plain.labels() == {nodes.NODE_TYPE_LABEL: shape.node_type}
    assert "registerWithTaints" not in plain._kubelet_config()
    job = nodes.RealNode(shape, env=plain.env, workdir=plain.dir, logs=plain.logs, role=nodes.JOB_ROLE)
    assert job.labels()[nodes.ROLE_LABEL] == nodes.JOB_ROLE and not job.system
    assert "registerWithTaints" not in job._kubelet_config()
    system = nodes.RealNode(shape, env=plain.env, workdir=plain.dir, logs=plain.logs, role=nodes.SYSTEM_ROLE)
    assert system.system and system.labels()[nodes.ROLE_LABEL] == nodes.SYSTEM_ROLE
    assert system._kubelet_config()["registerWithTaints"] == [nodes.SYSTEM_TAINT]
