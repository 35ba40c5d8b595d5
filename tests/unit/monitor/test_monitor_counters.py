"""Table tests for the step from two counter snapshots to usage values (monitor.counters)."""

import pytest

from monitor.counters import NodeCounters, PodCounters, node_values, pod_values
from monitor.procfs import CpuTimes, MemInfo


def node(mono, *, busy=0, total=0, ncpu=2, used=0, net=None, disk=None, cpu=True, memory=True):
    return NodeCounters(
        mono=mono,
        wall=1000.0 + mono,
        cpu=CpuTimes(busy, total) if cpu else None,
        ncpu=ncpu if cpu else None,
        memory=MemInfo(total=1000, available=1000 - used) if memory else None,
        net=net,
        disk=disk,
    )


def test_first_sample_has_memory_but_no_rates():
    values = node_values(None, node(0.0, used=250))
    assert values["memory_bytes"] == 250
    assert values["memory_fraction"] == 0.25
    assert values["cpu_cores"] is None
    assert values["net_rx_bytes_per_second"] is None


@pytest.mark.parametrize(
    ("prev", "cur", "expected"),
    [
        # half the ticks busy on a 4-CPU node = 2 cores
        (node(0, busy=100, total=1000, ncpu=4), node(1, busy=600, total=2000, ncpu=4),
         {"cpu_fraction": 0.5, "cpu_cores": 2.0}),
        # no ticks
        (node(0, busy=100, total=1000), node(1, busy=100, total=1000), {"cpu_fraction": None, "cpu_cores": None}),
        # reset
        (node(0, busy=500, total=1000), node(1, busy=10, total=1100), {"cpu_fraction": None, "cpu_cores": None}),
        (node(0, cpu=False), node(1, busy=10, total=20), {"cpu_fraction": None, "cpu_cores": None}),
        (
            node(0, net={"eth0": (0, 0), "eth1": (100, 0)}),
            node(2, net={"eth0": (2000, 400), "eth1": (300, 0)}),
            {"net_rx_bytes_per_second": 1100.0, "net_tx_bytes_per_second": 200.0, "net_bytes_per_second": 1300.0},
        ),
        (
            node(0, net={"eth0": (5000, 5000)}),
            node(1, net={"eth0": (10, 10)}),  # interface re-created: counters reset
            {"net_rx_bytes_per_second": None, "net_tx_bytes_per_second": None, "net_bytes_per_second": None},
        ),
        (
            node(0, disk={"vda": (0, 0)}),
            node(0.5, disk={"vda": (512, 1024)}),
            {"disk_read_bytes_per_second": 1024.0, "disk_write_bytes_per_second": 2048.0,
             "disk_bytes_per_second": 3072.0},
        ),
        (node(0, disk=None), node(1, disk={"vda": (1, 1)}),
         {"disk_read_bytes_per_second": None, "disk_bytes_per_second": None}),
    ],
)
def test_node_values(prev, cur, expected):
    values = node_values(prev, cur)
    for key, want in expected.items():
        assert values[key] == (None if want is None else pytest.approx(want)), key


def test_no_value_is_ever_negative():
    prev = node(0, busy=900, total=1000, net={"eth0": (9, 9)}, disk={"vda": (9, 9)})
    cur = node(1, busy=0, total=0, net={"eth0": (0, 0)}, disk={"vda": (0, 0)})
    assert all(v is None or v >= 0 for v in node_values(prev, cur).values())


def pod(cpu_usec=None, mem=None, ws=None, disk=None, net=None, note=None):
    return PodCounters(cpu_usec=cpu_usec, memory_bytes=mem, working_set_bytes=ws, disk=disk, net=net, net_note=note)


@pytest.mark.parametrize(
    ("prev", "cur", "dt", "expected"),
    [
        (None, pod(cpu_usec=5, mem=100, ws=60), 1.0,
         {"cpu_cores": None, "memory_bytes": 100.0, "memory_working_set_bytes": 60.0}),
        (pod(cpu_usec=0), pod(cpu_usec=1_500_000), 2.0, {"cpu_cores": 0.75}),
        (pod(cpu_usec=9_000_000), pod(cpu_usec=0), 1.0, {"cpu_cores": None}),  # cgroup re-created
        (pod(disk=(0, 0)), pod(disk=(100, 300)), 0.5,
         {"disk_read_bytes_per_second": 200.0, "disk_write_bytes_per_second": 600.0}),
        (pod(net=(0, 10)), pod(net=(1000, 30)), 1.0,
         {"net_rx_bytes_per_second": 1000.0, "net_tx_bytes_per_second": 20.0}),
        (pod(net=None, note="host"), pod(net=None, note="host"), 1.0, {"net_rx_bytes_per_second": None}),
        (pod(cpu_usec=1), pod(cpu_usec=None), 1.0, {"cpu_cores": None}),
    ],
)
def test_pod_values(prev, cur, dt, expected):
    values = pod_values(prev, cur, dt)
    for key, want in expected.items():
        assert values[key] == (None if want is None else pytest.approx(want)), key
