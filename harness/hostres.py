"""Machine-wide resources real nodes create outside their own directories, listed and cleaned up.

Kubelets, containerd, CNI and kube-proxy leave traces in places shared with the rest of the machine:
mounts (overlay rootfs, shm, tmpfs volumes, network namespaces under /run/netns), top-level cgroups,
bridges and veths, iptables chains and rules. `snapshot()` lists them, so a test can compare the machine
before and after a cluster; `cleanup(baseline, ...)` removes what a cluster added since `baseline` when
the orderly shutdown (pods deleted through their kubelets) could not, e.g. after a kill.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .nodes import CGROUP_FS, V1_HIERARCHIES

log = logging.getLogger(__name__)

NETNS_DIR = Path("/run/netns")
# Chains the kubelet and kube-proxy create; rules we remove must mention one. Not CNI-*: our CNI config
# (no ipMasq, no portmap) writes no iptables rules, and other tools on the machine (podman) own CNI-* ones.
OUR_CHAIN = re.compile(r"\bKUBE-[A-Z0-9-]+\b")
# A table's built-in chains. The kernel creates them, empty, the first time anything uses the table (on a
# fresh machine: the first kube-proxy or CNI run), and they never go away; what a cluster can leave behind in
# them is rules, which are listed on their own. So their headers are the kernel's first-use state, not ours.
BUILTIN_CHAINS = frozenset({"INPUT", "FORWARD", "OUTPUT", "PREROUTING", "POSTROUTING"})


@dataclass(frozen=True)
class Snapshot:
    mounts: frozenset[str]
    cgroups: frozenset[str]
    links: frozenset[str]
    netns: frozenset[str]
    iptables: frozenset[str]

    def added_since(self, before: Snapshot) -> dict[str, list[str]]:
        """What is here now and was not in `before`, per kind (empty lists are left out)."""
        diff = {kind: sorted(getattr(self, kind) - getattr(before, kind)) for kind in self.__dataclass_fields__}
        return {kind: items for kind, items in diff.items() if items}


def _mountpoints() -> list[str]:
    # mountinfo field 5 is the mount point, with spaces etc. octal-escaped (\040).
    return [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]


def parse_iptables_save(tool: str, text: str) -> list[str]:
    """``<tool> <table> <rule or user chain>`` for each rule and user-defined chain in ``iptables-save`` output;
    built-in chains are left out (``BUILTIN_CHAINS``), and chain headers lose their packet counters."""
    lines, table = [], ""
    for line in text.splitlines():
        if line.startswith("*"):
            table = line[1:]
        elif line.startswith(("-A ", ":")):
            chain = line.split()[0][1:] if line.startswith(":") else ""
            if chain in BUILTIN_CHAINS:
                continue
            lines.append(f"{tool} {table} {chain or line}")
    return lines


def _iptables_lines() -> list[str]:
    lines = []
    for tool in ("iptables", "ip6tables"):
        done = subprocess.run([f"{tool}-save"], capture_output=True, text=True, check=False)
        lines += parse_iptables_save(tool, done.stdout)
    return lines


def snapshot() -> Snapshot:
    cgroups = {
        f"{h}/{entry.name}" for h in V1_HIERARCHIES if (CGROUP_FS / h).is_dir()
        for entry in os.scandir(CGROUP_FS / h) if entry.is_dir()
    }  # fmt: skip
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=False).stdout
    return Snapshot(
        mounts=frozenset(_mountpoints()),
        cgroups=frozenset(cgroups),
        links=frozenset(line.split(":")[1].strip().split("@")[0] for line in links.splitlines() if ":" in line),
        netns=frozenset(p.name for p in NETNS_DIR.iterdir()) if NETNS_DIR.is_dir() else frozenset(),
        iptables=frozenset(_iptables_lines()),
    )


def unmount_under(directories: list[Path], *, baseline: Snapshot) -> None:
    """Unmount every mount below `directories`, plus CNI network namespaces made since `baseline`."""
    roots = [str(d.resolve()) for d in directories]
    netns = [str(NETNS_DIR / name) for name in sorted(snapshot().netns - baseline.netns) if name.startswith("cni-")]
    targets = [m for m in _mountpoints() if any(m == r or m.startswith(r + "/") for r in roots)]
    targets += [m for m in _mountpoints() if m in netns]
    # Deepest first, so a mount below another is gone before its parent.
    for target in sorted(set(targets), key=lambda m: -m.count("/")):
        done = subprocess.run(["umount", target], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            subprocess.run(["umount", "-l", target], capture_output=True, check=False)
            log.warning("lazy unmount target=%s error=%s", target, done.stderr.strip())
    for path in netns:
        Path(path).unlink(missing_ok=True)


def remove_iptables_added(baseline: Snapshot, *, passes: int = 3, copies: int = 32) -> None:
    """Delete rules, then chains, that name a KUBE- chain and were not there at `baseline`.

    A rule can be there more than once (several kubelets starting together each check, then prepend, the
    same jump), and a snapshot lists it once, so each is deleted until `-D` finds no copy left. Several
    passes: a delete can fail while another tool on the machine (podman, buildah) holds the ruleset, and a
    chain can only go once nothing jumps to it.
    """
    for _ in range(passes):
        added = sorted(line for line in snapshot().iptables - baseline.iptables if OUR_CHAIN.search(line))
        if not added:
            return
        rules = [line for line in added if " -A " in line]
        chains = [line for line in added if " -A " not in line and OUR_CHAIN.fullmatch(line.split()[-1])]
        for line in rules:
            tool, table, rule = line.split(" ", 2)
            spec = shlex.split(rule)[1:]  # drop "-A"; comments are quoted
            for _copy in range(copies):
                done = subprocess.run([tool, "-w", "5", "-t", table, "-D", *spec], capture_output=True, check=False)
                if done.returncode != 0:
                    break
        for flag in ("-F", "-X"):  # flush all first: a chain cannot be deleted while another jumps to it
            for line in chains:
                tool, table, chain = line.split()
                subprocess.run([tool, "-w", "5", "-t", table, flag, chain], capture_output=True, check=False)
    left = [line for line in sorted(snapshot().iptables - baseline.iptables) if OUR_CHAIN.search(line)]
    if left:
        log.warning("iptables entries left after cleanup count=%d first=%s", len(left), left[0])
