"""docs/deploy.md run as written on real nodes: images pushed to a real registry and pulled by the nodes.

Every ``sh e2e`` block of the guide runs, in order, with bash (``tests.guide``), ``REGISTRY`` a CNCF
distribution registry on 127.0.0.1 (``harness.registry``), a tag new to every run (the nodes' image stores
outlive a cluster, so a reused tag could be "already present" instead of pulled), and ``KUBECONFIG`` this
test's own real-node cluster: its own, not the package's, because the guide installs drsched in
drsched-system where the package's ``deployed`` fixture puts it too (and a test without ``real_cluster`` runs
first, while the machine's real-node lock is free).

containerd pulls from the registry over plain HTTP with no hosts.toml: the nodes' containerd
(``harness.nodes``) has no ``registry.config_path``, and its CRI plugin uses http for a loopback registry
(containerd's ``defaultScheme``); the emulated nodes share the host's network namespace, so 127.0.0.1 is
the registry for them.

What the test adds, all in one kustomization layered on the guide's ``$SITE`` (docs/deploy.md, "What the e2e
test changes"): the emulated-node monitor (``manifests/components/emulated-nodes`` + each node's bridge);
a fixed ClusterIP for the extender Service, named in the scheduler config instead of the Service's DNS name
(no cluster DNS here); and the kube-scheduler image, built on the drsched base image from the harness's own
kube-scheduler binary and pushed to the same registry (the nodes cannot reach registry.k8s.io). The
guide's render block writes ``$SITE``; the later blocks get the layer's directory as ``SITE``.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness.cluster import Binaries
from harness.extender_proc import parse_metrics
from harness.images import open_buildah, unavailable_reason
from harness.images.spec import BASE_TAG
from harness.procs import ComponentError
from harness.realcluster import NodeBinaries, RealCluster
from harness.registry import LocalRegistry, ensure_registry_binary
from tests.guide import e2e_blocks, run_block
from tests.helpers import REPO

from .drsched import NS, pods_of

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes, pytest.mark.images, pytest.mark.slow]

EXTENDER_IP = "10.96.200.88"  # inside harness.realcluster.SERVICE_CIDR, far from what the apiserver hands out
PULLED = ("extender", "monitor", "migration", "workloads")
HELLO = "drsched-hello"


@pytest.fixture(scope="module")
def guide_cluster(controlplane_binaries: Binaries, node_binaries: NodeBinaries,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealCluster]:  # fmt: skip
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"DEPLOY GUIDE NOT TESTED: cannot build the images to push: {reason}")
    cluster = RealCluster(workdir=tmp_path_factory.mktemp("guide-cluster"), binaries=controlplane_binaries,
                          node_binaries=node_binaries)  # fmt: skip
    try:
        cluster.start()
    except ComponentError as exc:
        cluster.close()
        pytest.fail(f"the real-node cluster did not start:\n{exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRegistry]:
    with LocalRegistry(binary=ensure_registry_binary(), workdir=tmp_path_factory.mktemp("registry")) as running:
        yield running


def _push_kube_scheduler(cluster: RealCluster, registry: LocalRegistry, tag: str, log_file: Path) -> str:
    """The harness's kube-scheduler binary (dynamically linked against glibc) on the drsched base image."""
    buildah = open_buildah(log_file=log_file)
    container = buildah.run("from", "--quiet", "--pull=never", BASE_TAG).strip().splitlines()[-1]
    try:
        buildah.run("copy", "--chmod", "0755", container, str(cluster.bins["kube-scheduler"]),
                    "/usr/local/bin/kube-scheduler")  # fmt: skip
        buildah.run("config", "--user", "65534:65534", container)
        local = f"localhost/drsched-e2e/kube-scheduler:{tag}"
        buildah.run("commit", "--quiet", container, local)
    finally:
        buildah.quiet("rm", container)
    target = f"{registry.address}/drsched-e2e/kube-scheduler:{tag}"
    try:
        buildah.run("push", "--tls-verify=false", "--quiet", local, f"docker://{target}")  # loopback registry
    finally:
        buildah.quiet("rmi", local)  # a new tag every run: do not pile them up in the shared image storage
    return target


