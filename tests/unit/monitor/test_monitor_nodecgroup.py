"""Node view ``cgroup`` (emulated nodes): node CPU and memory from the node's cgroup, network from its bridge.

A fake cgroup v1 tree and /proc in a temp dir, real files, a stepped clock: the rates are exact.
"""

from pathlib import Path

import pytest

from monitor.errors import ConfigError, SourceUnavailable
from monitor.nodecgroup import node_devices, parse_cpu_max, v1_quota_cores
from monitor.sampler import Sampler
from monitor.settings import build_settings


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def write_host(proc: Path, *, host_busy: int, bridge_rx: int, bridge_tx: int) -> None:
    (proc / "1" / "net").mkdir(parents=True, exist_ok=True)
    (proc / "stat").write_text(f"cpu  {host_busy} 0 0 1000000 0 0 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\n")
    (proc / "meminfo").write_text("MemTotal: 8388608 kB\nMemAvailable: 1 kB\n")
    (proc / "diskstats").write_text(" 254 0 vda 1 0 0 0 1 0 0 0 0 0 0 0 0 0 0\n")
    table = ("Inter-| header\n face |bytes\n    lo: 5 0 0 0 0 0 0 0 5 0 0 0 0 0 0 0\n"
             f"  drs0: {bridge_rx} 0 0 0 0 0 0 0 {bridge_tx} 0 0 0 0 0 0 0\n"
             "  drs1: 777777 0 0 0 0 0 0 0 777777 0 0 0 0 0 0 0\n")
    (proc / "1" / "net" / "dev").write_text(table)
    (proc / "net").mkdir(exist_ok=True)
    (proc / "net" / "dev").write_text(table.replace("drs0", "eth0"))  # the agent's own netns: not the node's


def write_node_v1(cg: Path, node: str, *, usage_ns: int, quota_us: int, memory: int, inactive: int) -> None:
    for h in ("cpu", "cpuacct", "memory"):
        (cg / h / node).mkdir(parents=True, exist_ok=True)
    (cg / "cpuacct" / "cpuacct.usage").write_text("0\n")
    (cg / "cpuacct" / node / "cpuacct.usage").write_text(f"{usage_ns}\n")
    (cg / "cpu" / node / "cpu.cfs_quota_us").write_text(f"{quota_us}\n")
    (cg / "cpu" / node / "cpu.cfs_period_us").write_text("100000\n")
    (cg / "memory" / node / "memory.usage_in_bytes").write_text(f"{memory}\n")
    (cg / "memory" / node / "memory.limit_in_bytes").write_text(f"{1 << 30}\n")
    (cg / "memory" / node / "memory.stat").write_text(f"cache 0\ntotal_inactive_file {inactive}\n")


@pytest.fixture
def tree(tmp_path):
    proc, cg = tmp_path / "proc", tmp_path / "cgroup"
    write_host(proc, host_busy=0, bridge_rx=0, bridge_tx=0)
    write_node_v1(cg, "rn-a", usage_ns=0, quota_us=25000, memory=300 << 20, inactive=100 << 20)
    return proc, cg


def sampler(proc: Path, cg: Path, clock: Clock, **extra) -> Sampler:
    extra = {"node_cgroup": "/rn-a", **extra}
    settings = build_settings(node_name="rn-a", proc_root=str(proc), cgroup_root=str(cg), cgroup_version="1",
                              node_view="cgroup", ewma_alpha=1.0, **extra)
    return Sampler(settings, clock=clock, wall=clock)


