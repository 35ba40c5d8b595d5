"""A new model put in service by a rolling upgrade of the extender while pods are being scheduled, on real
nodes: not one scheduling request is dropped (issue #25, deliverable 2).

The shipped Deployment (2 replicas, ``maxUnavailable: 0``, ``--shutdown-drain-s=5``) is rolled to another
model with ``kubectl set env`` while pods arrive every half second for the drsched kube-scheduler (on the
host, calling the extender through its Service's ClusterIP, as in a cluster). Every pod must be bound, with
no FailedScheduling Event, and every pod must have been answered by the extender: its UID is in the decision
log that every replica writes to one host directory (a serve row, one per prioritize answered, or a filter
row where filtering left one node). With ``ignorable: true`` a dropped extender call still binds the pod,
only without drsched, so binding alone would prove nothing. The log must also show both models serving, the
old one before and the new one after, and ``/readyz`` of the new replicas names the new model.

What it does not show: that the drain is needed at this rate. Run once with the manifest's drain set to 0
(2026-12-03), it also saw every one of 110 pods answered: the window the drain closes (a new connection
before kube-proxy drops the endpoint, a request racing the close of a kept one) is narrow at two pods a
second. ``tests/integration/extender/test_extender_drain.py`` shows the drain's behaviour itself.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client

from harness.realcluster import BUSY_IMAGE, RealCluster
from lab.kube import scored_uids
from policy.decisionlog import read_log

from .drsched import NS, get_json, pods_of

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes, pytest.mark.timeout(900)]
EXTENDER = "drsched-extender"
LOG_MOUNT = "/var/lib/drsched/decisions"
EXTENDER_UID = 65534  # the manifest's runAsUser
NEW_MODEL = "/app/policy/models/original-world.npz"  # shipped in the image beside default.npz
EVERY_S = 0.5


def rollout(cluster: RealCluster) -> None:
    done = cluster.kubectl("-n", NS, "rollout", "status", f"deployment/{EXTENDER}", "--timeout=300s", timeout=320)
    assert done.returncode == 0, f"rollout did not finish: {done.stderr}"


def with_decision_log(template: client.V1PodTemplateSpec, host_dir: Path) -> None:
    spec = template.spec
    container = spec.containers[0]
    container.args = [*container.args, f"--decision-log-dir={LOG_MOUNT}"]
    container.volume_mounts = [*(container.volume_mounts or []),
                               client.V1VolumeMount(name="e2e-decisions", mount_path=LOG_MOUNT)]  # fmt: skip
    spec.volumes = [*(spec.volumes or []), client.V1Volume(
        name="e2e-decisions", host_path=client.V1HostPathVolumeSource(path=str(host_dir), type="Directory"))]


def short_pod(name: str) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"drsched.io/e2e": "rollout"}),
        spec=client.V1PodSpec(
            scheduler_name="drsched", restart_policy="Never", termination_grace_period_seconds=0,
            containers=[client.V1Container(
                name="busy", image=BUSY_IMAGE, image_pull_policy="Never", args=["-threads", "1", "-seconds", "1"],
                resources=client.V1ResourceRequirements(requests={"cpu": "10m", "memory": "16Mi"}),
            )],
        ),
    )  # fmt: skip


def readyz_versions(cluster: RealCluster) -> set[str]:
    return {(get_json(f"http://{p.status.pod_ip}:8888/readyz") or {}).get("version", "?")
            for p in pods_of(cluster, EXTENDER) if p.status.pod_ip and not p.metadata.deletion_timestamp}


def test_a_new_model_rolled_out_while_pods_are_scheduled_drops_no_request(
    deployed: RealCluster, unique: Callable[[str], str], tmp_path: Path
) -> None:
    apps = client.AppsV1Api(deployed.api)
    original = apps.read_namespaced_deployment(EXTENDER, NS)
    assert original.spec.replicas >= 2 and original.spec.strategy.rolling_update.max_unavailable == 0
    host_dir = Path(f"/var/lib/drsched-e2e/{unique('decisions')}")
    host_dir.mkdir(parents=True)
    os.chown(host_dir, EXTENDER_UID, EXTENDER_UID)
    names: list[str] = []
    try:
        # The decision log on: a rollout of its own, before anything is measured.
        logged = apps.read_namespaced_deployment(EXTENDER, NS)
        with_decision_log(logged.spec.template, host_dir)
        apps.replace_namespaced_deployment(EXTENDER, NS, logged)
        rollout(deployed)
        # `rollout status` returns while the old replicas still drain (and answer, without the log): wait them out
        deployed.poll(lambda: True if not any(p.metadata.deletion_timestamp for p in pods_of(deployed, EXTENDER))
                      else None, timeout=60, what="the replicas without the decision log gone")  # fmt: skip
        (old_version,) = readyz_versions(deployed)

        stop, errors = threading.Event(), []

        def submit() -> None:
            while not stop.is_set() or len(names) < 10:
                name = unique(f"roll-{len(names):03d}")
                try:
                    deployed.create_pod(short_pod(name))
                except Exception as exc:  # noqa: BLE001 -- reported by the test, never lost in the thread
                    errors.append(f"{name}: {exc}")
                    return
                names.append(name)
                time.sleep(EVERY_S)

        submitter = threading.Thread(target=submit, name="submit", daemon=True)
        submitter.start()
        deployed.poll(lambda: True if len(names) >= 6 else None, timeout=60, what="the first pods submitted")
        started = time.monotonic()
        changed = deployed.kubectl("-n", NS, "set", "env", f"deployment/{EXTENDER}", f"DRSCHED_MODEL_PATH={NEW_MODEL}")
        assert changed.returncode == 0, changed.stderr
        rollout(deployed)
        rolled_s = time.monotonic() - started
        during = len(names)
        time.sleep(3)  # a few pods after, on the new replicas alone
        stop.set()
        submitter.join(timeout=60)
        assert not errors, errors

        new_versions = readyz_versions(deployed)
        assert new_versions and old_version not in new_versions, (old_version, new_versions)
        uids = {}
        for name in names:
            deployed.wait_pod_bound(name, timeout=120)
            uids[name] = deployed.core.read_namespaced_pod(name, "default").metadata.uid
        failed = [e for e in deployed.core.list_namespaced_event("default").items
                  if e.reason == "FailedScheduling" and e.involved_object.name in uids]
        assert not failed, [f"{e.involved_object.name}: {e.message}" for e in failed]

        def all_logged() -> set[str] | None:  # each replica flushes its rows within a second
            missing = set(uids.values()) - scored_uids(host_dir)
            return None if missing else set()

        try:
            deployed.poll(all_logged, timeout=30, what="every pod in the decision log")
        except TimeoutError:
            missing = sorted(n for n, u in uids.items() if u not in scored_uids(host_dir))
            pytest.fail(f"{len(missing)} of {len(names)} pods were placed without the extender's answer (a dropped "
                        f"request) during a {rolled_s:.0f} s rollout: {missing}")
        versions = [r.data["model_version"] for r in read_log(host_dir).decisions
                    if r.data.get("uid") in set(uids.values())]
        assert old_version in versions and new_versions <= set(versions), (old_version, new_versions, set(versions))
        print(f"rollout to {NEW_MODEL}: {rolled_s:.0f} s, {during} pods submitted by its end, {len(names)} in all, "
              f"every one answered by the extender; versions {sorted(set(versions))}")
    finally:
        for name in names:
            deployed.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
        restored = apps.read_namespaced_deployment(EXTENDER, NS)
        restored.spec.template = original.spec.template
        apps.replace_namespaced_deployment(EXTENDER, NS, restored)
        rollout(deployed)
        shutil.rmtree(host_dir, ignore_errors=True)
        with contextlib.suppress(OSError):  # the parent too, unless another run still uses it
            host_dir.parent.rmdir()