def _write_layer(cluster: RealCluster, *, guide_site: Path, layer: Path, scheduler_image: str) -> None:
    """The one kustomization the emulated nodes need on top of the guide's (see the module docstring)."""
    layer.mkdir()
    config = yaml.safe_load((REPO / "manifests" / "scheduler" / "drsched-scheduler.yaml").read_text())
    config["extenders"][0]["urlPrefix"] = f"http://{EXTENDER_IP}:8888/"
    (layer / "drsched-scheduler.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    devices = ",".join(f"{n.name}={n.bridge}" for n in cluster.nodes)
    name, tag = scheduler_image.rsplit(":", 1)
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(guide_site, layer)],
        "components": [os.path.relpath(REPO / "manifests" / "components" / "emulated-nodes", layer)],
        "images": [{"name": "registry.k8s.io/kube-scheduler", "newName": name, "newTag": tag}],
        "configMapGenerator": [{"name": "drsched-scheduler-config", "namespace": NS, "behavior": "replace",
                                "files": ["config.yaml=drsched-scheduler.yaml"]}],  # fmt: skip
        "patches": [
            {"target": {"kind": "DaemonSet", "name": "drsched-monitor"},
             "patch": yaml.safe_dump([{"op": "add", "path": "/spec/template/spec/containers/0/args/-",
                                       "value": f"--node-net-dev={devices}"}])},
            {"target": {"kind": "Service", "name": "drsched-extender"},
             "patch": yaml.safe_dump([{"op": "add", "path": "/spec/clusterIP", "value": EXTENDER_IP}])},
        ],
    }  # fmt: skip
    (layer / "kustomization.yaml").write_text(yaml.safe_dump(kustomization, sort_keys=False))


def _node_images(cluster: RealCluster) -> set[str]:
    return {line for n in cluster.all_nodes() for line in n.ctr("images", "ls", "-q").stdout.split()}


def _pulled_messages(cluster: RealCluster) -> list[str]:
    events = cluster.core.list_event_for_all_namespaces(field_selector="reason=Pulled").items
    return [e.message or "" for e in events]


