"""What a real-node cluster costs: start-up time, then CPU and memory while idle.

Starts `harness.realcluster.RealCluster` (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
kube-proxy and the real kubelet + containerd nodes), reports how long start-up took (binaries already
built), lets it settle, then samples every process it owns for `--seconds`: the control-plane
components by pid, each node by its cgroups (kubelet, containerd, shims in `/<node>.runtime`; pods in
`/<node>`). CPU is % of one core averaged over the window, memory the RSS at its end. Prints figures;
asserts nothing. Needs root and cgroup v1 (see `python -m harness.realnodes check`).

    python bench/bench_realnodes.py                 # 60 s idle window
    python bench/bench_realnodes.py --seconds 20
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

from harness import nodes
from harness.cluster import ensure_binaries
from harness.realcluster import RealCluster, ensure_node_binaries

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])  # utime + stime (fields 14, 15 of stat)


def rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def groups(cluster: RealCluster) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    node_pids: set[int] = set()
    for node in cluster.nodes:
        runtime = nodes.cgroup_pids(node.runtime_cgroup)
        pods = nodes.cgroup_pids(node.cgroup_root)
        out[f"node {node.name}: kubelet+containerd+shims"] = runtime
        out[f"node {node.name}: pods"] = pods
        node_pids |= runtime | pods
    for name, component in cluster.components.items():
        if component.running and component.proc is not None and component.proc.pid not in node_pids:
            out[name] = {component.proc.pid}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the idle window")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds to wait after start-up before sampling")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    reason = nodes.unavailable_reason()
    if reason is not None:
        print(f"skipped: {reason}")  # noqa: T201
        return 0
    bins, node_bins = ensure_binaries(), ensure_node_binaries()
    cluster = RealCluster(
        workdir=Path(tempfile.mkdtemp(prefix="bench-realnodes-")), binaries=bins, node_binaries=node_bins
    )
    started = time.monotonic()
    try:
        cluster.start()
        startup = time.monotonic() - started
        time.sleep(args.settle)
        pids = groups(cluster)
        before = {name: sum(cpu_ticks(p) for p in members) for name, members in pids.items()}
        t0 = time.monotonic()
        time.sleep(args.seconds)
        window = time.monotonic() - t0
        pids_after = groups(cluster)
        print(f"real-node cluster: {len(cluster.nodes)} nodes, start-up {startup:.1f} s, idle window {window:.0f} s")  # noqa: T201
        print(f"{'component':48} {'cpu % of a core':>16} {'rss MiB':>9}")  # noqa: T201
        total_cpu = total_rss = 0.0
        for name, members in pids_after.items():
            ticks = sum(cpu_ticks(p) for p in members) - before.get(name, 0)
            cpu = 100.0 * ticks / TICKS / window
            rss = sum(rss_mib(p) for p in members)
            total_cpu += cpu
            total_rss += rss
            print(f"{name:48} {cpu:16.2f} {rss:9.1f}")  # noqa: T201
        print(f"{'total':48} {total_cpu:16.2f} {total_rss:9.1f}")  # noqa: T201
    finally:
        cluster.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
