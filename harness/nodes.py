"""Real kubelet nodes on one machine: the one place that knows how a node is emulated.

Each node is a real kubelet with its own containerd (one CRI namespace per daemon, so two kubelets never
see each other's containers), its own CNI bridge and subnet, and its own cgroup root `/<node>` in every
cgroup v1 hierarchy. The CPU quota and memory limit on that root confine all of the node's pods, and
`systemReserved` shrinks the kubelet's allocatable to the same size, so kube-scheduler sees the node as
small as it really is. containerd, its shims and the kubelet run in a sibling cgroup `/<node>.runtime`,
outside the quota, so teardown finds every process the node started by cgroup rather than by pid.

The nodes' sizes are the lab's world (``policy.labworld.REAL_NODES``, which the simulator replays too);
everything specific to cgroup v1 and containerd 1.6 lives here (`V1_HIERARCHIES`, the cgroup file names,
the containerd config schema): moving to cgroup v2 / containerd 2 is a change to this module.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.errors import HostError
from kube.logs import kv
from policy.labworld import RealNodeShape

from . import nodenet
from .procs import Component

log = logging.getLogger(__name__)

CGROUP_FS = Path("/sys/fs/cgroup")
V1_HIERARCHIES = ("cpu", "cpuacct", "cpuset", "memory", "pids", "blkio", "devices", "freezer", "systemd")
CNI_BIN_DIR = Path("/usr/lib/cni")
CNI_PLUGINS = ("bridge", "host-local", "loopback")
HOST_TOOLS = ("containerd", "containerd-shim-runc-v2", "runc", "ctr", "ip", "iptables", "ip6tables", "mount")
PAUSE_IMAGE = "docker.io/local/pause:v1"
# Runtime state (containerd root/state, kubelet root, sockets): a short fixed path, because unix socket
# paths are limited to ~104 bytes and test work dirs are deep. One real cluster per machine keeps it unique.
# Per node, `image-store/` (containerd's root: imported images, unpacked) is kept between clusters as a
# cache, so the next start re-imports unchanged images in seconds; `run/` is removed at teardown.
DATA_ROOT = Path("/var/lib/drsched-realnodes")
POD_CIDR = "10.244.0.0/16"
CFS_PERIOD_US = 100_000
KILL_TIMEOUT_S = 15.0
EVICTION_HARD_MIB = 100  # the memory.available hard threshold; allocatable also excludes it
NODE_TYPE_LABEL = "drsched.io/node-type"  # each node's RealNodeShape.node_type, the name results group nodes by
# Under host isolation (harness.isolation) every node says its role: `job` nodes run the work, the `system`
# node only pods that tolerate its taint and select its role (harness.deploy puts the extender and the
# migration controller there).
ROLE_LABEL = "drsched.io/role"
JOB_ROLE, SYSTEM_ROLE = "job", "system"
SYSTEM_TAINT = {"key": "drsched.io/system", "value": "true", "effect": "NoSchedule"}


def unavailable_reason() -> str | None:
    """Why this machine cannot run real nodes, or None when it can (root, cgroup v1, containerd, runc, CNI)."""
    if os.geteuid() != 0:
        return f"real nodes need root (running as uid {os.geteuid()})"
    missing_cg = [h for h in V1_HIERARCHIES if not (CGROUP_FS / h / "cgroup.procs").exists()]
    if missing_cg:
        return f"real nodes need the cgroup v1 hierarchies {', '.join(missing_cg)} under {CGROUP_FS} (cgroup v2 only?)"
    missing = [t for t in HOST_TOOLS if shutil.which(t) is None]
    missing += [str(CNI_BIN_DIR / p) for p in CNI_PLUGINS if not (CNI_BIN_DIR / p).exists()]
    if missing:
        return (f"real nodes need {', '.join(missing)} "
                "(Debian: containerd runc containernetworking-plugins iptables iproute2)")
    return None


def host_ip() -> str:
    """The address the kubelets register and the apiserver advertises: the source of the default route."""
    done = subprocess.run(["ip", "-o", "-4", "route", "get", "1.0.0.1"], capture_output=True, text=True, check=False)
    words = done.stdout.split()
    if done.returncode != 0 or "src" not in words:
        raise HostError(f"no IPv4 default route to take the node address from: {done.stderr.strip()}")
    return words[words.index("src") + 1]


def machine_cpus() -> int:
    return os.cpu_count() or 1


def machine_memory_bytes() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    raise HostError("/proc/meminfo has no MemTotal")


# ---- cgroups (v1) -----------------------------------------------------------------------------------


def make_cgroup(path: str) -> None:
    """Create `path` in every v1 hierarchy; cpuset needs cpus/mems copied down before a task can join."""
    for hierarchy in V1_HIERARCHIES:
        directory = CGROUP_FS / hierarchy / path.strip("/")
        directory.mkdir(parents=True, exist_ok=True)
        if hierarchy == "cpuset":
            for knob in ("cpuset.cpus", "cpuset.mems"):
                (directory / knob).write_text((directory.parent / knob).read_text())


def limit_cgroup(path: str, *, cpu_millis: int, memory_bytes: int) -> None:
    cpu = CGROUP_FS / "cpu" / path.strip("/")
    (cpu / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
    (cpu / "cpu.cfs_quota_us").write_text(str(cpu_millis * CFS_PERIOD_US // 1000))
    (CGROUP_FS / "memory" / path.strip("/") / "memory.limit_in_bytes").write_text(str(memory_bytes))


def place_cgroup(path: str, *, cpus: str, cpu_shares: int | None = None) -> None:
    """Confine the cgroup `path` to the CPU list `cpus` (its cpuset), and set its `cpu.shares` when given."""
    (CGROUP_FS / "cpuset" / path.strip("/") / "cpuset.cpus").write_text(cpus)
    if cpu_shares is not None:
        (CGROUP_FS / "cpu" / path.strip("/") / "cpu.shares").write_text(str(cpu_shares))


def cgroup_pids(path: str) -> set[int]:
    """Every process in the cgroup subtree `path` (read from the pids hierarchy, which all tasks join)."""
    root = CGROUP_FS / "pids" / path.strip("/")
    pids: set[int] = set()
    if not root.exists():
        return pids
    for directory, _, _ in os.walk(root):
        try:
            pids.update(int(p) for p in Path(directory, "cgroup.procs").read_text().split())
        except FileNotFoundError:
            continue
    return pids


def kill_cgroup(path: str, *, timeout: float = KILL_TIMEOUT_S) -> None:
    """SIGKILL every process in the subtree until it is empty (a process may fork while we kill)."""
    deadline = time.monotonic() + timeout
    while pids := cgroup_pids(path):
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if time.monotonic() > deadline:
            raise HostError(f"cgroup {path} still has processes {sorted(pids)} after {timeout:.0f}s")
        time.sleep(0.1)


def remove_cgroup(path: str) -> None:
    """rmdir the subtree in every hierarchy, deepest first (cgroup dirs only go away empty)."""
    for hierarchy in V1_HIERARCHIES:
        root = CGROUP_FS / hierarchy / path.strip("/")
        if not root.exists():
            continue
        for directory, _, _ in sorted(os.walk(root), key=lambda entry: -entry[0].count("/")):
            for attempt in range(50):
                try:
                    os.rmdir(directory)
                    break
                except FileNotFoundError:
                    break
                except OSError:  # EBUSY while the kernel finishes releasing a just-killed task
                    if attempt == 49:
                        raise
                    time.sleep(0.1)


def cgroup_join_argv(path: str, argv: list[str]) -> list[str]:
    """Wrap `argv` so the process joins `path` in every hierarchy before it execs (its children follow)."""
    targets = " ".join(str(CGROUP_FS / h / path.strip("/") / "cgroup.procs") for h in V1_HIERARCHIES)
    script = f'for f in {targets}; do echo $$ > "$f"; done; exec "$@"'
    return ["/bin/sh", "-c", script, "sh", *argv]


# ---- one node ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeEnv:
    """What a node needs from the cluster: binaries, the API endpoint and credentials, its network slot."""

    kubelet_bin: str
    api_url: str
    ca_cert: Path
    client_cert: Path
    client_key: Path
    node_ip: str
    index: int  # 0-based slot: picks the bridge, subnet and ports


@dataclass(frozen=True)
class CpuPlacement:
    """Where a node's processes may run (host isolation): its pods on `pods`, its kubelet, containerd and shims
    on `runtime`; `shares` is the node cgroup's cpu.shares (None: the default, 1024). Without a placement both
    use every CPU at default shares."""

    pods: str
    runtime: str
    shares: int | None


class RealNode:
    """One kubelet + containerd pair with its cgroup root, CNI bridge, configs under `workdir` and state under
    `DATA_ROOT/<node>`."""

    def __init__(self, shape: RealNodeShape, *, env: NodeEnv, workdir: Path, logs: Path,
                 cpus: CpuPlacement | None = None, role: str | None = None):  # fmt: skip
        self.shape = shape
        self.cpus = cpus
        self.role = role  # ROLE_LABEL's value (None: no label); SYSTEM_ROLE: tainted, only drsched's own pods
        self.env = env
        self.dir = workdir
        self.data = DATA_ROOT / shape.name / "run"
        self.image_store = DATA_ROOT / shape.name / "image-store"
        self.logs = logs
        self.bridge = f"drs{env.index}"
        self.subnet = f"10.244.{env.index + 1}.0/24"
        self.kubelet_port = 10350 + env.index
        self.healthz_port = 10370 + env.index
        self.containerd: Component | None = None
        self.kubelet: Component | None = None

    @property
    def name(self) -> str:
        return self.shape.name

    @property
    def cgroup_root(self) -> str:
        return f"/{self.name}"

    @property
    def runtime_cgroup(self) -> str:
        return f"/{self.name}.runtime"

    @property
    def socket(self) -> Path:
        return self.data / "containerd.sock"

    # ---- start --------------------------------------------------------------------------------------

    def prepare(self) -> None:
        """Directories, cgroups with the node's limits, containerd + CNI + kubelet configs."""
        for sub in ("cni/net.d", "pod-logs"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        for sub in ("containerd", "cni-ipam", "kubelet", "runc", "volume-plugins"):
            (self.data / sub).mkdir(parents=True, exist_ok=True)
        make_cgroup(self.cgroup_root)
        make_cgroup(self.runtime_cgroup)
        limit_cgroup(self.cgroup_root, cpu_millis=self.shape.cpu_millis, memory_bytes=self.shape.memory_mib << 20)
        if self.cpus is not None:  # before any process joins: pods inherit the node root's cpuset
            place_cgroup(self.cgroup_root, cpus=self.cpus.pods, cpu_shares=self.cpus.shares)
            place_cgroup(self.runtime_cgroup, cpus=self.cpus.runtime)
            # kubelet 1.35 (CPU manager "none") creates kubepods with cpuset = every CPU of the machine, which
            # cgroup v1 refuses below a smaller parent; it skips the create when kubepods exists, so make it here.
            make_cgroup(f"{self.cgroup_root}/kubepods")
        nodenet.make_shaped_bridge(bridge=self.bridge, mbit=self.shape.net_mbit)
        (self.dir / "containerd.toml").write_text(self._containerd_config())
        (self.dir / "cni/net.d/10-node.conflist").write_text(json.dumps(self._cni_config(), indent=2))
        (self.dir / "kubelet.yaml").write_text(yaml.safe_dump(self._kubelet_config(), sort_keys=False))
        (self.dir / "kubelet.kubeconfig").write_text(yaml.safe_dump(self._kubeconfig(), sort_keys=False))

    def start_containerd(self) -> Component:
        argv = cgroup_join_argv(self.runtime_cgroup, ["containerd", f"--config={self.dir / 'containerd.toml'}"])
        self.containerd = Component(
            name=f"containerd-{self.name}", argv=argv, log_path=self.logs / f"containerd-{self.name}.log"
        )
        self.containerd.start()
        self.containerd.wait_ready(lambda: self.ctr("version").returncode == 0, timeout=30)
        return self.containerd

    def import_image(self, archive: Path, *, attempts: int = 3) -> None:
        # The kept image store can hold a layer whose parent snapshot containerd 1.6 garbage-collected when the
        # previous cluster replaced an image of the same tag; that import fails with "parent snapshot ...
        # does not exist", and the same import then unpacks the missing parent and succeeds (seen here).
        for attempt in range(1, attempts + 1):
            done = self.ctr("images", "import", str(archive), timeout=300)
            if done.returncode == 0:
                return
            log.warning("image import failed", extra=kv(node=self.name, archive=archive, attempt=attempt,
                                                          error=done.stderr.strip()[-300:]))
            time.sleep(1.0)
        raise HostError(f"{self.name}: ctr images import {archive} failed: {done.stderr.strip()}")

    def start_kubelet(self) -> Component:
        argv = cgroup_join_argv(self.runtime_cgroup, [
            self.env.kubelet_bin, f"--config={self.dir / 'kubelet.yaml'}",
            f"--kubeconfig={self.dir / 'kubelet.kubeconfig'}", f"--root-dir={self.data / 'kubelet'}",
            # its own self-signed serving cert: the default /var/lib/kubelet/pki is one dir for every kubelet,
            # and on a machine where it is still empty they write it at once and one reads a half-written file
            f"--cert-dir={self.dir / 'pki'}",
            f"--hostname-override={self.name}", f"--node-ip={self.env.node_ip}",
            f"--node-labels={','.join(f'{k}={v}' for k, v in self.labels().items())}",
            "--v=1",
        ])  # fmt: skip
        self.kubelet = Component(
            name=f"kubelet-{self.name}", argv=argv, log_path=self.logs / f"kubelet-{self.name}.log"
        )
        self.kubelet.start()
        return self.kubelet

    @property
    def system(self) -> bool:
        return self.role == SYSTEM_ROLE

    def labels(self) -> dict[str, str]:
        return {NODE_TYPE_LABEL: self.shape.node_type, **({ROLE_LABEL: self.role} if self.role else {})}

    def ctr(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["ctr", f"--address={self.socket}", "--namespace=k8s.io", *args],
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip

    # ---- configs ------------------------------------------------------------------------------------

    def _containerd_config(self) -> str:
        d = self.data
        cri = 'plugins."io.containerd.grpc.v1.cri"'
        return f"""version = 2
root = "{self.image_store}"
state = "{d / "containerd/state"}"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "{self.socket}"
[plugins."io.containerd.internal.v1.opt"]
  path = "{d / "containerd/opt"}"
[{cri}]
  sandbox_image = "{PAUSE_IMAGE}"
  # This machine withholds CAP_SYS_RESOURCE from root: a sandbox asking for oom_score_adj -998 fails.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
[{cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
[{cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[{cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false
  Root = "{d / "runc"}"
[{cri}.cni]
  bin_dir = "{CNI_BIN_DIR}"
  conf_dir = "{self.dir / "cni/net.d"}"
  max_conf_num = 1
"""

    def _cni_config(self) -> dict[str, object]:
        # No ipMasq and no portmap: both leave iptables chains behind; pods only talk inside the machine.
        return {
            "cniVersion": "1.0.0",
            "name": self.name,
            "plugins": [
                {
                    "type": "bridge", "bridge": self.bridge, "isGateway": True, "ipMasq": False, "hairpinMode": True,
                    "ipam": {
                        "type": "host-local", "ranges": [[{"subnet": self.subnet}]],
                        "routes": [{"dst": "0.0.0.0/0"}], "dataDir": str(self.data / "cni-ipam"),
                    },
                },
                {"type": "loopback"},
            ],
        }  # fmt: skip

    def system_reserved(self) -> dict[str, str]:
        """What the kubelet must hold back so that allocatable equals the node's quota and memory limit."""
        cpu = max(machine_cpus() * 1000 - self.shape.cpu_millis, 0)
        # In KiB, the unit the kubelet reads capacity in, so allocatable comes out exactly memory_mib.
        memory_kib = (machine_memory_bytes() >> 10) - ((self.shape.memory_mib + EVICTION_HARD_MIB) << 10)
        return {"cpu": f"{cpu}m", "memory": f"{max(memory_kib, 0)}Ki"}

    def _kubelet_config(self) -> dict[str, object]:
        return {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "failCgroupV1": False,  # kubelet 1.35 refuses cgroup v1 unless told
            "failSwapOn": False,
            "cgroupDriver": "cgroupfs",
            "cgroupRoot": self.cgroup_root,
            "cgroupsPerQOS": True,
            "enforceNodeAllocatable": ["pods"],
            # cgroup v1 refuses a child CFS quota above an ancestor's (EINVAL), so a container whose CPU limit
            # exceeds its node's quota could not start. Container CPU limits are therefore not enforced
            # here; the node's own quota still caps all of its pods together.
            "cpuCFSQuota": False,
            "systemReserved": self.system_reserved(),
            "evictionHard": {
                "memory.available": f"{EVICTION_HARD_MIB}Mi",
                "nodefs.available": "2%",
                "imagefs.available": "2%",
            },  # fmt: skip
            "containerRuntimeEndpoint": f"unix://{self.socket}",
            "podLogsDir": str(self.dir / "pod-logs"),
            "volumePluginDir": str(self.data / "volume-plugins"),
            "address": self.env.node_ip,
            "port": self.kubelet_port,
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": self.healthz_port,
            "podCIDR": self.subnet,
            "resolvConf": "",  # no cluster DNS: pods get no resolver rather than the host's
            "imageGCHighThresholdPercent": 100,  # images are imported, never pulled: never collect them
            "imageGCLowThresholdPercent": 99,
            "serializeImagePulls": False,
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": True},
                "x509": {"clientCAFile": str(self.env.ca_cert)},
            },
            "authorization": {"mode": "Webhook"},
            **({"registerWithTaints": [SYSTEM_TAINT]} if self.system else {}),
        }

    def _kubeconfig(self) -> dict[str, object]:
        return {
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": self.env.api_url,
                                                   "certificate-authority": str(self.env.ca_cert)}}],
            "users": [{"name": "u", "user": {"client-certificate": str(self.env.client_cert),
                                             "client-key": str(self.env.client_key)}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "c",
        }  # fmt: skip

    def set_cpu_quota(self, millicores: int) -> None:
        """Rewrite the node's CPU quota while it runs, as a noisy neighbour taking part of the machine would:
        its pods slow down, its allocatable (what schedulers see) stays as it was."""
        if millicores < 1:
            raise ValueError(f"cpu quota must be >= 1 millicore, got {millicores}")
        quota = CGROUP_FS / "cpu" / self.cgroup_root.strip("/") / "cpu.cfs_quota_us"
        quota.write_text(str(millicores * CFS_PERIOD_US // 1000))
        log.info("cpu quota set", extra=kv(node=self.name, millicores=millicores))

    # ---- stop ---------------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the kubelet and containerd, then kill whatever they left (containers, shims) by cgroup."""
        if self.kubelet is not None:
            self.kubelet.stop()
        if self.containerd is not None and self.containerd.running:
            self._remove_containers()
            self.containerd.stop()
        kill_cgroup(self.cgroup_root)
        kill_cgroup(self.runtime_cgroup)

    def _remove_containers(self) -> None:
        """Delete every container (and its snapshot) so the kept image store holds only images."""
        ids = self.ctr("containers", "list", "--quiet").stdout.split()
        for cid in ids:
            self.ctr("tasks", "kill", "--signal=SIGKILL", cid)
            self.ctr("tasks", "delete", "--force", cid)
        if ids:
            self.ctr("containers", "delete", *ids, timeout=60)

    def release(self) -> None:
        """After stop() and the host cleanup: drop the cgroups and the bridge, delete containerd's data."""
        remove_cgroup(self.cgroup_root)
        remove_cgroup(self.runtime_cgroup)
        nodenet.remove_links(self.bridge)
        shutil.rmtree(self.data, ignore_errors=True)
