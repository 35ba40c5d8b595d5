"""Per-pod usage from real cgroups: busy processes moved into test cgroups shaped like kubelet pod cgroups.

This machine (the CI box) mounts cgroup v1 controllers under /sys/fs/cgroup/<controller>
plus an empty cgroup2 hierarchy at /sys/fs/cgroup/unified (hybrid mode), and runs tests as
root, so both are writable. The tests find the mounts from /proc/mounts and skip with the
reason when a hierarchy is absent or not writable. Test cgroups live under a parent named
``drsched-test-<pid>`` (passed as ``--cgroup-parent``, like the kubelet's --cgroup-root), so
they never mix with a real kubelet's pods, and are removed afterwards.

A third test points ``--cgroup-root`` at a fake v2 tree in a temp dir that the test
updates, to check the memory and io.stat paths that the real hybrid hierarchy lacks.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from monitor.cgroupfs import NET_HOST, NET_NO_PROCESS
from tests.helpers import deadline, wait_for

UDP_SENDER = """
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
payload = b"x" * 1400
end = time.monotonic() + {seconds:.0f}
while time.monotonic() < end:
    s.sendto(payload, ("10.99.0.2", 9))
"""
# A pod with its own network namespace: a veth pair with a static neighbour, so UDP to the
# peer address leaves v0 (tx) and arrives on v1 (rx) without any other host taking part.
NETNS_SETUP = (
    "ip link add v0 type veth peer name v1 && ip addr add 10.99.0.1/24 dev v0 && ip link set v0 up && "
    "ip link set v1 up && ip neigh add 10.99.0.2 lladdr 02:00:00:00:00:02 dev v0 && exec {python} -c '{code}'"
)


def cgroup_mounts() -> list[tuple[str, str, set[str]]]:
    out = []
    for line in Path("/proc/mounts").read_text().splitlines():
        _dev, mountpoint, fstype, options, *_ = line.split()
        if fstype in ("cgroup", "cgroup2"):
            out.append((mountpoint, fstype, set(options.split(","))))
    return out


def v1_cpuacct_mount() -> Path | None:
    for mountpoint, fstype, options in cgroup_mounts():
        if fstype == "cgroup" and "cpuacct" in options:
            return Path(mountpoint)
    return None


def v2_mount() -> Path | None:
    for mountpoint, fstype, _options in cgroup_mounts():
        if fstype == "cgroup2":
            return Path(mountpoint)
    return None


@contextlib.contextmanager
def cgroup_dirs(*leaves: Path, top: Path) -> Iterator[None]:
    """Create ``leaves`` (and parents); remove everything under and including ``top`` afterwards."""
    try:
        for leaf in leaves:
            leaf.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        pytest.skip(f"cannot create cgroups under {top.parent}: {exc}")
    try:
        yield
    finally:
        deadline = time.monotonic() + 5
        while top.exists() and time.monotonic() < deadline:
            for current, _dirs, _files in sorted(os.walk(top), key=lambda w: -len(w[0])):
                with contextlib.suppress(OSError):
                    os.rmdir(current)  # cgroup dirs are removed with rmdir, bottom-up; files go with them
            time.sleep(0.05)


def move(pid: int, cgroup: Path) -> None:
    (cgroup / "cgroup.procs").write_text(str(pid))


def pod_stat(agent, uid: str, series: str) -> float | None:
    pod = agent.usage()["pods"].get(uid)
    return None if pod is None else pod[series]["current"]


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` in seconds (fields 14 and 15 of /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuTracker:
    """Whether the agent's cores for a pod track what the pod's one process really got, lately.

    Relative, not a fixed floor: on a loaded machine the busy process may get a small share of a core. The
    process's own rate is taken over the last second (the agent reports its last interval).
    """

    def __init__(self, agent, uid: str, pid: int) -> None:
        self.agent, self.uid, self.pid = agent, uid, pid
        self.samples = [(time.monotonic(), cpu_seconds(pid))]

    def __call__(self) -> float | None:
        now, used = time.monotonic(), cpu_seconds(self.pid)
        self.samples = [s for s in self.samples if now - s[0] <= 1.5] + [(now, used)]
        then, before = self.samples[0]
        if now - then < 0.5:
            return None
        cores = pod_stat(self.agent, self.uid, "cpu_cores")
        return cores if cores and cores >= 0.5 * (used - before) / (now - then) else None


def netns_workload() -> list[str] | None:
    if os.geteuid() != 0 or not (shutil.which("unshare") and shutil.which("ip")):
        return None
    sender = UDP_SENDER.format(seconds=deadline(20))
    argv = ["unshare", "--net", "sh", "-c", NETNS_SETUP.format(python=sys.executable, code=sender)]
    probe = subprocess.run(["unshare", "--net", "ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"],
                           capture_output=True)
    return argv if probe.returncode == 0 else None


def test_v1_systemd_layout_attributes_cpu_and_network_to_the_pod(start_agent, busy):
    hierarchy = v1_cpuacct_mount()
    if hierarchy is None:
        pytest.skip("no cgroup v1 cpuacct hierarchy on this machine (pure cgroup v2 host)")
    parent = f"drsched-test-{os.getpid()}"
    busy_uid, idle_uid = str(uuid.uuid4()), str(uuid.uuid4())
    kubepods = hierarchy / parent / "kubepods.slice"
    busy_container = (kubepods / "kubepods-burstable.slice"
                      / f"kubepods-burstable-pod{busy_uid.replace('-', '_')}.slice"
                      / "cri-containerd-0123abcd.scope")
    idle_pod = kubepods / f"kubepods-pod{idle_uid.replace('-', '_')}.slice"
    workload = netns_workload()
    with cgroup_dirs(busy_container, idle_pod, top=hierarchy / parent):
        load = busy(argv=workload) if workload else busy(seconds=20)
        move(load.pid, busy_container)
        agent = start_agent("--cgroup-root", str(hierarchy.parent), "--cgroup-parent", parent)
        assert agent.usage()["cgroup_version"] == "1"
        cores = wait_for(CpuTracker(agent, busy_uid, load.pid), timeout=10,
                         what="busy pod cpu_cores >= half of what its process got")
        pods = agent.usage()["pods"]
        assert pods[busy_uid]["qos"] == "burstable" and pods[idle_uid]["qos"] == "guaranteed"
        assert pods[idle_uid]["cpu_cores"]["current"] <= min(0.05, cores / 2)
        assert pods[idle_uid]["net_unavailable_reason"] == NET_NO_PROCESS
        if workload:
            wait_for(lambda: (v := pod_stat(agent, busy_uid, "net_tx_bytes_per_second")) is not None and v > 1e6,
                     timeout=10, what="pod net tx > 1 MB/s in its own netns")
            pod = agent.usage()["pods"][busy_uid]
            assert pod["net_unavailable_reason"] is None
            assert pod["net_rx_bytes_per_second"]["max"] > 1e6  # the veth peer is in the pod's netns too
        metrics = agent.get("/metrics").text
        assert f'pod_uid="{busy_uid}"' in metrics
        load.kill()
        load.wait()
        wait_for(lambda: (v := pod_stat(agent, busy_uid, "cpu_cores")) is not None and v <= 0.05,
                 timeout=8, what="busy pod cpu to fall to ~0 after the process ends")
        assert agent.alive()


def test_v2_cgroupfs_layout_attributes_cpu_to_the_pod(start_agent, busy):
    hierarchy = v2_mount()
    if hierarchy is None:
        pytest.skip("no cgroup2 hierarchy mounted")
    parent = f"drsched-test-v2-{os.getpid()}"
    uid = str(uuid.uuid4())
    container = hierarchy / parent / "kubepods" / "burstable" / f"pod{uid}" / "0123abcd"
    with cgroup_dirs(container, top=hierarchy / parent):
        load = busy(seconds=20)
        move(load.pid, container)
        agent = start_agent("--cgroup-root", str(hierarchy), "--cgroup-parent", parent)
        assert agent.usage()["cgroup_version"] == "2"
        wait_for(CpuTracker(agent, uid, load.pid), timeout=10,
                 what="pod cpu_cores from cpu.stat usage_usec >= half of what its process got")
        pod = agent.usage()["pods"][uid]
        assert pod["qos"] == "burstable"
        assert pod["net_unavailable_reason"] == NET_HOST  # the busy process runs in this (host) netns
        has_memory = "memory" in (hierarchy / "cgroup.controllers").read_text().split()
        if has_memory:
            assert pod["memory_bytes"]["current"] > 0
        else:  # hybrid mode: memory is a v1 controller, v2 has no memory.current
            assert pod["memory_bytes"]["current"] is None
            assert "cgroup file missing" in agent.log()
        load.kill()
        load.wait()
        wait_for(lambda: (v := pod_stat(agent, uid, "cpu_cores")) is not None and v <= 0.05,
                 timeout=8, what="pod cpu to fall after the process ends")


def test_fake_v2_tree_memory_and_io_and_a_pod_that_vanishes(start_agent, tmp_path):
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    uid = str(uuid.uuid4())
    pod = (root / "kubepods.slice" / "kubepods-besteffort.slice"
           / f"kubepods-besteffort-pod{uid.replace('-', '_')}.slice")
    pod.mkdir(parents=True)
    stop = threading.Event()
    start = time.monotonic()

    def put(name: str, text: str) -> None:
        # write-then-rename, as the agent must never see a half-written file (a kernel file never is)
        (pod / f".{name}").write_text(text)
        os.replace(pod / f".{name}", pod / name)

    def write_counters() -> None:
        # 0.5 cores of CPU and 2 MB/s of writes, 1 MB/s of reads, in real time
        while True:
            elapsed = time.monotonic() - start
            put("cpu.stat", f"usage_usec {int(0.5e6 * elapsed)}\nuser_usec 0\nsystem_usec 0\n")
            put("io.stat", f"254:0 rbytes={int(1e6 * elapsed)} wbytes={int(2e6 * elapsed)} rios=1 wios=1\n")
            put("memory.current", "123456789\n")
            put("memory.stat", "anon 100\ninactive_file 23456789\n")
            if stop.wait(0.05):
                return

    writer = threading.Thread(target=write_counters)
    writer.start()
    try:
        agent = start_agent("--cgroup-root", str(root))
        wait_for(lambda: (v := pod_stat(agent, uid, "cpu_cores")) is not None and 0.3 <= v <= 0.7,
                 timeout=8, what="fake pod cpu ~0.5 cores")
        report = agent.usage()
        got = report["pods"][uid]
        assert report["cgroup_version"] == "2"
        assert got["qos"] == "besteffort"
        assert got["memory_bytes"]["current"] == 123456789
        assert got["memory_working_set_bytes"]["current"] == 100000000
        assert got["disk_write_bytes_per_second"]["ewma"] == pytest.approx(2e6, rel=0.4)
        assert got["disk_read_bytes_per_second"]["ewma"] == pytest.approx(1e6, rel=0.4)
    finally:
        stop.set()
        writer.join()
    shutil.rmtree(pod)
    wait_for(lambda: uid not in agent.usage()["pods"], timeout=5, what="vanished pod to leave /usage")
    assert agent.alive()
