"""Where every process of a real-node cluster runs: one row per process, with its cpu and cpuset cgroups and
the CPUs the kernel lets it use (``Cpus_allowed_list``).

Why it exists: host isolation (``harness.isolation``) is only as good as the processes it actually caught;
children inherit their parent's cgroups, so a process started the wrong way would run on the nodes' CPUs
unnoticed. ``collect`` reads it back from ``/proc`` for the cluster's components (control plane, kubelets,
containerd), everything in each node's runtime cgroup (shims), the caller, and every pod's processes;
``misplaced`` says which rows break the isolation. The lab writes it with ``RealCluster.write_placement``.

The parsers, ``misplaced`` and ``to_json`` are pure; ``read_row``, ``pod_cgroups``, ``subtree_pids`` and
``collect`` read ``/proc`` and the cgroup tree. State: none.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .isolation import Isolation, parse_cpu_list
from .nodes import CGROUP_FS, RealNode, cgroup_pids

PROC = Path("/proc")
SYSTEM = "system"  # Row.role of everything that is not a job node's pod
NODE = "node"


@dataclass(frozen=True)
class Row:
    """One process: which component it belongs to, its role (``system`` or ``node``), where it runs."""

    component: str  # "etcd", "kubelet-rn-small", "runtime rn-small", "pod default/x", "caller"
    role: str  # SYSTEM or NODE: what the isolation wants (system CPUs or node CPUs)
    pid: int
    comm: str
    node: str  # the node a pod or runtime belongs to; "" for the control plane and the caller
    cpu_cgroup: str
    cpuset_cgroup: str
    cpus_allowed: str  # Cpus_allowed_list, e.g. "0" or "0-1"


def parse_proc_cgroup(text: str) -> dict[str, str]:
    """``/proc/<pid>/cgroup`` as controller -> path; a line naming several controllers (``cpu,cpuacct``) gives
    each of them, ``name=systemd`` is ``systemd``, the v2 line (``0::/``) is ``unified``."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for controller in controllers.split(",") if controllers else ["unified"]:
            out[controller.removeprefix("name=")] = path
    return out


def parse_status_field(text: str, field: str) -> str:
    """One field of ``/proc/<pid>/status`` (``Cpus_allowed_list``, ``Name``), "" when absent."""
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key == field:
            return value.strip()
    return ""


def make_row(*, component: str, role: str, pid: int, node: str, status: str, cgroup: str) -> Row:
    groups = parse_proc_cgroup(cgroup)
    return Row(component=component, role=role, pid=pid, comm=parse_status_field(status, "Name"), node=node,
               cpu_cgroup=groups.get("cpu", ""), cpuset_cgroup=groups.get("cpuset", ""),
               cpus_allowed=parse_status_field(status, "Cpus_allowed_list"))  # fmt: skip


def misplaced(rows: Iterable[Row], isolation: Isolation) -> list[str]:
    """One line per row whose CPUs are not a subset of what its role is given (system or node CPUs)."""
    allowed = {SYSTEM: set(parse_cpu_list(isolation.system_cpus)), NODE: set(parse_cpu_list(isolation.node_cpus))}
    return [f"{r.component} pid {r.pid} ({r.comm}) may run on CPUs {r.cpus_allowed}, not only on the {r.role} "
            f"CPUs {isolation.system_cpus if r.role == SYSTEM else isolation.node_cpus}"
            for r in rows if not set(parse_cpu_list(r.cpus_allowed)) <= allowed[r.role]]  # fmt: skip


def to_json(rows: Sequence[Row], *, isolation: Isolation | None) -> str:
    """The report: the isolation in force (null: none) and every row."""
    return json.dumps({"isolation": isolation.describe() if isolation else None,
                       "processes": [dataclasses.asdict(r) for r in rows]}, indent=1)  # fmt: skip


# ---- reading the host ---------------------------------------------------------------------------------


def read_row(pid: int, *, component: str, role: str, node: str = "", proc: Path = PROC) -> Row | None:
    """The row of a live process, or None when it has exited."""
    try:
        status = (proc / str(pid) / "status").read_text()
        cgroup = (proc / str(pid) / "cgroup").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return make_row(component=component, role=role, pid=pid, node=node, status=status, cgroup=cgroup)


def pod_cgroups(pids_root: Path, uids: Mapping[str, object]) -> Iterator[tuple[str, Path]]:
    """(pod uid, its cgroup dir) for every ``pod<uid>`` dir under ``pids_root`` whose uid is in ``uids``
    (kubelet's cgroupfs layout: ``kubepods[/<qos>]/pod<uid>``)."""
    for directory, subdirs, _ in os.walk(pids_root):
        for sub in list(subdirs):
            uid = sub.removeprefix("pod")
            if sub.startswith("pod") and uid in uids:
                subdirs.remove(sub)
                yield uid, Path(directory, sub)


def subtree_pids(directory: Path) -> list[int]:
    pids: set[int] = set()
    for path, _, _ in os.walk(directory):
        try:
            pids.update(int(p) for p in Path(path, "cgroup.procs").read_text().split())
        except FileNotFoundError:
            continue
    return sorted(pids)


def collect(*, components: Mapping[str, int], nodes: Sequence[RealNode], pods: Sequence[Any]) -> list[Row]:
    """Rows for the running ``components`` (name -> pid), everything in each node's runtime cgroup (kubelet,
    containerd, shims), every process of ``pods`` (V1Pods: found by uid under their node's cgroup root; a pod
    on the system node has the system role) and the caller. A pid is listed once, under its first name."""
    rows: list[Row] = []
    seen: set[int] = set()

    def add(pid: int, *, component: str, role: str, node: str = "") -> None:
        row = read_row(pid, component=component, role=role, node=node)
        if row is not None and pid not in seen:
            seen.add(pid)
            rows.append(row)

    for name, pid in components.items():
        add(pid, component=name, role=SYSTEM, node=next((n.name for n in nodes if name.endswith(f"-{n.name}")), ""))
    for node in nodes:
        for pid in sorted(cgroup_pids(node.runtime_cgroup)):
            add(pid, component=f"runtime {node.name}", role=SYSTEM, node=node.name)
    by_uid = {p.metadata.uid: p for p in pods}
    for node in nodes:
        role = SYSTEM if node.system else NODE
        for uid, directory in pod_cgroups(CGROUP_FS / "pids" / node.cgroup_root.strip("/"), by_uid):
            pod = by_uid[uid]
            for pid in subtree_pids(directory):
                add(pid, component=f"pod {pod.metadata.namespace}/{pod.metadata.name}", role=role, node=node.name)
    add(os.getpid(), component="caller", role=SYSTEM)
    return rows
