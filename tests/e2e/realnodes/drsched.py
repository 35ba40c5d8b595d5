"""What the real-node tests add to `harness.deploy` (which deploys drsched for them and for the lab): this
run's monitor token and pinned images, an acting migration controller, job pods and the small HTTP helpers
the tests share.

`activate_migration` turns the shipped dry-run controller into an acting one with settings sized for a
short test. `NS`, `MONITOR_PORT`, `get_json` and `ImagesMissing` are `harness.deploy`'s, named here for the tests.
"""

from __future__ import annotations

import hashlib
import math
import os
import secrets
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

from kubernetes import client

from harness import deploy as harness_deploy
from harness.deploy import IMAGES, NS, find_images
from harness.deploy import MONITOR_PORT as MONITOR_PORT
from harness.deploy import ImagesMissing as ImagesMissing
from harness.deploy import get_json as get_json
from harness.extender_proc import parse_metrics, sum_samples
from harness.images.store import BuiltImage, write_index
from harness.realcluster import RealCluster

MIGRATION_PORT = 9848
MONITOR_TOKEN = secrets.token_hex(16)
# A short test's controller: cycles every 2 s, a job's rate trusted after 5 s, moved after 2 slow checks,
# at most once per job (a successor on a smaller node must not be chased from node to node).
MIGRATION_ARGS = [
    "--policy=demand-aware", "--interval-s=2", "--min-running-s=5", "--slow-checks=2", "--restore-cost-s=5",
    "--cooldown-s=0", "--max-per-job=1", "--stale-after-s=30", "--place-timeout-s=30", "--resume-timeout-s=120",
    "--lease-namespace=drsched-system", "--metrics-host=0.0.0.0", f"--metrics-port={MIGRATION_PORT}",
]  # fmt: skip


JOB_UID = 10001  # the workloads image's non-root user
PROGRESS_PORT = 8080


def get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310
        return resp.read().decode()


def pods_of(cluster: RealCluster, app: str) -> list[client.V1Pod]:
    return cluster.core.list_namespaced_pod(NS, label_selector=f"app.kubernetes.io/name={app}").items


def pin_images(built: list[BuiltImage], dest: Path) -> Path:
    """Copy the archives `ensure_images` just built for this checkout to `dest` (an image-cache root of this
    test run alone), checked against their recorded sha256: the shared cache holds one archive per tag, and
    another checkout's build on the same machine may replace it while this run's tests are still going."""
    pinned = {}
    for image in built:
        copy = dest / "pinned" / image.archive.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        with image.archive.open("rb") as src, copy.open("wb") as out:
            while chunk := src.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        if f"sha256:{digest.hexdigest()}" != image.archive_sha256:
            raise ImagesMissing(f"{image.archive} was replaced by another build while it was copied; run again")
        pinned[image.name] = replace(image, archive=copy)
    write_index(dest / "pinned" / "images.json", pinned)
    return dest


def import_images(cluster: RealCluster, *names: str, root: Path | None = None) -> dict[str, str]:
    """Import the named drsched images (from the image cache, or the pinned copies under `root`) into every
    node; name -> tag."""
    found = find_images(*names, root=root)
    cluster.import_images([image.archive for image in found.values()])
    return {name: image.tag for name, image in found.items()}


def deploy(cluster: RealCluster, *, images: Path | None = None) -> str:
    """`harness.deploy.deploy` from the images under `images` (None: the image cache), with this run's token."""
    archives = [image.archive for image in find_images(*IMAGES, root=images).values()]
    return harness_deploy.deploy(cluster, archives=archives, token=MONITOR_TOKEN)


def slowed_node(cluster: RealCluster) -> str:
    """The node whose CPU quota the migration tests cut to slow their job down: the largest."""
    return max(cluster.shapes, key=lambda s: s.cpu_millis).name


