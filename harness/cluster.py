"""A real, throwaway Kubernetes control plane for e2e tests: etcd, kube-apiserver, kube-scheduler, KWOK.

Binaries come from harness/controlplane/build.sh (built from the Go module proxy, cached outside the
clone). Everything listens on 127.0.0.1 on ports picked at run time; every file (PKI, data, logs,
rendered configs) lives under one work directory. `ControlPlane` owns the processes it starts and
kills all of them in `close()`, whatever state the start-up reached.

No kube-controller-manager runs: the harness creates the `default` ServiceAccount itself, and KWOK
(not kubelets) moves pods to Running on the fake nodes the tests create.

``audit=True`` makes kube-apiserver write one audit entry per request, at Metadata level (who, user
agent, verb, resource; no bodies), to ``audit_log`` (bench/bench_scheduler.py attributes the control
plane's requests to the clients that made them with it). It costs the apiserver a JSON line per request.
"""

from __future__ import annotations

import logging
import os
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import yaml
from kubernetes import client, config

from harness.errors import WaitTimeout
from kube.client import with_request_timeout

from . import schedconfig
from .objects import KWOK_NODE_ANNOTATION
from .pki import CertPair, Pki
from .procs import Component, ComponentError, free_port, run_to_completion, tail

log = logging.getLogger(__name__)

CONTROLPLANE_DIR = Path(__file__).resolve().parent / "controlplane"
BUILD_SCRIPT = CONTROLPLANE_DIR / "build.sh"
KWOK_STAGES_DIR = Path(__file__).resolve().parent / "kwok-stages"
BINARIES = ("etcd", "kube-apiserver", "kube-scheduler", "kubectl", "kwok")
KWOK_DEFAULT_STAGES = "kwok-default-stages.yaml"

# What a user is told before a build starts: measured, 2 cores, quiet (fresh machine, 2026-12-02) to busy.
COLD_BUILD = "a cold build takes 7-30 min on 2 cores, 7 when nothing else runs"
DEFAULT_BUILD_TIMEOUT_S = 3600.0  # a cold build on 2 busy cores took ~9 min; override with DRSCHED_E2E_BUILD_TIMEOUT
READY_TIMEOUT_S = 60.0
REQUEST_TIMEOUT_S = 60.0  # connect and read, each: any API call of the harness's client (none watches)

T = TypeVar("T")


@dataclass(frozen=True)
class Binaries:
    bin_dir: Path

    def __getitem__(self, name: str) -> str:
        return str(self.bin_dir / name)

    @property
    def kwok_default_stages(self) -> Path:
        return self.bin_dir / KWOK_DEFAULT_STAGES


