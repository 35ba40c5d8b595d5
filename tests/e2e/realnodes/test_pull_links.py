"""The multi-resource world's premise on real nodes (issue #21, item 3): a pulling net job (``net-p``) is as
fast as its own node's link. Its data comes from the lab's source on the host (``lab.source``) through the
node's shaped bridge (``harness.nodenet``), so alone on rn-large (10 Mbit/s) it takes at least twice as long as
alone on rn-small (80 Mbit/s, where its own 4 MiB/s cap holds it): about 50 s against 15 s.

It starts its own cluster on the world's nodes (before the package's shared one, which has the drs world's
links: ``conftest.pytest_collection_modifyitems`` runs tests without ``real_cluster`` first), isolated as the
lab runs where this machine allows it, and runs the two jobs at once: links are per node, and the source
serves both.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from kubernetes import client

from harness.cluster import Binaries
from harness.isolation import Isolation, IsolationUnavailable
from harness.realcluster import NodeBinaries, RealCluster
from kube.objects import NET_ANNOTATION
from lab.kube import JOB_UID
from lab.source import pod_env, start_source
from policy.labworld import MULTI_NODES, TEMPLATES, WORLDS

from . import drsched

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes, pytest.mark.slow]
FAST, SLOW = "rn-small", "rn-large"


def _pull_job(name: str, *, image: str, node: str, state_dir: Path, port: int) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(
            restart_policy="Never", node_selector={"kubernetes.io/hostname": node},
            containers=[client.V1Container(
                name="job", image=image, image_pull_policy="Never", env=pod_env(port),
                args=[*TEMPLATES["net-p"].argv(), "--log-level=WARNING"],
                volume_mounts=[client.V1VolumeMount(name="state", mount_path="/state")],
                resources=client.V1ResourceRequirements(requests={"cpu": "20m", "memory": "96Mi"}),
            )],
            volumes=[client.V1Volume(name="state", host_path=client.V1HostPathVolumeSource(
                path=str(state_dir), type="Directory"))],
        ),
    )  # fmt: skip


@pytest.mark.timeout(900)  # a cold machine also imports the workloads image into every node
def test_a_pulling_net_job_is_as_fast_as_its_nodes_link(
    node_binaries: NodeBinaries, controlplane_binaries: Binaries, pinned_images: Path | None, tmp_path: Path
) -> None:
    links = {s.name: s.net_mbit for s in MULTI_NODES}
    assert links[SLOW] * 2 <= links[FAST] and WORLDS["multi-resource"].nodes == MULTI_NODES
    try:
        iso: Isolation | None = Isolation.for_this_machine()
    except IsolationUnavailable:
        iso = None
    cluster = RealCluster(workdir=tmp_path / "cluster", binaries=controlplane_binaries, node_binaries=node_binaries,
                          shapes=MULTI_NODES, isolation=iso)  # fmt: skip
    try:
        cluster.start()
        assert {s.name: s.net_mbit for s in cluster.shapes} == links  # isolation scales CPU, never links
        # and each node says its link, in MB/s, where drsched reads it (kube.objects.NET_ANNOTATION)
        said = {n.metadata.name: (n.metadata.annotations or {}).get(NET_ANNOTATION)
                for n in cluster.core.list_node().items}
        assert {name: said[name] for name in links} == {name: f"{mbit / 8:g}" for name, mbit in links.items()}
        try:
            image = drsched.import_images(cluster, "workloads", root=pinned_images)["workloads"]
        except drsched.ImagesMissing as exc:
            pytest.skip(str(exc))
        port = start_source(cluster)
        states = {}
        for node in (FAST, SLOW):
            states[node] = tmp_path / node
            states[node].mkdir()
            os.chown(states[node], JOB_UID, JOB_UID)
            cluster.create_pod(_pull_job(f"pull-{node}", image=image, node=node, state_dir=states[node], port=port))
        for node in (FAST, SLOW):
            pod = cluster.wait_pod_phase(f"pull-{node}", "Succeeded", timeout=300)
            assert pod.spec.node_name == node
        took = {}
        for node, state in states.items():
            progress = json.loads((state / "progress.json").read_text())
            assert (progress["state"], progress["units_done"]) == ("done", TEMPLATES["net-p"].units)
            took[node] = progress["updated_at"] - progress["started_at"]
        outputs = {json.loads((s / "output.json").read_text())["sha256"] for s in states.values()}
        assert len(outputs) == 1  # the same data through either link
        print(f"net-p alone: {took[FAST]:.1f} s on {FAST} ({links[FAST]} Mbit/s), {took[SLOW]:.1f} s on {SLOW} "  # noqa: T201
              f"({links[SLOW]} Mbit/s); isolated: {iso is not None}")
        assert took[SLOW] >= 2 * took[FAST], took
    finally:
        cluster.close()