def activate_migration(cluster: RealCluster) -> client.V1Pod:
    """One acting (not dry-run) controller with `MIGRATION_ARGS`; returns its Running pod once it leads.

    It runs off `slowed_node`: what the tests slow down is the job, not the controller. On that node, cut to a
    tenth of a core, the controller starves beside the job it is to move; a liveness timeout restarts it and
    its counters start again from zero under the test that reads them (the likely cause of a CI run where the
    move completed and the outcome counter never rose: the controller had landed on the largest node)."""
    apps = client.AppsV1Api(cluster.api)
    away = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": [slowed_node(cluster)]}]}]}}}
    patch = {"spec": {"replicas": 1, "template": {"spec": {"affinity": away, "containers": [
        {"name": "controller", "args": MIGRATION_ARGS}]}}}}
    apps.patch_namespaced_deployment("drsched-migration", NS, patch,
                                     _content_type="application/strategic-merge-patch+json")

    def rolled_out() -> client.V1Pod | None:
        pods = [p for p in pods_of(cluster, "drsched-migration") if p.metadata.deletion_timestamp is None]
        if len(pods) != 1 or pods[0].status.phase != "Running" or "--dry-run" in pods[0].spec.containers[0].args:
            return None
        ready = any(c.type == "Ready" and c.status == "True" for c in pods[0].status.conditions or [])
        return pods[0] if ready and len(pods_of(cluster, "drsched-migration")) == 1 else None

    pod = cluster.poll(rolled_out, timeout=120, what="one acting migration controller")

    def leading() -> bool | None:
        try:
            text = get_text(f"http://{pod.status.pod_ip}:{MIGRATION_PORT}/metrics")
        except OSError:  # not serving yet: the Deployment has no readiness probe
            return None
        return True if "drsched_migration_leader 1.0" in text else None

    cluster.poll(leading, timeout=60, what="the migration controller holding its leader Lease")
    return pod


def cpu_units_for(seconds: float, *, work: int, trials: int = 200) -> int:
    """Units of ``workloads cpu --work=<work>`` that take about ``seconds`` of one core of THIS machine.

    A job sized by a guess finished in 6 s on a fast machine where the guess said 40, before the controller
    had trusted its rate. So the size comes from the speed measured here: the same SHA-256 chain a unit runs,
    timed in many short trials (well under a scheduler slice each, so some run uninterrupted even on a busy
    machine); the fastest is the core's speed when it has the CPU. A busy machine only makes the job run
    longer than ``seconds``, which the tests' timeouts allow for."""
    rounds = 500
    best = float("inf")
    for _ in range(trials):
        digest, start = b"drsched", time.perf_counter()
        for _ in range(rounds):
            digest = hashlib.sha256(digest).digest()
        best = min(best, (time.perf_counter() - start) / rounds)
    return max(1, math.ceil(seconds / (best * work)))


def job_args(state: str, *, units: int, work: int) -> list[str]:
    return ["cpu", f"--state-dir={state}", f"--units={units}", f"--work={work}", "--checkpoint-every=2"]


def migratable_job(name: str, *, image: str, node: str, state_dir: Path, units: int, work: int) -> client.V1Pod:
    """A `python -m workloads cpu` pod opted in to migration, placed on `node`, progress served over HTTP."""
    return client.V1Pod(
        metadata=client.V1ObjectMeta(
            name=name, labels={"drsched.io/migrate": "true", "drsched.io/workload": "cpu"},
            annotations={"drsched.io/progress-port": str(PROGRESS_PORT)},
        ),
        spec=client.V1PodSpec(
            restart_policy="Never",
            node_name=node,  # placed by hand; the successor goes through the scheduler (the template drops it)
            termination_grace_period_seconds=30,
            containers=[client.V1Container(
                name="job", image=image, image_pull_policy="Never",
                args=[*job_args("/state", units=units, work=work), f"--progress-port={PROGRESS_PORT}"],
                volume_mounts=[client.V1VolumeMount(name="state", mount_path="/state")],
                resources=client.V1ResourceRequirements(requests={"cpu": "100m", "memory": "64Mi"}),
            )],
            volumes=[client.V1Volume(
                name="state", host_path=client.V1HostPathVolumeSource(path=str(state_dir), type="Directory")
            )],
        ),
    )  # fmt: skip


def controller_count(metrics_url: str, name: str, **labels: str) -> float:
    return sum_samples(parse_metrics(get_text(metrics_url)), name, **labels)


def state_dir(tmp_path: Path, name: str) -> Path:
    state = tmp_path / name
    state.mkdir()
    os.chown(state, JOB_UID, JOB_UID)
    return state


def job_story(cluster: RealCluster, job: str) -> str:
    """The job's pods, the migration controller's restarts and its last log lines about the job, for a failure
    message."""
    lines = []
    for p in cluster.core.list_namespaced_pod("default").items:
        if p.metadata.name == job or p.metadata.name.startswith(f"{job}-m"):
            lines.append(cluster.describe_pod(p.metadata.name))
    for p in pods_of(cluster, "drsched-migration"):
        restarts = sum(c.restart_count for c in p.status.container_statuses or [])
        lines.append(f"controller {p.metadata.name} on {p.spec.node_name}: restarts {restarts}")
    logs = cluster.kubectl("-n", NS, "logs", "deployment/drsched-migration", "--tail=400", timeout=60)
    lines += [line for line in logs.stdout.splitlines() if job in line][-30:]
    return "\n".join(lines)