def cached_bin_dir() -> Path:
    """Where build.sh puts (or has put) the binaries; computing it needs no Go."""
    done = subprocess.run([str(BUILD_SCRIPT), "--bin-dir"], capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        raise ComponentError(f"{BUILD_SCRIPT} --bin-dir failed: {done.stderr.strip()}")
    return Path(done.stdout.strip())


def ensure_binaries(*, progress: Callable[[str], None] | None = None) -> Binaries:
    """Run build.sh (a no-op when its stamp matches) and return where the binaries are.

    Its output goes to build.log next to the bin dir, outside the clone, overwritten each run; ``progress``
    gets a status line every 30 s while it builds (``harness.procs.build_status``).
    """
    timeout = float(os.environ.get("DRSCHED_E2E_BUILD_TIMEOUT", DEFAULT_BUILD_TIMEOUT_S))
    bin_dir = cached_bin_dir()
    log_path = bin_dir.parent / "build.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.unlink(missing_ok=True)
    run_to_completion(name="build.sh", argv=[str(BUILD_SCRIPT)], log_path=log_path, timeout=timeout,
                      progress=progress)
    missing = [b for b in (*BINARIES, KWOK_DEFAULT_STAGES) if not (bin_dir / b).exists()]
    if missing:
        raise ComponentError(f"build.sh finished but {bin_dir} lacks {missing}\n{tail(log_path)}")
    return Binaries(bin_dir)


def _poll(check: Callable[[], T | None], *, timeout: float, what: str, alive: Callable[[], None]) -> T:
    """Call `check` until it returns a value other than None; `alive` raises if a component died."""
    deadline = time.monotonic() + timeout
    while True:
        alive()
        result = check()
        if result is not None:
            return result
        if time.monotonic() > deadline:
            raise WaitTimeout(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.25)


class ControlPlane:
    """etcd + kube-apiserver + default kube-scheduler + KWOK, plus optional extra schedulers."""

    def __init__(self, *, workdir: Path, binaries: Binaries, audit: bool = False):
        self.workdir = workdir
        self.bins = binaries
        self.logs = workdir / "logs"
        self.audit_log: Path | None = self.logs / "audit.log" if audit else None
        self.components: dict[str, Component] = {}
        self.kubeconfig = workdir / "kubeconfig"
        self.api_port = 0
        self.api_host = "127.0.0.1"
        self.etcd_url = ""
        # Set by _make_pki, the first step of start().
        self.pki: Pki
        self.admin: CertPair
        self.apiserver_cert: CertPair
        self.sa_keys: CertPair
        self._api: client.ApiClient | None = None

    # ---- start-up -------------------------------------------------------------------------------

    def start(self) -> ControlPlane:
        """Start every component in order; on any failure stop what was started and re-raise."""
        try:
            self._make_pki()
            self._start_etcd()
            self._start_apiserver()
            self._bootstrap_objects()
            self._start_kwok()
            self.start_scheduler("kube-scheduler", config_path=None)
        except BaseException:
            self.close()
            raise
        return self

    def _make_pki(self) -> None:
        self.pki = Pki(self.workdir / "pki")
        self.apiserver_cert = self.pki.issue(
            "apiserver", common_name="kube-apiserver", dns_names=("localhost", "kubernetes", "kubernetes.default"),
            ips=self._apiserver_ips(), server=True,
        )  # fmt: skip
        # system:masters bypasses RBAC: the harness, the scheduler and kwok all run as this admin.
        self.admin = self.pki.issue(
            "admin", common_name="drsched-e2e-admin", organizations=("system:masters",), client=True
        )
        self.sa_keys = self.pki.service_account_keys()

    def _add(self, name: str, argv: list[str], *, env: dict[str, str] | None = None) -> Component:
        if name in self.components and self.components[name].running:
            raise ComponentError(f"{name} is already running")
        component = Component(name=name, argv=argv, log_path=self.logs / f"{name}.log", env=env)
        self.components[name] = component
        component.start()
        return component

    def _start_etcd(self) -> None:
        client_port, peer_port = free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client_port}"
        peer_url = f"http://127.0.0.1:{peer_port}"
        etcd = self._add("etcd", [
            self.bins["etcd"], "--name=e2e", f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={self.etcd_url}", f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=e2e={peer_url}",
            "--unsafe-no-fsync",  # a test cluster does not need durable writes; fsync dominates on CI disks
            "--log-level=warn",
        ])  # fmt: skip
        etcd.wait_ready(lambda: b'"true"' in _http_get(f"{self.etcd_url}/health"), timeout=READY_TIMEOUT_S)

    def _start_apiserver(self) -> None:
        self.api_port = free_port()
        apiserver = self._add("kube-apiserver", [
            self.bins["kube-apiserver"],
            f"--etcd-servers={self.etcd_url}",
            *self._apiserver_address_args(), f"--secure-port={self.api_port}",
            f"--tls-cert-file={self.apiserver_cert.cert}", f"--tls-private-key-file={self.apiserver_cert.key}",
            f"--client-ca-file={self.pki.ca.cert}",
            f"--service-account-key-file={self.sa_keys.cert}",
            f"--service-account-signing-key-file={self.sa_keys.key}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range=10.96.0.0/16",
            "--authorization-mode=Node,RBAC",
            "--allow-privileged=true",
            # This plugin taints every new node not-ready; only the controller-manager's node lifecycle
            # controller would lift the taint, and none runs here.
            "--disable-admission-plugins=TaintNodesByCondition",
            # A test cluster sees bursts from the harness, scheduler and kwok at once: no throttling.
            "--enable-priority-and-fairness=false", "--max-requests-inflight=0", "--max-mutating-requests-inflight=0",
            *self._audit_args(), *self._apiserver_extra_args(),
        ])  # fmt: skip
        self._write_kubeconfig()
        ctx = self._admin_ssl_context()
        apiserver.wait_ready(lambda: _http_get(f"{self.api_url}/readyz", context=ctx) == b"ok", timeout=READY_TIMEOUT_S)

    def _audit_args(self) -> list[str]:
        """One entry per request once it completes (a watch: when it ends), Metadata level, blocking writes:
        the file holds every request that has been answered."""
        if self.audit_log is None:
            return []
        policy = self.workdir / "audit-policy.yaml"
        policy.write_text(yaml.safe_dump({"apiVersion": "audit.k8s.io/v1", "kind": "Policy",
                                          "omitStages": ["RequestReceived", "ResponseStarted"],
                                          "rules": [{"level": "Metadata"}]}, sort_keys=False))
        return [f"--audit-policy-file={policy}", f"--audit-log-path={self.audit_log}", "--audit-log-mode=blocking",
                "--audit-log-maxsize=0"]

    def _apiserver_ips(self) -> tuple[str, ...]:
        """IP SANs of the apiserver's serving certificate (a subclass serving pods adds more)."""
        return ("127.0.0.1",)

    def _apiserver_address_args(self) -> list[str]:
        # A loopback advertise address cannot back the `kubernetes` Service endpoints: skip them.
        return ["--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none"]

    def _apiserver_extra_args(self) -> list[str]:
        return []

    @property
    def api_url(self) -> str:
        return f"https://{self.api_host}:{self.api_port}"

    def _admin_ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.pki.ca.cert))
        ctx.load_cert_chain(str(self.admin.cert), str(self.admin.key))
        return ctx

    def _write_kubeconfig(self) -> None:
        kubeconfig = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "e2e", "cluster": {"server": self.api_url, "certificate-authority": str(self.pki.ca.cert)}}
            ],
            "users": [
                {
                    "name": "admin",
                    "user": {"client-certificate": str(self.admin.cert), "client-key": str(self.admin.key)},
                }
            ],
            "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "admin", "namespace": "default"}}],
            "current-context": "e2e",
        }
        self.kubeconfig.write_text(yaml.safe_dump(kubeconfig, sort_keys=False))

    def _bootstrap_objects(self) -> None:
        # The apiserver creates the `default` namespace shortly after it is ready.
        self.poll(lambda: _exists(lambda: self.core.read_namespace("default")), timeout=30, what="namespace default")
        self.create_service_account("default", "default")

    def _start_kwok(self) -> None:
        port = free_port()
        key, value = KWOK_NODE_ANNOTATION
        stage_files = [self.bins.kwok_default_stages, *sorted(KWOK_STAGES_DIR.glob("*.yaml"))]
        # kwok also loads ~/.kwok/kwok.yaml when it exists: a HOME of its own keeps a developer's out.
        kwok_env = {**os.environ, "HOME": str(self.workdir)}
        kwok = self._add("kwok", [
            self.bins["kwok"], f"--kubeconfig={self.kubeconfig}",
            *(f"--config={f}" for f in stage_files),
            "--manage-all-nodes=false", f"--manage-nodes-with-annotation-selector={key}={value}",
            "--cidr=10.0.0.1/16", "--node-ip=10.0.0.1",
            f"--server-address=127.0.0.1:{port}",
        ], env=kwok_env)  # fmt: skip
        kwok.wait_ready(lambda: _http_get(f"http://127.0.0.1:{port}/healthz") == b"ok", timeout=READY_TIMEOUT_S)

    # ---- schedulers -----------------------------------------------------------------------------

    def start_scheduler(self, name: str, *, config_path: Path | None) -> Component:
        """(Re)start a kube-scheduler process called `name`.

        `config_path=None` runs the stock default-scheduler with no config file; otherwise pass a file
        made by `render_scheduler_config` (its profiles decide which pods it serves).
        """
        old = self.components.get(name)
        if old is not None:
            old.stop()
        port = free_port()
        argv = [self.bins["kube-scheduler"], "--bind-address=127.0.0.1", f"--secure-port={port}"]
        if config_path is None:
            argv += [f"--kubeconfig={self.kubeconfig}", "--leader-elect=false"]
        else:
            argv += [f"--config={config_path}"]
        scheduler = self._add(name, argv)
        ctx = ssl._create_unverified_context()  # the scheduler serves a self-signed cert on its health port
        scheduler.wait_ready(
            lambda: _http_get(f"https://127.0.0.1:{port}/readyz", context=ctx) == b"ok", timeout=READY_TIMEOUT_S
        )
        return scheduler

    def stop_component(self, name: str) -> None:
        component = self.components.get(name)
        if component is not None:
            component.stop()

    def render_scheduler_config(
        self, source: str, *, extender_url: str | None = None, tls: schedconfig.ExtenderTls | None = None
    ) -> Path:
        """Render a file from kube-scheduler-config/ for this cluster (see schedconfig.render)."""
        dest = self.workdir / "scheduler-configs" / f"{Path(source).stem}-{time.monotonic_ns()}.yaml"
        return schedconfig.render(source, dest, kubeconfig=self.kubeconfig, extender_url=extender_url, tls=tls)

    # ---- API helpers ----------------------------------------------------------------------------

    @property
    def api(self) -> client.ApiClient:
        if self._api is None:
            # Every call gets a timeout, so no caller's deadline (an arm's, the solo runs') waits on a request the
            # apiserver stopped answering.
            self._api = with_request_timeout(config.new_client_from_config(config_file=str(self.kubeconfig)),
                                             REQUEST_TIMEOUT_S)
        return self._api

    @property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.api)

    def check_alive(self) -> None:
        """Raise ComponentError (with its log tail) if any started component has died."""
        for component in self.components.values():
            if component.proc is not None and component.proc.returncode is None:
                component.check_alive()

    def poll(self, check: Callable[[], T | None], *, timeout: float, what: str) -> T:
        return _poll(check, timeout=timeout, what=what, alive=self.check_alive)

    def create_service_account(self, namespace: str, name: str) -> None:
        body = client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=name, namespace=namespace))
        _create_ignoring_conflict(lambda: self.core.create_namespaced_service_account(namespace, body))

    def create_namespace(self, name: str) -> None:
        """A namespace with its `default` ServiceAccount (no controller-manager creates it)."""
        _create_ignoring_conflict(
            lambda: self.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
        )
        self.create_service_account(name, "default")

    def create_node(self, node: client.V1Node, *, timeout: float = 30) -> client.V1Node:
        """Create a KWOK-managed node and wait until KWOK has made it Ready."""
        self.core.create_node(node)
        name = node.metadata.name
        return self.poll(lambda: _ready_node(self.core.read_node(name)), timeout=timeout, what=f"node {name} Ready")

    def create_pod(self, pod: client.V1Pod, *, namespace: str = "default") -> client.V1Pod:
        return self.core.create_namespaced_pod(namespace, pod)

    def wait_pod_bound(self, name: str, *, namespace: str = "default", timeout: float = 30) -> str:
        """Wait until the pod has spec.nodeName; return the node. On timeout, say why it is Pending."""
        try:
            return self.poll(
                lambda: self.core.read_namespaced_pod(name, namespace).spec.node_name,
                timeout=timeout, what=f"pod {namespace}/{name} to be bound",
            )  # fmt: skip
        except TimeoutError as exc:
            raise WaitTimeout(f"{exc}\n{self.describe_pod(name, namespace=namespace)}") from None

    def wait_pod_phase(self, name: str, phase: str, *, namespace: str = "default", timeout: float = 30) -> client.V1Pod:
        def check() -> client.V1Pod | None:
            pod = self.core.read_namespaced_pod(name, namespace)
            return pod if pod.status and pod.status.phase == phase else None

        try:
            return self.poll(check, timeout=timeout, what=f"pod {namespace}/{name} phase {phase}")
        except TimeoutError as exc:
            raise WaitTimeout(f"{exc}\n{self.describe_pod(name, namespace=namespace)}") from None

    def kubectl(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """Run kubectl as the admin against this cluster (e.g. `auth can-i ... --as=...` in RBAC tests)."""
        return subprocess.run(
            [self.bins["kubectl"], f"--kubeconfig={self.kubeconfig}", *args],
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip

    def bind_pod(self, namespace: str, name: str, uid: str, node: str) -> None:
        """POST a Binding the way a binding extender must.

        The client would raise *after* a successful bind (the server answers a Status, the client expects a
        Binding; kubernetes-client/python#547), so the reply is not deserialized; HTTP errors still raise.
        """
        body = client.V1Binding(
            metadata=client.V1ObjectMeta(name=name, namespace=namespace, uid=uid),
            target=client.V1ObjectReference(api_version="v1", kind="Node", name=node),
        )
        self.core.create_namespaced_binding(namespace, body, _preload_content=False)

    def describe_pod(self, name: str, *, namespace: str = "default") -> str:
        """Phase, conditions and events of a pod, for failure messages."""
        pod = self.core.read_namespaced_pod(name, namespace)
        status = pod.status or client.V1PodStatus()
        lines = [f"pod {namespace}/{name}: node={pod.spec.node_name} phase={status.phase}"]
        lines += [
            f"  condition {c.type}={c.status} {c.reason or ''} {c.message or ''}" for c in status.conditions or []
        ]
        events = self.core.list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}").items
        lines += [f"  event {e.type} {e.reason}: {e.message}" for e in events]
        return "\n".join(lines)

    def log_tails(self, lines: int = 30) -> str:
        parts = []
        for name, component in self.components.items():
            state = (
                "running"
                if component.running
                else f"exited ({component.proc.returncode if component.proc else 'never started'})"
            )
            parts.append(f"===== {name} [{state}] {component.log_path} =====\n{tail(component.log_path, lines)}")
        return "\n".join(parts)

    def close(self) -> None:
        """Stop every component, newest first (the scheduler before the apiserver before etcd)."""
        for component in reversed(list(self.components.values())):
            try:
                component.stop()
            except Exception:  # keep stopping the others; teardown must not leak processes
                log.exception("failed to stop component=%s", component.name)
        if self._api is not None:
            self._api.close()
            self._api = None


def _ready_node(node: client.V1Node) -> client.V1Node | None:
    conditions = (node.status.conditions if node.status else None) or []
    return node if any(c.type == "Ready" and c.status == "True" for c in conditions) else None


def _http_get(url: str, *, context: ssl.SSLContext | None = None, timeout: float = 2.0) -> bytes:
    with urllib.request.urlopen(url, context=context, timeout=timeout) as resp:  # noqa: S310 (loopback only)
        return resp.read().strip()


def _exists(read: Callable[[], object]) -> bool | None:
    try:
        read()
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise
    return True


def _create_ignoring_conflict(create: Callable[[], object]) -> None:
    try:
        create()
    except client.ApiException as exc:
        if exc.status != 409:
            raise