@pytest.mark.timeout(1800)  # pushes four images and starts a cluster of its own
def test_the_deploy_guide_as_written_pulls_from_a_registry_and_drsched_scores_a_pod(
    guide_cluster: RealCluster, registry: LocalRegistry, tmp_path: Path
) -> None:
    cluster = guide_cluster
    tag = f"e2e-{secrets.token_hex(4)}"
    guide_site, layer = tmp_path / "site", tmp_path / "site-e2e"
    path = os.pathsep.join([str(cluster.bins.bin_dir), str(Path(sys.executable).parent),
                            os.environ.get("PATH", "/usr/bin:/bin")])  # fmt: skip
    env = {"REGISTRY": registry.address, "TAG": tag, "SITE": str(guide_site), "KUBECONFIG": str(cluster.kubeconfig),
           "PATH": path}  # fmt: skip
    ours = f"{registry.address}/"
    assert not any(image.startswith(ours) for image in _node_images(cluster))

    outputs = []
    for block in e2e_blocks():
        done = run_block(block, env=env, timeout=900)
        assert done.returncode == 0, f"guide block failed:\n{block}\n--- stderr ---\n{done.stderr[-4000:]}"
        outputs.append(done.stdout)
        if "kubectl kustomize" in block:  # the render block has written $SITE: layer the emulated nodes on it
            scheduler_image = _push_kube_scheduler(cluster, registry, tag, tmp_path / "buildah.log")
            _write_layer(cluster, guide_site=guide_site, layer=layer, scheduler_image=scheduler_image)
            env["SITE"] = str(layer)

    # Pushed by the guide's command, and nothing else in the registry but the test's kube-scheduler.
    assert set(registry.catalog()) == {f"drsched/{name}" for name in PULLED} | {"drsched-e2e/kube-scheduler"}
    # The hello pod ran from the pulled workloads image (the guide waits for it to succeed, then reads its log).
    assert any("placed by drsched" in out for out in outputs), outputs[-1][-2000:]
    # Pulled, not imported: containerd says so in each Pulled Event, and the registry served the manifests.
    messages = _pulled_messages(cluster)
    for name in PULLED:
        reference = f"{registry.address}/drsched/{name}:{tag}"
        assert any(f'Successfully pulled image "{reference}"' in m for m in messages), (reference, messages)
    served = registry.component.log_path.read_text() if registry.component else ""
    for name in PULLED:
        # containerd resolves the tag with HEAD, then GETs the manifest by digest
        asked = [line for line in served.splitlines() if f"/v2/drsched/{name}/" in line]
        assert re.search(rf"\"(HEAD|GET) /v2/drsched/{name}/manifests/{tag} ", served), (name, asked[:6])

    # Placed by drsched's kube-scheduler, after asking the extender for scores.
    events = cluster.core.list_namespaced_event("default", field_selector=f"involvedObject.name={HELLO},"
                                                                          "reason=Scheduled").items  # fmt: skip
    assert [e.reporting_component or (e.source.component if e.source else "") for e in events] == ["drsched"]
    readyz = next(out for out in outputs if '"status"' in out)
    assert '"ready"' in readyz
    # Asked: kube-scheduler calls filter for every pod, and prioritize only when more than one node passed
    # filtering (schedulePod returns the one feasible node unscored), so the proof is a filter or prioritize
    # answered "ok" by some replica; each replica counts its own.
    answered: dict[str, dict[str, float]] = {}
    for pod in pods_of(cluster, "drsched-extender"):
        done = cluster.kubectl("-n", NS, "exec", pod.metadata.name, "-c", "extender", "--", "python", "-c",
                               "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("
                               "'http://127.0.0.1:8888/metrics').read().decode())", timeout=30)  # fmt: skip
        assert done.returncode == 0, done.stderr
        samples = parse_metrics(done.stdout)
        answered[pod.metadata.name] = {f"{verb}/{outcome}": n for key, n in samples.items()
                                       if key.startswith("drsched_extender_requests_total{")
                                       for verb, outcome in [_verb_outcome(key)]}  # fmt: skip
    ok = sum(n for counts in answered.values() for key, n in counts.items() if key in ("filter/ok", "prioritize/ok"))
    assert ok >= 1, (
        f"no extender replica answered a filter or prioritize for {HELLO}: {answered}\n"
        f"drsched-scheduler's extender lines:\n{_scheduler_extender_lines(cluster)}"
    )


def _verb_outcome(key: str) -> tuple[str, str]:
    labels = dict(re.findall(r'(\w+)="([^"]*)"', key))
    return labels.get("verb", "?"), labels.get("outcome", "?")


def _scheduler_extender_lines(cluster: RealCluster) -> str:
    """What each scheduler replica said about the extender, and the tail of each extender replica's log."""
    lines = []
    for pod in pods_of(cluster, "drsched-scheduler"):
        done = cluster.kubectl("-n", NS, "logs", pod.metadata.name, timeout=30)
        lines += [f"{pod.metadata.name}: {line}" for line in done.stdout.splitlines() if "xtender" in line][-20:]
    for pod in pods_of(cluster, "drsched-extender"):
        done = cluster.kubectl("-n", NS, "logs", pod.metadata.name, "-c", "extender", "--tail=20", timeout=30)
        lines += [f"{pod.metadata.name}: {line}" for line in done.stdout.splitlines()]
    return "\n".join(lines) or "(none)"
