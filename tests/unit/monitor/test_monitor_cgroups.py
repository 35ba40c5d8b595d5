"""Table tests for the pod cgroup parsers (monitor.cgroups)."""

import pytest

from monitor import cgroups
from monitor.errors import SourceUnavailable

UID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
UID_ = UID.replace("-", "_")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (f"kubepods-burstable-pod{UID_}.slice", (UID, "burstable")),
        (f"kubepods-besteffort-pod{UID_}.slice", (UID, "besteffort")),
        (f"kubepods-pod{UID_}.slice", (UID, "guaranteed")),  # Guaranteed pods sit directly under kubepods
        (f"pod{UID}", (UID, None)),  # cgroupfs: QoS comes from the parent directory
        (f"pod{UID.upper()}", (UID, None)),
        ("kubepods-burstable.slice", None),
        ("burstable", None),
        (f"cri-containerd-{'a' * 64}.scope", None),
        (f"kubepods-burstable-pod{UID_}.slice.bak", None),
        ("podman", None),
    ],
)
def test_pod_from_dirname(name, expected):
    assert cgroups.pod_from_dirname(name) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("kubepods-besteffort.slice", "besteffort"),
        ("kubepods-burstable.slice", "burstable"),
        ("besteffort", "besteffort"),
        ("burstable", "burstable"),
        ("guaranteed", None),
        (f"pod{UID}", None),
    ],
)
def test_qos_from_dirname(name, expected):
    assert cgroups.qos_from_dirname(name) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [("kubepods", True), ("kubepods.slice", True), ("custom-kubepods.slice", True), ("system.slice", False),
     ("kubepods-burstable.slice", False)],
)
def test_is_kubepods_dir(name, expected):
    assert cgroups.is_kubepods_dir(name) is expected


CPU_STAT = """usage_usec 1234567
user_usec 1000000
system_usec 234567
nr_periods 0
nr_throttled 0
throttled_usec 0
"""


@pytest.mark.parametrize(("text", "expected"), [(CPU_STAT, 1234567), ("usage_usec 0\n", 0)])
def test_parse_cpu_stat_usec(text, expected):
    assert cgroups.parse_cpu_stat_usec(text) == expected


@pytest.mark.parametrize("text", ["user_usec 5\n", "", "usage_usec lots\n"])
def test_parse_cpu_stat_usec_rejects(text):
    with pytest.raises(SourceUnavailable):
        cgroups.parse_cpu_stat_usec(text)


@pytest.mark.parametrize(("text", "expected"), [("1500000\n", 1500), ("999\n", 0), ("0", 0)])
def test_parse_cpuacct_usage_usec(text, expected):
    assert cgroups.parse_cpuacct_usage_usec(text) == expected


def test_parse_single_int():
    assert cgroups.parse_single_int("4096\n", "memory.current") == 4096
    with pytest.raises(SourceUnavailable):
        cgroups.parse_single_int("max\n", "memory.max")


MEMORY_STAT_V2 = "anon 1000\nfile 5000\nactive_file 3000\ninactive_file 2000\nsock 0\n"
MEMORY_STAT_V1 = ("cache 5000\nrss 1000\ninactive_file 0\ntotal_cache 5000\ntotal_inactive_file 2500\n"
                  "hierarchical_memory_limit 9223372036854771712\n")


@pytest.mark.parametrize(
    ("usage", "stat_text", "expected"),
    [
        (6000, MEMORY_STAT_V2, 4000),
        (6000, "", 6000),
        (1000, MEMORY_STAT_V2, 0),  # floored at 0
    ],
)
def test_working_set(usage, stat_text, expected):
    assert cgroups.working_set(usage, cgroups.parse_flat_keyed(stat_text)) == expected


def test_working_set_v1_uses_inactive_file_key_first():
    # v1 memory.stat has both a local inactive_file and total_inactive_file; the local key wins when present
    assert cgroups.working_set(6000, cgroups.parse_flat_keyed(MEMORY_STAT_V1)) == 6000
    assert cgroups.working_set(6000, {"total_inactive_file": 2500}) == 3500


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8:0 rbytes=1000 wbytes=2000 rios=1 wios=2 dbytes=0 dios=0\n"
         "254:0 rbytes=5 wbytes=7 rios=1 wios=1 dbytes=0 dios=0\n", (1005, 2007)),
        ("", (0, 0)),
        ("8:0 rbytes=1 wbytes=2 rios=1 wios=2 cost.usage=5\n", (1, 2)),
    ],
)
def test_parse_io_stat(text, expected):
    assert cgroups.parse_io_stat(text) == expected


BLKIO = """254:0 Read 4096
254:0 Write 8192
254:0 Sync 8192
254:0 Async 4096
254:0 Discard 0
254:0 Total 12288
8:0 Read 1
8:0 Write 2
8:0 Total 3
Total 12291
"""


@pytest.mark.parametrize(("text", "expected"), [(BLKIO, (4097, 8194)), ("Total 0\n", (0, 0)), ("", (0, 0))])
def test_parse_blkio_service_bytes(text, expected):
    assert cgroups.parse_blkio_service_bytes(text) == expected


@pytest.mark.parametrize(("text", "expected"), [("12\n345\n", [12, 345]), ("", [])])
def test_parse_cgroup_procs(text, expected):
    assert cgroups.parse_cgroup_procs(text) == expected
