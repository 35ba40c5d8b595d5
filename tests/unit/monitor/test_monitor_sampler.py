"""The sampler over a fake /proc and cgroup tree written to a temp dir, with a stepped clock.

The files are real files the sampler reads; only the clock is injected, so rates are exact.
"""

import logging
from pathlib import Path

import pytest

from monitor.cgroupfs import NET_NO_PROCESS
from monitor.sampler import Sampler
from monitor.settings import build_settings

UID_A = "11111111-2222-3333-4444-555555555555"
UID_B = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def write_proc(root: Path, *, busy: int, total: int, rx: int, tx: int, read_sectors: int, write_sectors: int,
               avail_kb: int):
    root.mkdir(parents=True, exist_ok=True)
    idle = total - busy
    (root / "stat").write_text(f"cpu  {busy} 0 0 {idle} 0 0 0 0 0 0\n"
                               "cpu0 0 0 0 0\ncpu1 0 0 0 0\ncpu2 0 0 0 0\ncpu3 0 0 0 0\n")
    (root / "meminfo").write_text(f"MemTotal: 1048576 kB\nMemFree: 1 kB\nMemAvailable: {avail_kb} kB\n")
    (root / "net").mkdir(exist_ok=True)
    (root / "net" / "dev").write_text(
        "Inter-| header\n face |bytes\n"
        f"    lo: 999999 0 0 0 0 0 0 0 999999 0 0 0 0 0 0 0\n"
        f"  eth0: {rx} 0 0 0 0 0 0 0 {tx} 0 0 0 0 0 0 0\n"
    )
    (root / "diskstats").write_text(
        f" 254 0 vda 1 0 {read_sectors} 0 1 0 {write_sectors} 0 0 0 0 0 0 0 0 0 0\n"
        f" 254 1 vda1 1 0 {read_sectors} 0 1 0 {write_sectors} 0 0 0 0 0 0 0 0 0 0\n"
        " 7 0 loop0 1 0 999999 0 1 0 999999 0 0 0 0 0 0 0 0 0 0\n"
    )


def write_v2_pod(cg: Path, rel: str, *, usage_usec: int, memory: int, rbytes: int, wbytes: int):
    d = cg / rel
    d.mkdir(parents=True, exist_ok=True)
    (d / "cpu.stat").write_text(f"usage_usec {usage_usec}\nuser_usec 0\nsystem_usec 0\n")
    (d / "memory.current").write_text(f"{memory}\n")
    (d / "memory.stat").write_text("anon 0\ninactive_file 1000\n")
    (d / "io.stat").write_text(f"254:0 rbytes={rbytes} wbytes={wbytes} rios=0 wios=0\n")


@pytest.fixture
def tree(tmp_path):
    proc, cg = tmp_path / "proc", tmp_path / "cgroup"
    cg.mkdir()
    (cg / "cgroup.controllers").write_text("cpu memory io\n")
    write_proc(proc, busy=0, total=0, rx=0, tx=0, read_sectors=0, write_sectors=0, avail_kb=1048576)
    write_v2_pod(cg, f"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{UID_A.replace('-', '_')}.slice",
                 usage_usec=0, memory=5000, rbytes=0, wbytes=0)
    return proc, cg


def make(proc, cg, **kw):
    clock = Clock()
    settings = build_settings(proc_root=proc, cgroup_root=cg, interval=1.0, window=3, ewma_alpha=0.5, **kw)
    return Sampler(settings, clock=clock, wall=lambda: 1e9 + clock.now), clock


