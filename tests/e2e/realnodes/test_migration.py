"""A real checkpointed job migrated by the deployed migration controller on real nodes.

A `python -m workloads cpu` pod (state on a hostPath volume, standing in for shared storage) runs on the
largest node and reports its progress over HTTP. Once the controller has seen its full-speed rate, the node's
CPU quota is cut to a sliver (a node slowed down for real, by what a noisy neighbour or a throttled VM does):
the job's measured rate falls, and the controller evicts it (SIGTERM: the job writes its final checkpoint)
and creates its successor `<job>-m1` on another node, which resumes from the checkpoint. The successor's
output is byte-identical to the same job run uninterrupted on the host.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client

from harness import nodes
from harness.errors import WaitTimeout
from harness.realcluster import RealCluster

from .drsched import controller_count, cpu_units_for, job_args, job_story, migratable_job, slowed_node, state_dir

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes]
WORK = 20000
JOB_S = 40.0  # of one core: long enough to be caught slow, short enough to finish (units sized from measured speed)
SLOW_MILLIS = 100  # the cut quota: a tenth of a core (the job expects about one)


def test_slow_job_is_checkpointed_and_resumed_on_another_node_with_identical_output(
    deployed: RealCluster, acting_migration: str, workloads_image: str, unique: Callable[[str], str],
    tmp_path: Path,
) -> None:
    cluster, metrics = deployed, acting_migration
    units = cpu_units_for(JOB_S, work=WORK)
    local = tmp_path / "local"
    # The uninterrupted run, on the host, while the pods run (it only has to finish by the end).
    reference = subprocess.Popen(
        ["nice", "-n", "5", sys.executable, "-m", "workloads", *job_args(str(local), units=units, work=WORK)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        shape = next(s for s in cluster.shapes if s.name == slowed_node(cluster))
        source = unique("mig")
        state = state_dir(tmp_path, "state")
        not_slow_before = controller_count(metrics, "drsched_migration_skipped_total", reason="not-slow")
        completed_before = controller_count(metrics, "drsched_migration_completed_total")
        job = migratable_job(source, image=workloads_image, node=shape.name, state_dir=state, units=units, work=WORK)
        cluster.create_pod(job)
        try:
            cluster.wait_pod_phase(source, "Running", timeout=90)
            # The controller trusts the job's rate after --min-running-s and then judges it not slow: it has seen
            # the full-speed rate it will expect from now on.
            cluster.poll(lambda: True if controller_count(metrics, "drsched_migration_skipped_total", reason="not-slow")
                         > not_slow_before else None, timeout=60, what="the controller seeing the job at full speed")
            nodes.limit_cgroup(f"/{shape.name}", cpu_millis=SLOW_MILLIS, memory_bytes=shape.memory_mib << 20)
            successor = f"{source}-m1"

            def created() -> client.V1Pod | None:
                try:
                    return cluster.core.read_namespaced_pod(successor, "default")
                except client.ApiException as exc:
                    if exc.status == 404:
                        return None
                    raise

            cluster.poll(created, timeout=120, what=f"successor {successor} created by the controller")
            # The protocol creates the successor only once the source object is gone (no two copies).
            with pytest.raises(client.ApiException):
                cluster.core.read_namespaced_pod(source, "default")
        finally:
            nodes.limit_cgroup(f"/{shape.name}", cpu_millis=shape.cpu_millis, memory_bytes=shape.memory_mib << 20)
        target = cluster.wait_pod_bound(successor, timeout=60)
        assert target != shape.name
        pod = cluster.wait_pod_phase(successor, "Succeeded", timeout=300)
        assert pod.metadata.annotations["drsched.io/migrated-from"] == source
        assert pod.metadata.labels["drsched.io/job"] == source
        progress = json.loads((state / "progress.json").read_text())
        assert progress["state"] == "done" and progress["units_done"] == units
        assert 0 < progress["resumed_from"] < units, progress  # resumed from the checkpoint, not from scratch
        # The controller saw the successor resume at or after the confirmed checkpoint: outcome completed.
        try:
            cluster.poll(lambda: True if controller_count(metrics, "drsched_migration_completed_total")
                         > completed_before else None, timeout=60, what="migration outcome completed")  # fmt: skip
        except WaitTimeout as exc:
            raise AssertionError(f"{exc}\n{job_story(cluster, source)}") from exc
        _, err = reference.communicate(timeout=300)
        assert reference.returncode == 0, err.decode()[-2000:]
        assert (state / "output.json").read_bytes() == (local / "output.json").read_bytes()
    finally:
        if reference.poll() is None:  # the test failed before it needed the reference run
            reference.kill()
            reference.wait()
    print(f"migrated {source}: {shape.name} -> {target}, resumed from unit {progress['resumed_from']}/{units}")  # noqa: T201
    cluster.core.delete_namespaced_pod(successor, "default", grace_period_seconds=0)
