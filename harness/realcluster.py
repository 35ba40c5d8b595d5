"""A control plane with real kubelet nodes instead of KWOK: the cluster real pods run on.

`RealCluster` is a `ControlPlane` (same etcd, kube-apiserver, kube-scheduler, PKI and helpers) that also
runs the stock kube-controller-manager (ServiceAccounts, DaemonSets, Deployments, garbage collection),
one kube-proxy for the machine (all nodes share the host network namespace and its iptables), and N
`harness.nodes.RealNode`s. The apiserver listens on the host address so pods can reach it through the
`kubernetes` Service.

Only one real cluster can run on a machine at a time (the node names, bridges, ports and cgroups are
fixed): a machine-wide lock says so clearly. `close()` deletes every pod through its kubelet, stops
everything, then removes what is left (processes by cgroup, mounts, netns, bridges, iptables entries)
against a snapshot taken before start; it runs on any failure, on SIGINT, and from the CLI.

Host isolation is opt-in (``RealCluster(..., isolation=Isolation.for_this_machine())``, ``harness.isolation``):
the control plane then runs in the cgroup ``/drsched-system`` on the system CPUs, so do each node's kubelet,
containerd and shims (``/<node>.runtime``), the caller and a fifth, tainted node ``rn-system`` for the drsched
pods; the job nodes' pods share the node CPUs, their quotas scaled to fit and their ``cpu.shares`` in
proportion. ``placement()`` / ``write_placement()`` record where every process runs. Without an isolation the
cluster is exactly what it was before the option existed.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import ssl
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import yaml
from kubernetes import client

from kube.objects import NET_ANNOTATION
from policy.labworld import REAL_NODES, RealNodeShape

from . import hostres, nodenet, nodes, placement
from .cluster import Binaries, ControlPlane, _http_get, _ready_node
from .isolation import SYSTEM_CGROUP, SYSTEM_NODE, Isolation, check_fits, cpu_shares, machine_cpus, scale_shapes
from .ociimage import write_single_binary_image
from .procs import Component, ComponentError, free_port, run_to_completion, tail

log = logging.getLogger(__name__)

BUILD_NODES_SCRIPT = Path(__file__).resolve().parent / "controlplane" / "build-nodes.sh"
NODE_BINARIES = ("kubelet", "kube-controller-manager", "kube-proxy", "pause", "busy")
# The tests' CPU load (harness/controlplane/cmd/busy), a one-file image like pause.
BUSY_IMAGE = "docker.io/local/busy:v1"
LOCK_PATH = Path("/run/lock/drsched-realnodes.lock")
NODE_READY_TIMEOUT_S = 120.0
# Every kubelet binds its device-plugin registration socket at this fixed path, whatever its --root-dir: it
# unlinks the file and then binds. Two kubelets doing that at once make one bind fail ("address already in
# use") and that kubelet exits (seen: a lab run failed at start, 2026-12-07). So kubelets start one at a time,
# each once the previous one has bound it; the later kubelet's socket replaces the earlier one's, which nothing
# here uses (the nodes have no device plugins).
DEVICE_PLUGIN_SOCKET = Path("/var/lib/kubelet/device-plugins/kubelet.sock")
DEVICE_PLUGIN_WAIT_S = 30.0
POD_DRAIN_TIMEOUT_S = 45.0
SERVICE_CIDR = "10.96.0.0/16"
SERVICE_IP = "10.96.0.1"  # the first address of SERVICE_CIDR: the `kubernetes` Service


class RealNodesUnavailable(RuntimeError):
    """This machine cannot run real nodes; the message says why (tests skip with it)."""


@dataclass(frozen=True)
class NodeBinaries:
    bin_dir: Path
    images: tuple[Path, ...]  # OCI archives of nodes.PAUSE_IMAGE and BUSY_IMAGE, imported into every node

    def __getitem__(self, name: str) -> str:
        return str(self.bin_dir / name)


def node_bin_dir() -> Path:
    done = subprocess.run(
        [str(BUILD_NODES_SCRIPT), "--bin-dir"], capture_output=True, text=True, timeout=30, check=False
    )
    if done.returncode != 0:
        raise ComponentError(f"{BUILD_NODES_SCRIPT} --bin-dir failed: {done.stderr.strip()}")
    return Path(done.stdout.strip())


def ensure_node_binaries(*, timeout: float = 3600.0,
                         progress: Callable[[str], None] | None = None) -> NodeBinaries:
    """Run build-nodes.sh (a no-op when its stamp matches) and write the pause and busy image archives;
    ``progress`` gets a status line every 30 s while it builds."""
    bin_dir = node_bin_dir()
    log_path = bin_dir.parent / "build.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    run_to_completion(name="build-nodes.sh", argv=[str(BUILD_NODES_SCRIPT)], log_path=log_path, timeout=timeout,
                      progress=progress)
    missing = [b for b in NODE_BINARIES if not (bin_dir / b).exists()]
    if missing:
        raise ComponentError(f"build-nodes.sh finished but {bin_dir} lacks {missing}\n{tail(log_path)}")
    images = bin_dir.parent / "images"
    pause = write_single_binary_image(
        binary=bin_dir / "pause", image=nodes.PAUSE_IMAGE, dest=images / "pause.oci.tar", entrypoint="/pause"
    )
    busy = write_single_binary_image(
        binary=bin_dir / "busy", image=BUSY_IMAGE, dest=images / "busy.oci.tar", entrypoint="/busy"
    )
    return NodeBinaries(bin_dir=bin_dir, images=(pause, busy))


class RealCluster(ControlPlane):
    """etcd + kube-apiserver + kube-controller-manager + kube-proxy + kube-scheduler + real kubelet nodes."""

    def __init__(
        self,
        *,
        workdir: Path,
        binaries: Binaries,
        node_binaries: NodeBinaries,
        shapes: Sequence[RealNodeShape] = REAL_NODES,
        images: Sequence[Path] = (),
        isolation: Isolation | None = None,
    ):
        super().__init__(workdir=workdir, binaries=binaries)
        self.node_bins = node_binaries
        self.isolation = isolation
        # Under isolation the job nodes' quotas are scaled to fit the node CPU set (ratios kept): these are the
        # shapes the nodes really get, and what allocatable says.
        self.shapes = tuple(shapes) if isolation is None else scale_shapes(shapes, isolation.node_budget_millis)
        self.images = tuple(images)  # extra OCI/docker archives imported into every node
        self.nodes: list[nodes.RealNode] = []  # the job nodes (self.shapes), never the system node
        self.system_node: nodes.RealNode | None = None
        self._caller_cpuset: str | None = None  # the caller's cpuset cgroup before it was pinned
        self.baseline: hostres.Snapshot | None = None
        self._lock: IO[str] | None = None
        self._closed = False

    # ---- start-up -------------------------------------------------------------------------------

    def start(self) -> RealCluster:
        reason = nodes.unavailable_reason()
        if reason is not None:
            raise RealNodesUnavailable(reason)
        if self.isolation is not None:
            check_fits(self.isolation, machine_cpus())
        self._take_lock()
        try:
            self.api_host = nodes.host_ip()
            self._remove_stale()
            self.baseline = hostres.snapshot()
            if self.isolation is not None:
                self._isolate_system()
            self._make_pki()
            self._start_etcd()
            self._start_apiserver()
            self._bootstrap_objects()
            self._start_controller_manager()
            self._start_nodes()
            self._start_kube_proxy()  # after the nodes: it looks its own node up for the node IP
            self.start_scheduler("kube-scheduler", config_path=None)
        except BaseException:
            self.close()
            raise
        return self

    def _take_lock(self) -> None:
        """Hold the machine-wide lock. By default fail at once when another cluster holds it; with
        DRSCHED_REALNODES_WAIT_S=<seconds> wait that long for it (parallel test runs, experiments)."""
        LOCK_PATH.parent.mkdir(parents=True, exist_ok=True)
        lock = LOCK_PATH.open("a")
        wait_s = float(os.environ.get("DRSCHED_REALNODES_WAIT_S", "0") or 0)
        deadline = time.monotonic() + wait_s
        announced = False
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    lock.close()
                    raise RealNodesUnavailable(
                        f"another real-node cluster is running on this machine ({LOCK_PATH} is held"
                        + (f" for more than {wait_s:.0f} s)" if wait_s else "; set DRSCHED_REALNODES_WAIT_S to wait)")
                    ) from None
                if not announced:
                    log.warning("waiting up to %.0f s for %s (another real-node cluster is running)", wait_s, LOCK_PATH)
                    announced = True
                time.sleep(2.0)
        lock.truncate(0)
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        self._lock = lock

    def _remove_stale(self) -> None:
        """A cluster killed with SIGKILL leaves containers, shims and cgroups; we hold the lock, so they are stale."""
        names = [*(s.name for s in self.shapes), SYSTEM_NODE]
        for index, name in enumerate(names):
            for path in (f"/{name}", f"/{name}.runtime"):
                if (nodes.CGROUP_FS / "pids" / path.strip("/")).exists():
                    log.warning("removing stale cgroup=%s", path)
                    nodes.kill_cgroup(path)
                    nodes.remove_cgroup(path)
            nodenet.remove_links(f"drs{index}")
        if (nodes.CGROUP_FS / "pids" / SYSTEM_CGROUP.strip("/")).exists():
            log.warning("removing stale cgroup=%s", SYSTEM_CGROUP)
            nodes.kill_cgroup(SYSTEM_CGROUP)
            nodes.remove_cgroup(SYSTEM_CGROUP)
        stale = sorted(nodes.DATA_ROOT.glob("*/run"))
        if stale:
            log.warning("removing stale node state dirs=%s", ",".join(map(str, stale)))
            hostres.unmount_under([nodes.DATA_ROOT], baseline=hostres.snapshot())
            for directory in stale:
                shutil.rmtree(directory, ignore_errors=True)

    # ---- host isolation -------------------------------------------------------------------------

    def _isolate_system(self) -> None:
        """The system cgroup on the system CPUs, and the caller in its cpuset (only there: the caller's other
        cgroups, memory above all, are its own business, and teardown kills by the pids hierarchy)."""
        iso = self.isolation
        if iso is None:
            return
        nodes.make_cgroup(SYSTEM_CGROUP)
        nodes.place_cgroup(SYSTEM_CGROUP, cpus=iso.system_cpus)
        log.info("host isolation system_cpus=%s node_cpus=%s node_quotas=%s system_node=%s",
                 iso.system_cpus, iso.node_cpus,
                 ",".join(f"{s.name}={s.cpu_millis}m" for s in self.shapes), iso.system_node)
        if iso.pin_caller:
            self._caller_cpuset = placement.parse_proc_cgroup(Path("/proc/self/cgroup").read_text()).get("cpuset", "/")
            (nodes.CGROUP_FS / "cpuset" / SYSTEM_CGROUP.strip("/") / "cgroup.procs").write_text(str(os.getpid()))

    def _unpin_caller(self) -> None:
        if self._caller_cpuset is None:
            return
        target = nodes.CGROUP_FS / "cpuset" / self._caller_cpuset.strip("/")
        if not (target / "cgroup.procs").exists():
            target = nodes.CGROUP_FS / "cpuset"
        (target / "cgroup.procs").write_text(str(os.getpid()))
        self._caller_cpuset = None

    def _release_system(self) -> None:
        self._unpin_caller()
        if (nodes.CGROUP_FS / "pids" / SYSTEM_CGROUP.strip("/")).exists():
            nodes.kill_cgroup(SYSTEM_CGROUP)
            nodes.remove_cgroup(SYSTEM_CGROUP)

    def _add(self, name: str, argv: list[str], *, env: dict[str, str] | None = None) -> Component:
        # Under isolation every control-plane process (etcd, apiserver, schedulers, controller-manager,
        # kube-proxy) starts inside the system cgroup; its children follow it there.
        if self.isolation is not None:
            argv = nodes.cgroup_join_argv(SYSTEM_CGROUP, argv)
        return super()._add(name, argv, env=env)

    def start_system_process(self, name: str, argv: list[str], *, env: dict[str, str] | None = None) -> Component:
        """Start a host process that serves the cluster (the lab's data source) as the control plane runs: in the
        system cgroup under isolation (so on the system CPUs), logged under ``logs/<name>.log``, listed in
        ``placement()``, and stopped with the cluster or by ``stop_system_process``."""
        return self._add(name, argv, env=env)

    def stop_system_process(self, name: str) -> None:
        """Stop and forget a process ``start_system_process`` started (nothing if there is none)."""
        component = self.components.pop(name, None)
        if component is not None:
            component.stop()

    def _node_cpus(self, shape: RealNodeShape, *, system: bool) -> nodes.CpuPlacement | None:
        iso = self.isolation
        if iso is None:
            return None
        if system:  # default shares: the drsched pods must not outweigh the control plane on the system CPUs
            return nodes.CpuPlacement(pods=iso.system_cpus, runtime=iso.system_cpus, shares=None)
        return nodes.CpuPlacement(pods=iso.node_cpus, runtime=iso.system_cpus, shares=cpu_shares(shape.cpu_millis))

    def placement(self) -> list[placement.Row]:
        """Where every process of this cluster runs now (``harness.placement.collect``)."""
        running = {name: c.proc.pid for name, c in self.components.items() if c.running and c.proc is not None}
        return placement.collect(components=running, nodes=self.all_nodes(),
                                 pods=self.core.list_pod_for_all_namespaces().items)  # fmt: skip

    def write_placement(self, path: Path) -> list[str]:
        """Write ``placement()`` as JSON to ``path``; returns what is misplaced (always empty without isolation:
        there is nothing to break)."""
        rows = self.placement()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(placement.to_json(rows, isolation=self.isolation) + "\n")
        return placement.misplaced(rows, self.isolation) if self.isolation is not None else []

    def all_nodes(self) -> list[nodes.RealNode]:
        """The job nodes and, under isolation, the system node."""
        return [*self.nodes, *([self.system_node] if self.system_node is not None else [])]

    def _apiserver_ips(self) -> tuple[str, ...]:
        return ("127.0.0.1", self.api_host, SERVICE_IP)

    def _apiserver_address_args(self) -> list[str]:
        # Pods reach the apiserver through the `kubernetes` Service, whose endpoint is the advertised address.
        return [f"--bind-address={self.api_host}", f"--advertise-address={self.api_host}"]

    def _apiserver_extra_args(self) -> list[str]:
        # `kubectl logs/exec` go from the apiserver to the kubelet, which trusts our CA.
        return [
            f"--kubelet-client-certificate={self.admin.cert}", f"--kubelet-client-key={self.admin.key}",
            "--kubelet-preferred-address-types=InternalIP",
        ]  # fmt: skip

    def _start_controller_manager(self) -> None:
        port = free_port()
        cm = self._add("kube-controller-manager", [
            self.node_bins["kube-controller-manager"], f"--kubeconfig={self.kubeconfig}",
            f"--authentication-kubeconfig={self.kubeconfig}", f"--authorization-kubeconfig={self.kubeconfig}",
            "--bind-address=127.0.0.1", f"--secure-port={port}", "--leader-elect=false",
            f"--service-account-private-key-file={self.sa_keys.key}", f"--root-ca-file={self.pki.ca.cert}",
            "--use-service-account-credentials=false", "--cluster-name=drsched",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            # A dead kubelet should turn its node NotReady within a test's patience, not after 40 s + 5 min.
            "--node-monitor-grace-period=20s",
        ])  # fmt: skip
        ctx = ssl._create_unverified_context()  # self-signed health port
        cm.wait_ready(lambda: _http_get(f"https://127.0.0.1:{port}/healthz", context=ctx) == b"ok", timeout=60)

    def _start_kube_proxy(self) -> None:
        healthz, metrics = free_port(), free_port()
        config_path = self.workdir / "kube-proxy.yaml"
        config_path.write_text(yaml.safe_dump({
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1", "kind": "KubeProxyConfiguration",
            "clientConnection": {"kubeconfig": str(self.kubeconfig)},
            "mode": "iptables", "clusterCIDR": nodes.POD_CIDR, "hostnameOverride": self.shapes[0].name,
            "bindAddress": self.api_host,
            "healthzBindAddress": f"127.0.0.1:{healthz}", "metricsBindAddress": f"127.0.0.1:{metrics}",
            # Leave the host's conntrack and route_localnet sysctls alone: nothing here needs them changed.
            "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
            "iptables": {"localhostNodePorts": False},
        }, sort_keys=False))  # fmt: skip
        proxy = self._add("kube-proxy", [self.node_bins["kube-proxy"], f"--config={config_path}"])
        proxy.wait_ready(lambda: b"lastUpdated" in _http_get(f"http://127.0.0.1:{healthz}/healthz"), timeout=60)

    def _start_nodes(self) -> None:
        wanted = [(shape, False) for shape in self.shapes]
        if self.isolation is not None and self.isolation.system_node:
            wanted.append((self.isolation.system_shape(), True))
        for index, (shape, system) in enumerate(wanted):
            cert = self.pki.issue(
                f"kubelet-{shape.name}",
                common_name=f"system:node:{shape.name}",
                organizations=("system:nodes",),
                client=True,
            )
            env = nodes.NodeEnv(
                kubelet_bin=self.node_bins["kubelet"], api_url=self.api_url, ca_cert=self.pki.ca.cert,
                client_cert=cert.cert, client_key=cert.key, node_ip=self.api_host, index=index,
            )  # fmt: skip
            node = nodes.RealNode(shape, env=env, workdir=self.workdir / "nodes" / shape.name, logs=self.logs,
                                  cpus=self._node_cpus(shape, system=system),
                                  role=None if self.isolation is None else (
                                      nodes.SYSTEM_ROLE if system else nodes.JOB_ROLE))  # fmt: skip
            if system:
                self.system_node = node
            else:
                self.nodes.append(node)
            node.prepare()
            self._register(node.start_containerd())
        self.import_images([*self.node_bins.images, *self.images])
        for node in self.all_nodes():
            before = _file_identity(DEVICE_PLUGIN_SOCKET)
            kubelet = node.start_kubelet()
            self._register(kubelet)
            wait_rebound(DEVICE_PLUGIN_SOCKET, before, kubelet, timeout=DEVICE_PLUGIN_WAIT_S)
        for node in self.all_nodes():
            self.poll(lambda n=node: self.node_ready(n.name), timeout=NODE_READY_TIMEOUT_S,
                      what=f"node {node.name} Ready")
        self._annotate_links()

    def _annotate_links(self) -> None:
        """Say each shaped node's link on the node, as a user annotates a real one (``kube.objects.NET_ANNOTATION``,
        MB/s): kubelets have no network resource, and without it drsched assumes every node has the default link
        (``policy.state.DEFAULT_NET_MBPS``) and could not tell a slow link from a fast one."""
        for shape in self.shapes:
            if shape.net_mbit > 0:
                link = {NET_ANNOTATION: f"{shape.net_mbit / 8:g}"}
                self.core.patch_node(shape.name, {"metadata": {"annotations": link}})

    def node_ready(self, name: str) -> client.V1Node | None:
        """The node if it is Ready, else None (also while its kubelet has not registered it yet)."""
        try:
            return _ready_node(self.core.read_node(name))
        except client.ApiException as exc:
            if exc.status == 404:  # the kubelet has not registered yet
                return None
            raise

    def import_images(self, archives: Sequence[Path]) -> None:
        """Import image archives into every node's containerd (the system node's too), the nodes in parallel."""
        every = self.all_nodes()
        with ThreadPoolExecutor(max_workers=len(every) or 1) as pool:
            for future in [pool.submit(n.import_image, a) for n in every for a in archives]:
                future.result()

    def _register(self, component: Component) -> None:
        self.components[component.name] = component

    # ---- teardown -------------------------------------------------------------------------------

    def _drain_pods(self) -> None:
        """Delete every pod and wait for the kubelets to stop them (sandbox, network, volumes) properly."""
        try:
            for ns in self.core.list_namespace().items:
                self.core.delete_collection_namespaced_pod(ns.metadata.name, grace_period_seconds=1)
            self.poll(lambda: True if not self.core.list_pod_for_all_namespaces().items else None,
                      timeout=POD_DRAIN_TIMEOUT_S, what="every pod deleted")  # fmt: skip
        except Exception as exc:  # a dead apiserver or kubelet: the forced cleanup below still runs
            log.warning("pods not drained error=%s", str(exc).splitlines()[0] if str(exc) else repr(exc))

    def close(self) -> None:
        """Stop everything and leave the machine as `start()` found it (see the module docstring)."""
        if self._closed:
            return
        self._closed = True
        steps = [
            ("stop schedulers and controllers", self._stop_controllers),
            ("drain pods", self._drain_pods),
            *((f"stop node {n.name}", n.stop) for n in self.all_nodes()),
            ("stop kube-proxy", self._stop_kube_proxy),
            ("host cleanup", self._host_cleanup),
            *((f"release node {n.name}", n.release) for n in self.all_nodes()),
            ("stop control plane", super().close),
            ("release the system cgroup", self._release_system),
        ]
        for what, step in steps:
            try:
                step()
            except Exception:  # keep going: every later step removes something else
                log.exception("teardown step failed step=%s", what)
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _stop_controllers(self) -> None:
        for name, component in self.components.items():
            if name == "kube-controller-manager" or "scheduler" in name:
                component.stop()

    def _stop_kube_proxy(self) -> None:
        self.stop_component("kube-proxy")
        if "kube-proxy" in self.components:  # it was started, so it may have written rules
            subprocess.run([self.node_bins["kube-proxy"], "--cleanup"], capture_output=True, timeout=60, check=False)

    def _host_cleanup(self) -> None:
        if self.baseline is None:
            return
        hostres.unmount_under([nodes.DATA_ROOT, *(n.dir for n in self.all_nodes())], baseline=self.baseline)
        hostres.remove_iptables_added(self.baseline)

    # ---- helpers for tests ----------------------------------------------------------------------

    def node(self, name: str) -> nodes.RealNode:
        return next(n for n in self.nodes if n.name == name)

    def allocatable(self, name: str) -> dict[str, str]:
        node: client.V1Node = self.core.read_node(name)
        return dict(node.status.allocatable or {})


def _file_identity(path: Path) -> tuple[int, int] | None:
    """(inode, ctime in ns) of ``path``, None if absent: which file is there. The inode alone is not enough: a
    kubelet that unlinks a stale socket nobody holds and binds again usually gets the freed inode number back."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_ctime_ns


def wait_rebound(path: Path, before: tuple[int, int] | None, component: Component, *, timeout: float) -> bool:
    """Wait until ``path`` is a new file (``_file_identity`` differs from ``before``): the component has bound its
    socket there. Raises ComponentError if the component exits first; returns False (and logs) after ``timeout``,
    when starting the next one is no worse than before this wait existed."""
    deadline = time.monotonic() + timeout
    while (now := _file_identity(path)) is None or now == before:
        component.check_alive()
        if time.monotonic() > deadline:
            log.warning("%s did not bind %s within %.0f s; starting the next one anyway", component.name, path,
                        timeout)
            return False
        time.sleep(0.1)
    return True
