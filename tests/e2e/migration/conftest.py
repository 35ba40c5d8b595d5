"""Fixtures of the migration e2e tests: a namespace and KWOK nodes of their own per test (the controller only
sees nodes labelled ``drsched-e2e=<tag>``), the controller as a subprocess, and the fake jobs' progress."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from kubernetes import client

from harness.cluster import ControlPlane
from harness.objects import KwokNodeShape, fake_node

from .helpers import ControllerProcess, FakeJobs, base_of, live


@dataclass
class MigrationEnv:
    cluster: ControlPlane
    namespace: str
    tag: str
    tmp: object
    nodes: list[str] = field(default_factory=list)
    controllers: list[ControllerProcess] = field(default_factory=list)
    fake: FakeJobs | None = None

    @property
    def core(self) -> client.CoreV1Api:
        return self.cluster.core

    def node(self, short: str, *, cpu: str, memory: str = "32Gi") -> str:
        name = f"mig-{self.tag}-{short}"
        shape = KwokNodeShape(name, cpu=cpu, memory=memory)
        self.cluster.create_node(fake_node(shape, labels={"drsched-e2e": self.tag}))
        self.nodes.append(name)
        return name

    def controller(self, *extra: str, name: str = "controller") -> ControllerProcess:
        proc = ControllerProcess(kubeconfig=self.cluster.kubeconfig, namespace=self.namespace,
                                 selector=f"drsched-e2e={self.tag}", log_path=self.tmp / f"{name}.log",
                                 extra=list(extra))
        self.controllers.append(proc)
        return proc

    def start_fake_jobs(self, **kw) -> FakeJobs:
        self.fake = FakeJobs(self.core, self.namespace, **kw).start()
        return self.fake

    def pods(self) -> list[client.V1Pod]:
        return self.core.list_namespaced_pod(self.namespace, label_selector="drsched.io/migrate=true").items

    def jobs(self) -> dict[str, list[client.V1Pod]]:
        out: dict[str, list[client.V1Pod]] = {}
        for pod in self.pods():
            out.setdefault(base_of(pod), []).append(pod)
        return out

    def live_copies(self) -> dict[str, list[str]]:
        return {job: [p.metadata.name for p in pods if live(p)] for job, pods in self.jobs().items()}

    def windows(self) -> list[client.V1Lease]:
        return client.CoordinationV1Api(self.cluster.api).list_namespaced_lease(
            self.namespace, label_selector="drsched.io/migration-window=true").items

    def events(self, name: str) -> list[client.CoreV1Event]:
        return self.core.list_namespaced_event(self.namespace, field_selector=f"involvedObject.name={name}").items

    def logs(self) -> str:
        return "\n".join(f"--- {c.log_path.name} ---\n{c.log_text()[-6000:]}" for c in self.controllers)


@pytest.fixture
def mig(cluster: ControlPlane, tmp_path) -> Iterator[MigrationEnv]:
    tag = uuid.uuid4().hex[:6]
    namespace = f"mig-{tag}"
    cluster.create_namespace(namespace)
    env = MigrationEnv(cluster=cluster, namespace=namespace, tag=tag, tmp=tmp_path)
    try:
        yield env
    finally:
        for proc in env.controllers:
            proc.stop()
        if env.fake is not None:
            env.fake.stop()
        for pod in env.core.list_namespaced_pod(namespace).items:
            try:
                env.core.delete_namespaced_pod(pod.metadata.name, namespace, grace_period_seconds=0)
            except client.ApiException:
                pass
        for node in env.nodes:  # other tests of the session must not see these nodes
            try:
                env.core.delete_node(node)
            except client.ApiException:
                pass


@pytest.fixture
def dump(mig: MigrationEnv) -> Callable[[], str]:
    """Everything a failure message needs: pods with nodes and phases, windows, controller log tails."""

    def text() -> str:
        pods = [f"{p.metadata.name} node={p.spec.node_name} phase={p.status.phase} "
                f"deleting={p.metadata.deletion_timestamp is not None}" for p in mig.pods()]
        windows = [f"{w.metadata.name}: {(w.metadata.annotations or {}).get('drsched.io/migration')}"
                   for w in mig.windows()]
        return "pods:\n  " + "\n  ".join(pods) + "\nwindows:\n  " + "\n  ".join(windows) + "\n" + mig.logs()

    return text
