"""drsched's own workloads run as real pods from the workloads image built here, with their state on a
hostPath volume (standing in for shared storage) that outlives the pod."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client

from harness import nodes
from harness.realcluster import RealCluster

from .drsched import cpu_units_for

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes]
JOB_UID = 10001  # the workloads image's non-root user
UNITS, WORK = 20, 20000


def cpu_job(name: str, *, image: str, node: str, state_dir: Path) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"drsched.io/workload": "cpu"}),
        spec=client.V1PodSpec(
            restart_policy="Never",
            node_selector={"kubernetes.io/hostname": node},
            containers=[client.V1Container(
                name="job", image=image, image_pull_policy="Never",
                args=["cpu", "--state-dir=/state", f"--units={UNITS}", f"--work={WORK}"],
                volume_mounts=[client.V1VolumeMount(name="state", mount_path="/state")],
                resources=client.V1ResourceRequirements(requests={"cpu": "100m", "memory": "64Mi"}),
            )],
            volumes=[client.V1Volume(
                name="state", host_path=client.V1HostPathVolumeSource(path=str(state_dir), type="Directory")
            )],
        ),
    )  # fmt: skip


def test_cpu_job_pod_completes_and_its_output_matches_a_local_run(
    rcluster: RealCluster, workloads_image: str, unique: Callable[[str], str], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    os.chown(state, JOB_UID, JOB_UID)
    name = unique("cpu")
    node = rcluster.shapes[-1].name
    rcluster.create_pod(cpu_job(name, image=workloads_image, node=node, state_dir=state))
    assert rcluster.wait_pod_bound(name, timeout=60) == node
    pod = rcluster.wait_pod_phase(name, "Succeeded", timeout=240)
    assert pod.status.container_statuses[0].state.terminated.exit_code == 0
    progress = json.loads((state / "progress.json").read_text())
    assert (progress["state"], progress["units_done"]) == ("done", UNITS)
    local = tmp_path / "local"
    subprocess.run(
        [sys.executable, "-m", "workloads", "cpu", f"--state-dir={local}", f"--units={UNITS}", f"--work={WORK}"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert (state / "output.json").read_bytes() == (local / "output.json").read_bytes()
    rcluster.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)


def _cpu_usage_s(cgroup: str) -> float:
    return int((nodes.CGROUP_FS / "cpuacct" / cgroup.strip("/") / "cpuacct.usage").read_text()) / 1e9


def test_two_cpu_jobs_on_one_node_share_that_nodes_quota(
    rcluster: RealCluster, workloads_image: str, unique: Callable[[str], str], tmp_path: Path
) -> None:
    shape = min(rcluster.shapes, key=lambda s: s.cpu_millis)
    names = [unique("cpu-a"), unique("cpu-b")]
    for name in names:
        state = tmp_path / name
        state.mkdir()
        os.chown(state, JOB_UID, JOB_UID)
        pod = cpu_job(name, image=workloads_image, node=shape.name, state_dir=state)
        pod.spec.containers[0].args = ["cpu", "--state-dir=/state", "--units=100000", f"--work={WORK}"]
        rcluster.create_pod(pod)
    pods = [rcluster.wait_pod_phase(name, "Running", timeout=90) for name in names]
    pod_cgroups = [f"/{shape.name}/kubepods/burstable/pod{p.metadata.uid}" for p in pods]
    start = [_cpu_usage_s(f"/{shape.name}"), *(_cpu_usage_s(c) for c in pod_cgroups)]
    t0 = time.monotonic()
    time.sleep(6)
    end = [_cpu_usage_s(f"/{shape.name}"), *(_cpu_usage_s(c) for c in pod_cgroups)]
    window = time.monotonic() - t0
    node_share, *pod_shares = [(e - s) / window for s, e in zip(start, end, strict=True)]
    # Both jobs progress, inside the node: together they never get more than the node's quota.
    assert all(share > 0 for share in pod_shares), pod_shares
    assert node_share <= shape.cpu_millis / 1000 * 1.15 + 0.02, (node_share, pod_shares)
    for name in names:
        rcluster.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)


def _job_pids(cluster: RealCluster, pod: client.V1Pod) -> list[int]:
    cgroup = f"/{pod.spec.node_name}/kubepods/burstable/pod{pod.metadata.uid}"
    found = []
    for pid in nodes.cgroup_pids(cgroup):
        try:
            if b"workloads" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found


def test_job_killed_with_sigkill_resumes_from_its_checkpoint_when_recreated(
    rcluster: RealCluster, workloads_image: str, unique: Callable[[str], str], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    os.chown(state, JOB_UID, JOB_UID)
    # ~15 s of work on the node (sized from this machine's measured speed), so the kill lands mid-run: a job
    # that finished first would prove nothing.
    units = max(20, cpu_units_for(15.0, work=WORK * 5))
    args = ["cpu", "--state-dir=/state", f"--units={units}", f"--work={WORK * 5}", "--checkpoint-units=2"]
    first = cpu_job(unique("kill9"), image=workloads_image, node=rcluster.shapes[-1].name, state_dir=state)
    first.spec.containers[0].args = args
    rcluster.create_pod(first)
    pod = rcluster.wait_pod_phase(first.metadata.name, "Running", timeout=90)

    def checkpointed() -> dict | None:
        try:
            done = json.loads((state / "progress.json").read_text()).get("checkpoint")
        except (OSError, ValueError):
            return None
        return done if done else None

    rcluster.poll(checkpointed, timeout=90, what="a first checkpoint")
    pids = rcluster.poll(lambda: _job_pids(rcluster, pod) or None, timeout=10, what="the job's process")
    for pid in pids:
        os.kill(pid, signal.SIGKILL)  # no SIGTERM, so no final checkpoint: only the periodic ones survive
    failed = rcluster.wait_pod_phase(first.metadata.name, "Failed", timeout=60)
    assert failed.status.container_statuses[0].state.terminated.exit_code == 137  # SIGKILL, not a clean exit
    second = cpu_job(unique("resume"), image=workloads_image, node=rcluster.shapes[-1].name, state_dir=state)
    second.spec.containers[0].args = args
    rcluster.create_pod(second)
    rcluster.wait_pod_phase(second.metadata.name, "Succeeded", timeout=240)
    progress = json.loads((state / "progress.json").read_text())
    assert progress["state"] == "done" and progress["resumed_from"] > 0, progress
    local = tmp_path / "local"
    subprocess.run(
        [sys.executable, "-m", "workloads", *[a.replace("/state", str(local)) for a in args]],
        check=True, capture_output=True, timeout=180,
    )  # fmt: skip
    assert (state / "output.json").read_bytes() == (local / "output.json").read_bytes()
    for name in (first.metadata.name, second.metadata.name):
        rcluster.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)


def _tbf_stats(dev: str) -> tuple[int, int]:
    """(bytes sent, overlimits) of the tbf qdisc on `dev`: overlimits count packets the bucket held back."""
    text = subprocess.run(["tc", "-s", "qdisc", "show", "dev", dev], capture_output=True, text=True).stdout
    words = text.replace(",", " ").replace(")", " ").split()
    return int(words[words.index("Sent") + 1]), int(words[words.index("overlimits") + 1])


def test_net_streams_into_one_node_share_its_shaped_link(
    rcluster: RealCluster, workloads_image: str, unique: Callable[[str], str], tmp_path: Path
) -> None:
    src = rcluster.node("rn-large")
    dst = rcluster.node("rn-medium")  # its inbound link (40 Mbit/s) is the one both streams share
    sink_state = tmp_path / "sink"
    sink_state.mkdir()
    os.chown(sink_state, JOB_UID, JOB_UID)
    sink = cpu_job(unique("sink"), image=workloads_image, node=dst.name, state_dir=sink_state)
    sink.spec.containers[0].args = ["sink", "--listen=0.0.0.0:9009", "--dir=/state"]
    rcluster.create_pod(sink)
    sink_ip = rcluster.wait_pod_phase(sink.metadata.name, "Running", timeout=90).status.pod_ip
    sent_before, _ = _tbf_stats(dst.bridge)
    units, chunk = 40, 262144
    jobs = []
    for i in range(2):
        state = tmp_path / unique(f"net{i}")
        state.mkdir()
        os.chown(state, JOB_UID, JOB_UID)
        job = cpu_job(state.name, image=workloads_image, node=src.name, state_dir=state)
        job.spec.containers[0].args = [
            "net", "--state-dir=/state", f"--units={units}", f"--chunk-bytes={chunk}",
            f"--sink={sink_ip}:9009", f"--stream={state.name}",
        ]  # fmt: skip
        rcluster.create_pod(job)
        jobs.append((job.metadata.name, state))
    progress = []
    for name, state in jobs:
        rcluster.wait_pod_phase(name, "Succeeded", timeout=180)
        progress.append(json.loads((state / "progress.json").read_text()))
    total = 2 * units * chunk
    span = max(p["updated_at"] for p in progress) - min(p["started_at"] for p in progress)
    link_bytes_per_s = dst.shape.net_mbit * 1e6 / 8
    sent_after, overlimits = _tbf_stats(dst.bridge)
    # Everything the jobs sent entered the sink's node through its shaped link, which held them back and capped them.
    assert sent_after - sent_before >= total
    assert overlimits > 0
    assert total / span <= link_bytes_per_s * 1.2, (total / span, link_bytes_per_s)
    for name in (sink.metadata.name, *(n for n, _ in jobs)):
        rcluster.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
