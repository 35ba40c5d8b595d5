"""drsched deployed on a `RealCluster` as a user deploys it: the one implementation the real-node e2e tests
and the lab (`python -m lab`, `make demo`) share.

Why it exists: deploying drsched takes several steps that must stay in step with the manifests (images into
every node, the monitor token Secret before the agents start, the local-images overlay, waiting for the
rollouts and for the extender's /readyz through its Service, the host-side drsched kube-scheduler), and one
addition only the harness can make: each node's network device for the monitor's emulated-node view
(`--node-net-dev=<node>=<bridge>,...`; the overlay already passes `--node-view=cgroup
--node-cgroup=$(NODE_NAME)`). Callers change what is theirs (replicas, container args) in the rendered
objects before they are applied, through `customize`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path

import yaml
from kubernetes import client

from harness import nodes
from harness.errors import HarnessError
from harness.imagecache import find_image
from harness.images.store import BuiltImage
from harness.realcluster import RealCluster

log = logging.getLogger(__name__)

OVERLAY = Path(__file__).resolve().parents[1] / "manifests" / "overlays" / "local-images"
NS = "drsched-system"
TOKEN_SECRET = "drsched-monitor-token"
MONITOR_PORT = 9847
EXTENDER_PORT = 8888
IMAGES = ("extender", "monitor", "migration")
RENDERED = "drsched-local-images.yaml"  # under the cluster's workdir; undeploy deletes what it lists
# The pod templates that mount the token: a changed token must restart their pods (each reads it once).
_TOKEN_READERS = {("DaemonSet", "drsched-monitor"), ("Deployment", "drsched-extender")}
_SYSTEM_PODS = {("Deployment", "drsched-extender"), ("Deployment", "drsched-migration")}


class DeployError(HarnessError, RuntimeError):
    """drsched could not be deployed or removed; the message says which step failed."""


class ImagesMissing(DeployError):
    """An image the deployment needs is not in the image cache (`make images`)."""


def get_json(url: str, token: str | None = None) -> dict | None:
    """The JSON at ``url`` (Bearer ``token`` if given), or None when it does not answer with JSON."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=2) as resp:  # noqa: S310
            return json.loads(resp.read())
    except (OSError, ValueError):
        return None


def find_images(*names: str, root: Path | None = None) -> dict[str, BuiltImage]:
    """name -> its index record (tag, archive, build key) from the image cache (or the one under ``root``);
    every name must be there."""
    found = {name: find_image(name, root) for name in names}
    missing = [name for name, hit in found.items() if hit is None]
    if missing:
        raise ImagesMissing(f"IMAGES NOT BUILT: no {', '.join(missing)} image in the image cache; "
                            "run `make images` first")  # fmt: skip
    return {name: hit for name, hit in found.items() if hit is not None}


def render_overlay(cluster: RealCluster, *, token: str = "", customize: Callable[[list[dict]], None] | None = None
                   ) -> Path:  # fmt: skip
    """The overlay rendered by kustomize, each agent told its node's bridge, ``customize`` applied; its path."""
    done = cluster.kubectl("kustomize", str(OVERLAY), timeout=60)
    if done.returncode != 0:
        raise DeployError(f"kubectl kustomize {OVERLAY} failed: {done.stderr.strip()}")
    docs = [d for d in yaml.safe_load_all(done.stdout) if d]
    devices = ",".join(f"{n.name}={n.bridge}" for n in cluster.nodes)
    token_hash = hashlib.sha256(token.encode()).hexdigest()[:16]
    for doc in docs:
        key = (doc["kind"], doc["metadata"]["name"])
        if key == ("DaemonSet", "drsched-monitor"):
            doc["spec"]["template"]["spec"]["containers"][0]["args"].append(f"--node-net-dev={devices}")
        if key in _TOKEN_READERS:
            meta = doc["spec"]["template"].setdefault("metadata", {})
            meta.setdefault("annotations", {})["drsched.io/monitor-token-sha256"] = token_hash
    if customize is not None:
        customize(docs)
    if cluster.system_node is not None:
        place_on_system_node(docs)
    path = cluster.workdir / RENDERED
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def place_on_system_node(docs: list[dict]) -> None:
    """Under host isolation: the extender and the migration controller on the system node (its taint tolerated,
    its role selected), so neither takes a job node's CPU or allocatable; the controller only moves jobs to job
    nodes. The monitor agents go to the job nodes only: each reads its own node and is found by its node name,
    and their manifest tolerates every taint, so without a selector a fifth agent would run on the system node
    (and ``deploy`` would wait for one agent per job node until it timed out)."""
    for doc in docs:
        if (doc["kind"], doc["metadata"]["name"]) == ("DaemonSet", "drsched-monitor"):
            doc["spec"]["template"]["spec"].setdefault("nodeSelector", {})[nodes.ROLE_LABEL] = nodes.JOB_ROLE
            continue
        if (doc["kind"], doc["metadata"]["name"]) not in _SYSTEM_PODS:
            continue
        spec = doc["spec"]["template"]["spec"]
        spec.setdefault("nodeSelector", {})[nodes.ROLE_LABEL] = nodes.SYSTEM_ROLE
        spec.setdefault("tolerations", []).append({**nodes.SYSTEM_TAINT, "operator": "Equal"})
        if doc["metadata"]["name"] == "drsched-migration":
            args = spec["containers"][0].setdefault("args", [])
            if not any(a.startswith("--node-selector") for a in args):
                args.append(f"--node-selector={nodes.ROLE_LABEL}={nodes.JOB_ROLE}")


