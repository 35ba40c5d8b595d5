"""Reads each node's cgroup cpu counters once a poll, for the host-interference gate (``lab.gates``), and the
system CPU set's use beside them (``system_sampler``: the system cgroups' ``cpuacct.usage`` and every CPU's
``/proc/stat`` line, for ``system.csv`` and the report), and every pod's under each node (``pod_sampler``, for
``pod-counters.csv``: how much CPU time each job got, so that a job's work per CPU-second can be told from its
share of the node).

Why it exists: the gate needs ``cpu.stat`` and ``cpuacct.usage`` of every node's cgroup about once a second,
and only this module (and ``lab.experiment``, which knows the nodes' cgroup roots) touches those files. Where
they do not exist -- no real nodes, a cgroup layout this does not know -- ``sampler`` returns None and the arm
runs without the gate (no gates.csv row: not checked, rather than passed). cgroup v1 keeps the counters under
``/sys/fs/cgroup/cpu/<root>/cpu.stat`` and ``/sys/fs/cgroup/cpuacct/<root>/cpuacct.usage``; cgroup v2 under
``/sys/fs/cgroup/<root>/cpu.stat`` alone (its ``usage_usec``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from lab.gates import (
    GateError,
    NodeSample,
    PodSample,
    SystemSample,
    parse_cpu_stat,
    parse_cpuacct_usage,
    parse_proc_stat,
)

log = logging.getLogger(__name__)
CGROUP_FS = Path("/sys/fs/cgroup")
PROC_STAT = Path("/proc/stat")


def counter_paths(cgroup_root: str, *, fs: Path = CGROUP_FS) -> tuple[Path, Path | None] | None:
    """(cpu.stat, cpuacct.usage or None for v2) of a cgroup, or None where neither layout has them."""
    root = cgroup_root.strip("/")
    v1_stat, v1_usage = fs / "cpu" / root / "cpu.stat", fs / "cpuacct" / root / "cpuacct.usage"
    if v1_stat.exists() and v1_usage.exists():
        return v1_stat, v1_usage
    if (fs / root / "cpu.stat").exists():
        return fs / root / "cpu.stat", None
    return None


def read_sample(t_s: float, node: str, paths: tuple[Path, Path | None]) -> NodeSample | None:
    """One node's counters now; None (logged) when a file vanished or does not parse."""
    stat_path, usage_path = paths
    try:
        stat = parse_cpu_stat(stat_path.read_text(), path=str(stat_path))
        usage = (parse_cpuacct_usage(usage_path.read_text(), path=str(usage_path)) if usage_path is not None
                 else stat.usage_ns)
    except (OSError, GateError) as exc:
        log.debug("counter read failed node=%s error=%s", node, exc)
        return None
    return None if usage is None else NodeSample(t_s=t_s, node=node, stat=stat, usage_ns=usage)


def sampler(cgroup_roots: Mapping[str, str], *, fs: Path = CGROUP_FS
            ) -> Callable[[float], list[NodeSample]] | None:
    """A function t_s -> every node's sample, over the nodes whose counters exist; None if no node has them."""
    paths = {node: p for node, root in cgroup_roots.items() if (p := counter_paths(root, fs=fs)) is not None}
    if not paths:
        log.info("no cgroup cpu counters found: the host-interference gate is not checked nodes=%s",
                 ",".join(cgroup_roots))
        return None

    def sample(t_s: float) -> list[NodeSample]:
        return [s for node, p in sorted(paths.items()) if (s := read_sample(t_s, node, p)) is not None]

    return sample


def pod_cgroups(cgroup_root: str, *, fs: Path = CGROUP_FS) -> dict[str, str]:
    """uid -> cgroup path (``<root>/kubepods[/<qos>]/pod<uid>``, kubelet's cgroupfs layout) of every pod under a
    node's cgroup root now, from the cpuacct hierarchy (v1) or the unified one (v2); {} where there is none."""
    root = cgroup_root.strip("/")
    base = fs / "cpuacct" / root if (fs / "cpuacct" / root).is_dir() else fs / root
    out = {}
    for directory, subdirs, _ in os.walk(base / "kubepods"):
        for sub in [d for d in subdirs if d.startswith("pod")]:
            subdirs.remove(sub)  # its containers' cgroups are inside: not walked
            out[sub.removeprefix("pod")] = f"{root}/{Path(directory, sub).relative_to(base)}"
    return out


def pod_sampler(cgroup_roots: Mapping[str, str], *, fs: Path = CGROUP_FS) -> Callable[[float], list[PodSample]]:
    """A function t_s -> one sample per pod cgroup under each node's root (found again at every call: pods come
    and go), with its ``cpu.stat`` and CPU time (``counter_paths``); a pod whose files vanished mid-read is left
    out of that call."""

    def sample(t_s: float) -> list[PodSample]:
        out = []
        for node, root in sorted(cgroup_roots.items()):
            for uid, path in sorted(pod_cgroups(root, fs=fs).items()):
                paths = counter_paths(path, fs=fs)
                got = None if paths is None else read_sample(t_s, node, paths)
                if got is not None:
                    out.append(PodSample(t_s=t_s, node=node, uid=uid, stat=got.stat, usage_ns=got.usage_ns))
        return out

    return sample


def system_sampler(cgroups: Sequence[str], *, cpu_roles: Mapping[int, str], fs: Path = CGROUP_FS,
                   proc_stat: Path = PROC_STAT) -> Callable[[float], list[SystemSample]]:
    """A function t_s -> the ``cpuacct.usage`` of each of ``cgroups`` that exists (v1; v2's ``usage_usec``) and
    one sample per CPU of ``proc_stat``, each CPU's role from ``cpu_roles`` (CPU -> "system" / "node"; "" for
    a CPU in neither, or without isolation). A file that vanished or does not parse is left out (logged)."""
    paths = {c: p for c in cgroups if (p := counter_paths(c, fs=fs)) is not None}
    if len(paths) < len(cgroups):
        log.info("system cgroups without cpu counters cgroups=%s", ",".join(sorted(set(cgroups) - set(paths))))

    def sample(t_s: float) -> list[SystemSample]:
        out = []
        for cgroup, (stat_path, usage_path) in sorted(paths.items()):
            try:
                usage = (parse_cpuacct_usage(usage_path.read_text(), path=str(usage_path)) if usage_path is not None
                         else parse_cpu_stat(stat_path.read_text(), path=str(stat_path)).usage_ns)
            except (OSError, GateError) as exc:
                log.debug("system counter read failed cgroup=%s error=%s", cgroup, exc)
                continue
            if usage is not None:
                out.append(SystemSample(t_s=t_s, source=cgroup, role="cgroup", usage_ns=usage))
        try:
            cpus = parse_proc_stat(proc_stat.read_text(), path=str(proc_stat))
        except (OSError, GateError) as exc:
            log.debug("proc stat read failed error=%s", exc)
            return out
        for name, times in sorted(cpus.items(), key=lambda kv: int(kv[0][3:])):
            out.append(SystemSample(t_s=t_s, source=name, role=cpu_roles.get(int(name[3:]), ""), times=times))
        return out

    return sample