def test_node_cpu_memory_and_net_are_the_node_cgroups_and_its_bridges(tree):
    proc, cg = tree
    clock = Clock()
    s = sampler(proc, cg, clock, node_net_dev="rn-a=drs0,rn-b=drs1")
    s.sample_once()
    clock.now += 2.0
    # The host burns 2 whole CPUs; the node's cgroup used 0.4 s of CPU in 2 s, and its quota is 0.25 cores.
    write_host(proc, host_busy=400, bridge_rx=2000, bridge_tx=8000)
    write_node_v1(cg, "rn-a", usage_ns=400_000_000, quota_us=25000, memory=300 << 20, inactive=100 << 20)
    snap = s.sample_once()
    assert snap.capacity_cores == pytest.approx(0.25)
    assert snap.node["cpu_cores"].current == pytest.approx(0.2)
    assert snap.node["cpu_fraction"].current == pytest.approx(0.8)
    assert snap.capacity_memory_bytes == 1 << 30
    assert snap.node["memory_bytes"].current == 200 << 20  # the working set, not the host's MemTotal - MemAvailable
    # The bridge transmits what enters the node: node rx = bridge tx.
    assert snap.node["net_rx_bytes_per_second"].current == pytest.approx(4000)
    assert snap.node["net_tx_bytes_per_second"].current == pytest.approx(1000)
    assert snap.interfaces == ("drs0",)


def test_default_view_stays_the_hosts(tree):
    proc, cg = tree
    settings = build_settings(node_name="rn-a", proc_root=str(proc), cgroup_root=str(cg), cgroup_version="1")
    assert settings.node_view == "host"
    snap = Sampler(settings).sample_once()
    assert snap.capacity_cores == 2 and snap.interfaces == ("drs1", "eth0")  # every host interface but lo


def test_missing_node_cgroup_is_a_counted_source_error_not_a_crash(tree):
    proc, cg = tree
    clock = Clock()
    s = sampler(proc, cg, clock, node_cgroup="/rn-gone")
    snap = s.sample_once()
    assert snap.node["memory_bytes"].current is None
    assert snap.errors_total.get("node_cgroup", 0) >= 1


def test_node_view_cgroup_needs_a_cgroup_path():
    with pytest.raises(ConfigError, match="node_cgroup"):
        build_settings(node_view="cgroup")
    with pytest.raises(ConfigError, match="node_view"):
        build_settings(node_view="proc")


@pytest.mark.parametrize(("spec", "node", "want"), [
    (["drs0"], "rn-a", ["drs0"]),
    (["rn-a=drs0", "rn-b=drs1"], "rn-b", ["drs1"]),
    (["rn-a=drs0", "veth1"], "rn-c", ["veth1"]),
    ([], "rn-a", []),
])
def test_node_devices(spec, node, want):
    assert node_devices(spec, node) == want


def test_quota_parsers():
    assert parse_cpu_max("50000 100000\n") == 0.5
    assert parse_cpu_max("max 100000") is None
    assert v1_quota_cores("-1", "100000") is None
    assert v1_quota_cores("25000\n", "100000\n") == 0.25
    with pytest.raises(SourceUnavailable):
        parse_cpu_max("x 100000")


@pytest.mark.parametrize(("before_us", "after_us"), [(100000, 20000), (20000, 100000)])
def test_a_quota_change_gives_the_right_cores_from_the_next_sample_on(tree, before_us, after_us):
    # The quota is cut (or restored) between two samples: the interval is measured against the new capacity,
    # never against a capacity x clock product that jumps with it (a negative or huge denominator).
    proc, cg = tree
    clock = Clock()
    clock.now = 50_000.0  # a monotonic clock far from 0, as on a real host
    usage = 0
    write_node_v1(cg, "rn-a", usage_ns=usage, quota_us=before_us, memory=300 << 20, inactive=100 << 20)
    s = sampler(proc, cg, clock)
    s.sample_once()
    for quota_us in (before_us, after_us, after_us):
        clock.now += 2.0
        usage += int(2.0 * 0.9 * quota_us / 100000 * 1e9)  # the node uses 90 % of its quota
        write_node_v1(cg, "rn-a", usage_ns=usage, quota_us=quota_us, memory=300 << 20, inactive=100 << 20)
        snap = s.sample_once()
        assert snap.capacity_cores == pytest.approx(quota_us / 100000)
        assert snap.node["cpu_fraction"].current == pytest.approx(0.9)
        assert snap.node["cpu_cores"].current == pytest.approx(0.9 * quota_us / 100000)
