"""Builders for the Kubernetes objects e2e tests create: KWOK-managed fake nodes and small pods.

Pure functions returning client models; creating and waiting is ControlPlane's job.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubernetes import client

# KWOK manages only nodes carrying this annotation (the selector kwok's docs use).
KWOK_NODE_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
# Our KWOK stage (kwok-stages/pod-run-for.yaml) moves a Running pod to Succeeded this long
# (a Go duration such as "30s") after it started. Job-owned pods complete through KWOK's own stage.
RUN_FOR_ANNOTATION = "drsched.io/run-for"
# KWOK never pulls images; a name that cannot resolve makes sure nothing else tries.
FAKE_IMAGE = "registry.invalid/drsched/fake:1"


@dataclass(frozen=True)
class KwokNodeShape:
    """A KWOK node's size as Kubernetes quantities (no process runs on it); a real node's is
    ``policy.labworld.RealNodeShape``."""

    name: str
    cpu: str
    memory: str
    pods: int = 110


# Deliberately unequal, so load-aware choices are visible in tests.
HETEROGENEOUS_NODES = (
    KwokNodeShape("kwok-small", cpu="2", memory="4Gi"),
    KwokNodeShape("kwok-medium", cpu="4", memory="16Gi"),
    KwokNodeShape("kwok-large", cpu="16", memory="64Gi"),
)


def fake_node(shape: KwokNodeShape, *, labels: dict[str, str] | None = None) -> client.V1Node:
    """A v1.Node for KWOK to manage; it stays NotReady until KWOK's node-initialize stage runs."""
    resources = {"cpu": shape.cpu, "memory": shape.memory, "pods": str(shape.pods)}
    key, value = KWOK_NODE_ANNOTATION
    return client.V1Node(
        metadata=client.V1ObjectMeta(
            name=shape.name,
            annotations={key: value},
            labels={
                "kubernetes.io/hostname": shape.name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
                **(labels or {}),
            },
        ),
        # Node status set at creation is kept (kubelets register this way); KWOK preserves it.
        status=client.V1NodeStatus(capacity=resources, allocatable=dict(resources)),
    )


def small_pod(
    name: str,
    *,
    scheduler_name: str | None = None,
    cpu: str = "100m",
    memory: str = "64Mi",
    run_for: str | None = None,
    labels: dict[str, str] | None = None,
) -> client.V1Pod:
    """A single-container pod with requests; `run_for` makes KWOK complete it after that long."""
    annotations = {RUN_FOR_ANNOTATION: run_for} if run_for else None
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels, annotations=annotations),
        spec=client.V1PodSpec(
            scheduler_name=scheduler_name,
            containers=[
                client.V1Container(
                    name="main",
                    image=FAKE_IMAGE,
                    resources=client.V1ResourceRequirements(requests={"cpu": cpu, "memory": memory}),
                )
            ],
        ),
    )