def test_rates_over_the_interval(tree):
    proc, cg = tree
    sampler, clock = make(proc, cg)
    first = sampler.sample_once()
    assert first.node["cpu_cores"].current is None  # rates need two samples
    assert first.node["memory_bytes"].current == 0
    assert first.cgroup_version == "2"
    assert first.interfaces == ("eth0",)  # loopback left out by default
    assert first.disks == ("vda",)  # not the partition or the loop device

    clock.now += 2.0
    write_proc(proc, busy=300, total=400, rx=2_000_000, tx=1_000_000, read_sectors=2000, write_sectors=4000,
               avail_kb=524288)
    write_v2_pod(cg, f"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{UID_A.replace('-', '_')}.slice",
                 usage_usec=3_000_000, memory=7000, rbytes=4096, wbytes=8192)
    snap = sampler.sample_once()
    assert snap.node["cpu_cores"].current == pytest.approx(3.0)  # 75 % of 4 CPUs
    assert snap.node["cpu_fraction"].current == pytest.approx(0.75)
    assert snap.node["memory_fraction"].current == pytest.approx(0.5)
    assert snap.node["net_rx_bytes_per_second"].current == pytest.approx(1_000_000)
    assert snap.node["net_tx_bytes_per_second"].current == pytest.approx(500_000)
    assert snap.node["disk_read_bytes_per_second"].current == pytest.approx(2000 * 512 / 2)
    assert snap.node["disk_write_bytes_per_second"].current == pytest.approx(4000 * 512 / 2)
    assert snap.capacity_cores == 4

    pod = snap.pods[UID_A]
    assert pod.qos == "burstable"
    assert pod.stats["cpu_cores"].current == pytest.approx(1.5)
    assert pod.stats["memory_bytes"].current == 7000
    assert pod.stats["memory_working_set_bytes"].current == 6000
    assert pod.stats["disk_write_bytes_per_second"].current == pytest.approx(4096)
    assert pod.stats["net_rx_bytes_per_second"].current is None
    assert pod.net_note == NET_NO_PROCESS  # the fake pod has no cgroup.procs


def test_pods_come_and_go(tree):
    proc, cg = tree
    sampler, clock = make(proc, cg)
    sampler.sample_once()
    write_v2_pod(cg, f"kubepods/besteffort/pod{UID_B}", usage_usec=0, memory=1, rbytes=0, wbytes=0)
    clock.now += 1
    snap = sampler.sample_once()
    assert set(snap.pods) == {UID_A, UID_B}
    assert snap.pods[UID_B].qos == "besteffort"
    for f in (cg / f"kubepods/besteffort/pod{UID_B}").iterdir():
        f.unlink()
    (cg / f"kubepods/besteffort/pod{UID_B}").rmdir()
    clock.now += 1
    assert set(sampler.sample_once().pods) == {UID_A}


def test_missing_sources_do_not_crash(tree, caplog):
    proc, cg = tree
    (proc / "diskstats").unlink()
    sampler, clock = make(proc, cg, interfaces=["eth0", "wlan9"], disks=["nvme9n9"])
    sampler.sample_once()
    clock.now += 1
    snap = sampler.sample_once()
    assert snap.errors_total == {"diskstats": 2}
    assert snap.interfaces == ("eth0",)
    assert snap.node["disk_read_bytes_per_second"].current is None
    assert snap.node["net_rx_bytes_per_second"].current == 0.0
    keys = [r.kv["key"] for r in caplog.records if r.levelno == logging.WARNING]
    assert "interface:wlan9" in keys and "source:diskstats" in keys
    assert keys.count("interface:wlan9") == 1  # warned once, not every sample


def test_missing_cgroup_root(tmp_path, tree):
    proc, _ = tree
    sampler, _clock = make(proc, tmp_path / "nope")
    snap = sampler.sample_once()
    assert snap.pods == {} and snap.cgroup_version is None


def test_v1_layout(tmp_path, tree):
    proc, _ = tree
    cg = tmp_path / "v1"
    pod = f"kubepods/burstable/pod{UID_B}"
    for controller in ("cpu,cpuacct", "memory", "blkio"):
        (cg / controller / pod).mkdir(parents=True)
    (cg / "cpu,cpuacct" / "cpuacct.usage").write_text("0\n")
    (cg / "cpu,cpuacct" / pod / "cpuacct.usage").write_text("0\n")
    (cg / "memory" / pod / "memory.usage_in_bytes").write_text("9000\n")
    (cg / "memory" / pod / "memory.stat").write_text("total_inactive_file 1000\n")
    (cg / "blkio" / pod / "blkio.throttle.io_service_bytes_recursive").write_text(
        "254:0 Read 0\n254:0 Write 0\nTotal 0\n")
    sampler, clock = make(proc, cg)
    sampler.sample_once()
    clock.now += 0.5
    (cg / "cpu,cpuacct" / pod / "cpuacct.usage").write_text("250000000\n")
    (cg / "blkio" / pod / "blkio.throttle.io_service_bytes_recursive").write_text(
        "254:0 Read 512\n254:0 Write 1024\nTotal 1536\n")
    snap = sampler.sample_once()
    assert snap.cgroup_version == "1"
    stats = snap.pods[UID_B].stats
    assert stats["cpu_cores"].current == pytest.approx(0.5)
    assert stats["memory_working_set_bytes"].current == 8000
    assert stats["disk_read_bytes_per_second"].current == pytest.approx(1024)
    assert stats["disk_write_bytes_per_second"].current == pytest.approx(2048)