def deploy(cluster: RealCluster, *, archives: Iterable[Path], token: str,
           customize: Callable[[list[dict]], None] | None = None) -> str:  # fmt: skip
    """Import ``archives`` into every node, deploy drsched with ``token`` for the agents' per-pod readings,
    wait for it, start the host-side drsched kube-scheduler; returns the extender's Service URL."""
    cluster.import_images(list(archives))
    # As the monitor README says a user does: the token that lets the extender (and only it) read the agents'
    # per-pod usage, created before the agents start (they read it once, at start; a redeploy with another
    # token restarts them through the pod template's token hash).
    cluster.create_namespace(NS)
    cluster.core.delete_collection_namespaced_secret(NS, field_selector=f"metadata.name={TOKEN_SECRET}")
    cluster.core.create_namespaced_secret(NS, client.V1Secret(
        metadata=client.V1ObjectMeta(name=TOKEN_SECRET), string_data={"token": token}))  # fmt: skip
    rendered = render_overlay(cluster, token=token, customize=customize)
    done = cluster.kubectl("apply", "--server-side", "-f", str(rendered), timeout=120)
    if done.returncode != 0:
        raise DeployError(f"kubectl apply -f {rendered} failed: {done.stderr.strip()}")
    try:
        cluster.poll(lambda: _rolled_out(cluster), timeout=180,
                     what="monitor agents on every node, extender and migration rolled out")  # fmt: skip
    except TimeoutError as exc:
        raise DeployError(f"{exc}; pods: {pod_states(cluster)}") from None
    service = cluster.core.read_namespaced_service("drsched-extender", NS)
    url = f"http://{service.spec.cluster_ip}:{EXTENDER_PORT}/"
    cluster.poll(lambda: True if (get_json(url + "readyz") or {}).get("status") == "ready" else None,
                 timeout=120, what=f"extender ready through its Service {url}")  # fmt: skip
    config = cluster.render_scheduler_config("drsched-scheduler.yaml", extender_url=url)
    cluster.start_scheduler("drsched-scheduler", config_path=config)
    log.info("drsched deployed extender_url=%s nodes=%d", url, len(cluster.nodes))
    return url


def _rolled_out(cluster: RealCluster) -> bool | None:
    """Every agent and at least one replica of each Deployment on the current spec, no old pod left."""
    apps = client.AppsV1Api(cluster.api)
    ds = apps.read_namespaced_daemon_set("drsched-monitor", NS)
    s = ds.status
    ok = (s.observed_generation or 0) >= ds.metadata.generation and s.desired_number_scheduled == len(cluster.nodes)
    ok = ok and s.updated_number_scheduled == s.number_available == s.desired_number_scheduled
    for name in ("drsched-extender", "drsched-migration"):
        dep = apps.read_namespaced_deployment(name, NS)
        want, d = min(1, dep.spec.replicas or 0), dep.status
        ok = ok and (d.observed_generation or 0) >= dep.metadata.generation
        ok = ok and (d.updated_replicas or 0) >= want and (d.available_replicas or 0) >= want
        ok = ok and (d.replicas or 0) == (d.updated_replicas or 0)
    return True if ok else None


def pod_states(cluster: RealCluster) -> list[str]:
    """One line per drsched pod: node, phase, restarts, why a container waits (for error messages)."""
    out = []
    for pod in cluster.core.list_namespaced_pod(NS).items:
        waiting = [f"{c.name}:{c.state.waiting.reason}:{(c.state.waiting.message or '')[:200]}"
                   for c in pod.status.container_statuses or [] if c.state and c.state.waiting]  # fmt: skip
        restarts = sum(c.restart_count for c in pod.status.container_statuses or [])
        out.append(f"{pod.metadata.name}@{pod.spec.node_name} {pod.status.phase} restarts={restarts} {waiting}")
    return out


def undeploy(cluster: RealCluster) -> None:
    """Stop the drsched kube-scheduler and delete what `deploy` applied, waiting until it is gone."""
    cluster.stop_component("drsched-scheduler")
    rendered = cluster.workdir / RENDERED
    if not rendered.exists():
        return
    done = cluster.kubectl("delete", "-f", str(rendered), "--wait=true", "--ignore-not-found", timeout=180)
    if done.returncode != 0:
        raise DeployError(f"kubectl delete -f {rendered} failed: {done.stderr.strip()}")
