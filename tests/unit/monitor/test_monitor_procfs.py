"""Table tests for the /proc parsers (monitor.procfs)."""

import pytest

from monitor.errors import SourceUnavailable
from monitor.procfs import (
    CpuTimes,
    MemInfo,
    is_partition,
    parse_diskstats,
    parse_meminfo,
    parse_net_dev,
    parse_proc_stat,
    physical_disks,
)

PROC_STAT = """\
cpu  100 20 30 400 50 6 7 8 9 10
cpu0 50 10 15 200 25 3 3 4 0 0
cpu1 50 10 15 200 25 3 4 4 0 0
intr 12345 0 0
ctxt 999
btime 1700000000
processes 42
"""


@pytest.mark.parametrize(
    ("text", "cpu", "ncpu"),
    [
        # busy = user+nice+system+irq+softirq; total adds idle, iowait and steal; guest is not added again
        (PROC_STAT, CpuTimes(busy=100 + 20 + 30 + 6 + 7, total=163 + 400 + 50 + 8), 2),
        # old kernels: only user nice system idle
        ("cpu 1 2 3 4\ncpu0 1 2 3 4\n", CpuTimes(busy=6, total=10), 1),
        ("cpu 0 0 0 0 0 0 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\ncpu2 0 0 0 0\ncpu3 0 0 0 0\n", CpuTimes(0, 0), 4),
    ],
)
def test_parse_proc_stat(text, cpu, ncpu):
    assert parse_proc_stat(text) == (cpu, ncpu)


@pytest.mark.parametrize(
    "text", ["", "intr 1 2\n", "cpu 1 2 x 4\ncpu0 1 2 3 4\n", "cpu 1 2\ncpu0 1 2 3 4\n", "cpu 1 2 3 4\n"]
)
def test_parse_proc_stat_rejects_malformed(text):
    with pytest.raises(SourceUnavailable) as info:
        parse_proc_stat(text)
    assert info.value.source == "proc_stat"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    600 kB\n",
         MemInfo(1000 * 1024, 600 * 1024)),
        # no MemAvailable (kernel < 3.14): free + buffers + cached
        ("MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 250 kB\n", MemInfo(1000 * 1024, 400 * 1024)),
        ("MemTotal: 10 kB\nMemAvailable: 0 kB\nHugePages_Total: 0\n", MemInfo(10 * 1024, 0)),
    ],
)
def test_parse_meminfo(text, expected):
    assert parse_meminfo(text) == expected


def test_meminfo_used_is_total_minus_available_and_never_negative():
    assert MemInfo(total=100, available=30).used == 70
    assert MemInfo(total=100, available=130).used == 0


def test_parse_meminfo_without_total_fails():
    with pytest.raises(SourceUnavailable):
        parse_meminfo("MemFree: 1 kB\n")


# A /proc/net/dev as the kernel writes it; each line split in two at the receive | transmit boundary.
NET_DEV = (
    "Inter-|   Receive                                                |"
    "  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|"
    "bytes    packets errs drop fifo colls carrier compressed\n"
    "    lo:    3193      29    0    0    0     0          0         0 "
    "    3193      29    0    0    0     0       0          0\n"
    "  eth0: 3489635339   87138    0    0    0     0          0         0 "
    " 4050608   49635    0    0    0     0       0          0\n"
    "veth1a2b:12 1 0 0 0 0 0 0 34 1 0 0 0 0 0 0\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (NET_DEV, {"lo": (3193, 3193), "eth0": (3489635339, 4050608), "veth1a2b": (12, 34)}),
        (NET_DEV.split("\n", 2)[0] + "\n", {}),  # header only
        ("", {}),
    ],
)
def test_parse_net_dev(text, expected):
    assert parse_net_dev(text) == expected


def test_parse_net_dev_rejects_short_line():
    with pytest.raises(SourceUnavailable):
        parse_net_dev("eth0: 1 2 3\n")


DISKSTATS = """\
   7       0 loop0 10 0 80 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 33057 7001 2115538 13463 13619 116297 18332720 145893 0 11412 161720 4555 58 6464712 2337 460 24
 254       1 vda1 33000 7000 2115000 13000 13600 116000 18332000 145000 0 11000 161000 4000 50 6464000 2000 400 20
 253       0 zram0 1 0 8 0 2 0 16 0 0 0 0
"""


def test_parse_diskstats_sectors_are_512_bytes():
    stats = parse_diskstats(DISKSTATS)
    assert stats["vda"] == (2115538 * 512, 18332720 * 512)
    assert stats["loop0"] == (80 * 512, 0)
    assert stats["zram0"] == (8 * 512, 16 * 512)  # old 11-column format still parses
    assert set(stats) == {"loop0", "vda", "vda1", "zram0"}


def test_parse_diskstats_rejects_garbage():
    with pytest.raises(SourceUnavailable):
        parse_diskstats("8 0 sda x y\n")


@pytest.mark.parametrize(
    ("name", "devices", "expected"),
    [
        ("sda1", ["sda", "sda1"], True),
        ("sda", ["sda", "sda1"], False),
        ("sdaa", ["sda", "sdaa"], False),  # the 27th SCSI disk, not a partition
        ("nvme0n1p1", ["nvme0n1", "nvme0n1p1"], True),
        ("nvme0n10", ["nvme0n1", "nvme0n10"], False),  # disk name ends in a digit: partitions need "p"
        ("mmcblk0p2", ["mmcblk0", "mmcblk0p2"], True),
        ("vda1", ["vda1"], False),  # parent not listed: cannot tell, count it
        ("xvdb3", ["xvda", "xvdb", "xvdb3"], True),
    ],
)
def test_is_partition(name, devices, expected):
    assert is_partition(name, devices) is expected


@pytest.mark.parametrize(
    ("devices", "expected"),
    [
        (["loop0", "loop1", "vda", "vda1", "zram0"], ["vda"]),
        (["sda", "sda1", "sda2", "sdb", "dm-0", "dm-1", "md0", "sr0", "ram0"], ["sda", "sdb"]),
        (["nvme0n1", "nvme0n1p1", "nvme1n1", "nbd0"], ["nvme0n1", "nvme1n1"]),
        ([], []),
    ],
)
def test_physical_disks(devices, expected):
    assert physical_disks(devices) == expected
