"""Reading an agent's /usage: units, sample time, missing data, garbage (table tests)."""

import copy
import json
import math

import pytest

from extender.providers.monitor_report import BadReport, parse_report


def stat(v):
    return {"current": v, "ewma": v, "mean": v, "max": v}


REPORT = {
    "node_name": "n1", "timestamp": 1.0, "age_seconds": 0.5, "interval_seconds": 1.0,
    "scheduler_units": {s: {"cpu_cores": 1.5, "mem_gib": 4.0, "net_mb_per_second": 12.0, "disk_mb_per_second": 3.0}
                        for s in ("current", "ewma", "window_mean", "window_max")},
    "pods": {
        "uid-1": {"uid": "uid-1", "cpu_cores": stat(0.5), "memory_bytes": stat(3 * 2**30),
                  "memory_working_set_bytes": stat(2**30), "net_rx_bytes_per_second": stat(1e6),
                  "net_tx_bytes_per_second": stat(2e6), "disk_read_bytes_per_second": stat(0.5e6),
                  "disk_write_bytes_per_second": stat(0.5e6)},
        "uid-2": {"uid": "uid-2", "cpu_cores": stat(0.25), "memory_bytes": stat(2**29),
                  "memory_working_set_bytes": stat(None), "net_rx_bytes_per_second": stat(None),
                  "net_tx_bytes_per_second": stat(None), "disk_read_bytes_per_second": stat(0),
                  "disk_write_bytes_per_second": stat(0), "net_unavailable_reason": "hostNetwork"},
        "uid-empty": {"uid": "uid-empty", "cpu_cores": stat(None)},
        "uid-bad": "nonsense",
    },
}


def test_node_usage_in_policy_units_and_time_from_age():
    r = parse_report(json.dumps(REPORT).encode(), node="n1", received_at=100.0)
    u = r.usage
    assert (u.cpu, u.mem, u.net, u.disk, u.timestamp) == (1.5, 4.0, 12.0, 3.0, 99.5)


@pytest.mark.parametrize(("node", "capacity"), [
    ({"capacity_cores": 0.2}, 0.2),       # an emulated node's CPU quota (node view cgroup)
    ({"capacity_cores": 8}, 8.0),         # the host's CPUs (host view)
    ({"capacity_cores": None}, None),     # not measured
    ({}, None),                           # an older agent
    (None, None),                         # no node block at all
])
def test_the_agents_measured_cpu_capacity_rides_along(node, capacity):
    r = parse_report(REPORT if node is None else mutate(["node"], node), node="n1", received_at=100.0)
    assert r.usage.cpu_capacity == capacity and r.usage.cpu == 1.5


def test_pod_readings_working_set_first_unmeasured_as_nan_and_bad_entries_skipped():
    r = parse_report(REPORT, node="n1", received_at=100.0)
    pods = {p.uid: p for p in r.pods}
    assert set(pods) == {"uid-1", "uid-2"} and r.skipped_pods == 2
    assert pods["uid-1"].usage.tolist() == pytest.approx([0.5, 1.0, 3.0, 1.0])
    u2 = pods["uid-2"].usage
    assert u2[0] == 0.25 and u2[1] == pytest.approx(0.5) and math.isnan(u2[2]) and u2[3] == 0.0
    assert all(p.timestamp == 99.5 and p.node == "n1" for p in r.pods)


def test_without_pods():
    assert parse_report(REPORT, node="n1", received_at=1.0, with_pods=False).pods == []


def test_stat_selection():
    report = copy.deepcopy(REPORT)
    report["scheduler_units"]["window_max"]["cpu_cores"] = 7.0
    assert parse_report(report, node="n1", received_at=1.0, stat="window_max").usage.cpu == 7.0


def test_null_net_and_disk_count_as_idle():
    report = copy.deepcopy(REPORT)
    report["scheduler_units"]["ewma"].update(net_mb_per_second=None, disk_mb_per_second=None)
    u = parse_report(report, node="n1", received_at=1.0).usage
    assert (u.net, u.disk) == (0.0, 0.0)


def mutate(path, value):
    report = copy.deepcopy(REPORT)
    target = report
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return report


@pytest.mark.parametrize(("body", "reason"), [
    (b"<html>502 Bad Gateway</html>", "bad_response"),
    (b"\xff\xfe", "bad_response"),
    (b"[1, 2]", "bad_response"),
    (b"null", "bad_response"),
    (mutate(["node_name"], KeyError), "bad_response"),
    (mutate(["node_name"], "n2"), "wrong_node"),
    (mutate(["age_seconds"], None), "no_data"),
    (mutate(["age_seconds"], -1), "bad_response"),
    (mutate(["age_seconds"], "0.5"), "bad_response"),
    (mutate(["scheduler_units"], KeyError), "bad_response"),
    (mutate(["scheduler_units", "ewma"], [1, 2]), "bad_response"),
    (mutate(["scheduler_units", "ewma", "cpu_cores"], None), "no_data"),
    (mutate(["scheduler_units", "ewma", "mem_gib"], None), "no_data"),
    (mutate(["scheduler_units", "ewma", "cpu_cores"], -0.1), "bad_response"),
    (mutate(["scheduler_units", "ewma", "cpu_cores"], True), "bad_response"),
    (mutate(["scheduler_units", "ewma", "net_mb_per_second"], "fast"), "bad_response"),
    (b'{"node_name": "n1", "age_seconds": NaN}', "bad_response"),
    (json.dumps(REPORT).replace("1.5", "Infinity").encode(), "bad_response"),
    (mutate(["node"], {"capacity_cores": "0.2"}), "bad_response"),
    (mutate(["node"], {"capacity_cores": 0}), "bad_response"),
    (mutate(["node"], {"capacity_cores": -1.0}), "bad_response"),
    (mutate(["node"], {"capacity_cores": True}), "bad_response"),
    (mutate(["node"], [0.2]), "bad_response"),
])
def test_garbage_is_a_typed_reason(body, reason):
    with pytest.raises(BadReport) as exc:
        parse_report(body, node="n1", received_at=1.0)
    assert exc.value.reason == reason


def test_odd_pods_field_does_not_fail_the_node():
    r = parse_report(mutate(["pods"], "oops"), node="n1", received_at=1.0)
    assert r.pods == [] and r.skipped_pods == 1 and r.usage.cpu == 1.5
