"""harness.placement: reading /proc/<pid>/cgroup and status, the report, and what counts as misplaced."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness import placement
from harness.isolation import Isolation

CGROUP = """12:name=systemd:/
11:cpu,cpuacct:/drsched-system
4:memory:/process_api/abc
3:cpuset:/drsched-system
0::/
"""
STATUS = "Name:\tetcd\nState:\tS (sleeping)\nCpus_allowed:\t1\nCpus_allowed_list:\t0\nMems_allowed_list:\t0\n"
ISO = Isolation(system_cpus="0", node_cpus="1")


def test_proc_cgroup_gives_each_controller_its_path() -> None:
    groups = placement.parse_proc_cgroup(CGROUP)
    assert groups == {"systemd": "/", "cpu": "/drsched-system", "cpuacct": "/drsched-system",
                      "memory": "/process_api/abc", "cpuset": "/drsched-system", "unified": "/"}  # fmt: skip


def test_status_fields() -> None:
    assert placement.parse_status_field(STATUS, "Cpus_allowed_list") == "0"
    assert placement.parse_status_field(STATUS, "Name") == "etcd"
    assert placement.parse_status_field(STATUS, "Missing") == ""


def _row(role: str, cpus: str, component: str = "x") -> placement.Row:
    return placement.make_row(component=component, role=role, pid=7, node="", cgroup=CGROUP,
                              status=STATUS.replace("Cpus_allowed_list:\t0", f"Cpus_allowed_list:\t{cpus}"))


def test_a_row_says_where_the_process_runs() -> None:
    row = _row(placement.SYSTEM, "0", component="etcd")
    assert (row.comm, row.cpu_cgroup, row.cpuset_cgroup, row.cpus_allowed) == ("etcd", "/drsched-system",
                                                                               "/drsched-system", "0")


def test_misplaced_rows_are_those_off_their_roles_cpus() -> None:
    rows = [_row(placement.SYSTEM, "0", "etcd"), _row(placement.NODE, "1", "pod a/b"),
            _row(placement.SYSTEM, "0-1", "kubelet-rn-small"), _row(placement.NODE, "0", "pod a/c")]  # fmt: skip
    found = placement.misplaced(rows, ISO)
    assert len(found) == 2
    assert found[0].startswith("kubelet-rn-small pid 7 (etcd) may run on CPUs 0-1, not only on the system CPUs 0")
    assert found[1].startswith("pod a/c") and found[1].endswith("node CPUs 1")


def test_the_report_carries_the_isolation_and_every_row() -> None:
    report = json.loads(placement.to_json([_row(placement.NODE, "1", "pod a/b")], isolation=ISO))
    assert report["isolation"]["system_cpus"] == "0" and report["isolation"]["node_budget_millis"] == 900
    assert report["processes"][0]["component"] == "pod a/b"
    assert json.loads(placement.to_json([], isolation=None)) == {"isolation": None, "processes": []}


def test_this_process_reads_back(tmp_path: Path) -> None:
    row = placement.read_row(os.getpid(), component="me", role=placement.SYSTEM)
    assert row is not None and row.pid == os.getpid() and row.cpus_allowed
    assert placement.read_row(2**31 - 1, component="gone", role=placement.SYSTEM) is None


def test_pod_cgroups_are_found_by_uid_at_any_qos_depth(tmp_path: Path) -> None:
    for sub in ("kubepods/burstable/poda/c1", "kubepods/besteffort/podb/c2", "kubepods/podc", "kubepods/podz"):
        (tmp_path / sub).mkdir(parents=True)
    (tmp_path / "kubepods/burstable/poda/cgroup.procs").write_text("5\n")
    (tmp_path / "kubepods/burstable/poda/c1/cgroup.procs").write_text("6\n7\n")
    found = dict(placement.pod_cgroups(tmp_path, {"a": 1, "b": 1, "c": 1}))
    assert sorted(found) == ["a", "b", "c"]
    assert placement.subtree_pids(found["a"]) == [5, 6, 7]
    assert placement.subtree_pids(found["b"]) == []
