"""The agent as a real process against this machine's real /proc: CPU, disk, network, missing sources.

Robust on a shared, noisy 2-core box: rises are asserted relative to a baseline measured
in the same test with generous margins, and byte counts are checked as totals over the
window (other processes can only add bytes, never remove ours).
"""

from __future__ import annotations

import os
import socket
import statistics
import threading
import time
from pathlib import Path

import pytest

from tests.helpers import wait_for

from .reports import INTERVAL, window_sum

MiB = 1 << 20


def current(agent, series: str) -> float | None:
    return agent.usage()["node"][series]["current"]


def median_current(agent, series: str, seconds: float = 1.2) -> float:
    values = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = current(agent, series)
        if value is not None:
            values.append(value)
        time.sleep(INTERVAL)
    return statistics.median(values)


def test_cpu_rises_under_load_and_falls_after(start_agent, busy):
    agent = start_agent()
    ncpu = agent.usage()["node"]["capacity_cores"]
    wait_for(lambda: current(agent, "cpu_cores") is not None, timeout=5, what="a first CPU rate")
    baseline = median_current(agent, "cpu_cores")
    headroom = ncpu - baseline
    if headroom < 0.5:
        pytest.skip(f"node CPU already near saturation by other work ({baseline:.2f} of {ncpu} cores busy); "
                    "a rise cannot show. Per-pod attribution is covered by the cgroup tests.")
    rise = 0.5 * min(headroom, 1.0)  # one busy process gets at most the idle headroom, shared with others
    load = busy(seconds=15)
    peak = wait_for(lambda: (v := current(agent, "cpu_cores")) is not None and v >= baseline + rise and v,
                    timeout=8, what=f"cpu_cores >= baseline {baseline:.2f} + {rise:.2f}")
    load.kill()
    load.wait()
    wait_for(lambda: (v := current(agent, "cpu_cores")) is not None and v <= peak - 0.6 * rise,
             timeout=8, what=f"cpu_cores to fall below peak {peak:.2f} - {0.6 * rise:.2f}")
    assert agent.usage()["node"]["cpu_fraction"]["max"] <= 1.0


def backing_disk(path: Path) -> str | None:
    """The /proc/diskstats device holding ``path`` (its whole disk when it is a partition)."""
    dev = os.stat(path).st_dev
    major, minor = os.major(dev), os.minor(dev)
    for line in Path("/proc/diskstats").read_text().splitlines():
        fields = line.split()
        if int(fields[0]) == major and int(fields[1]) == minor:
            name = fields[2]
            parent = Path(f"/sys/class/block/{name}/..").resolve().name
            return parent if Path(f"/sys/class/block/{name}/partition").exists() else name
    return None


def test_fsynced_writes_show_as_disk_write_rate(start_agent, tmp_path):
    disk = backing_disk(tmp_path)
    if disk is None:
        pytest.skip(f"the filesystem under {tmp_path} has no /proc/diskstats entry "
                    "(overlay/tmpfs without a block device)")
    agent = start_agent("--window", "300")
    report = agent.usage()
    if disk not in report["node"]["disks"]:
        pytest.skip(f"{disk} backs {tmp_path} but is not a counted physical disk: {report['node']['disks']}")
    time.sleep(3 * INTERVAL)
    before = window_sum(agent.usage(), "disk_write_bytes_per_second")
    written = 0
    chunk = os.urandom(4 * MiB)
    for i in range(8):
        with open(tmp_path / f"blob{i}", "wb") as f:
            f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        written += len(chunk)
    time.sleep(3 * INTERVAL)
    report = agent.usage()
    assert report["window"]["filled"] < report["window"]["samples"], "window slid; totals would be wrong"
    delta = window_sum(report, "disk_write_bytes_per_second") - before
    assert delta >= 0.7 * written, (f"agent saw {delta / MiB:.1f} MiB written to {disk}, "
                                    f"test wrote {written / MiB:.0f} MiB")
    assert report["node"]["disk_write_bytes_per_second"]["max"] >= 4 * MiB  # >= one chunk per second at the peak


def loopback_traffic(total: int) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        received = 0

        def receive():
            nonlocal received
            conn, _ = server.accept()
            with conn:
                while data := conn.recv(1 << 16):
                    received += len(data)

        thread = threading.Thread(target=receive)
        thread.start()
        payload = b"\0" * (1 << 16)
        with socket.create_connection(("127.0.0.1", port)) as client:
            sent = 0
            while sent < total:  # paced over ~1 s so several samples see it
                client.sendall(payload)
                sent += len(payload)
                if sent % (8 * MiB) == 0:
                    time.sleep(0.1)
        thread.join(timeout=10)
    assert received == total


def test_loopback_traffic_with_interfaces_lo(start_agent):
    default_agent = start_agent()
    assert "lo" not in default_agent.usage()["node"]["interfaces"]  # loopback is left out by default

    agent = start_agent("--interfaces", "lo", "--window", "300")
    assert agent.usage()["node"]["interfaces"] == ["lo"]
    time.sleep(3 * INTERVAL)
    report = agent.usage()
    rx0, tx0 = window_sum(report, "net_rx_bytes_per_second"), window_sum(report, "net_tx_bytes_per_second")
    total = 64 * MiB
    loopback_traffic(total)
    time.sleep(3 * INTERVAL)
    report = agent.usage()
    assert report["window"]["filled"] < report["window"]["samples"]
    rx = window_sum(report, "net_rx_bytes_per_second") - rx0
    tx = window_sum(report, "net_tx_bytes_per_second") - tx0
    assert rx >= 0.8 * total, f"rx {rx / MiB:.1f} MiB for {total / MiB:.0f} MiB sent"
    assert tx >= 0.8 * total, f"tx {tx / MiB:.1f} MiB for {total / MiB:.0f} MiB sent"
    assert report["scheduler_units"]["window_max"]["net_mb_per_second"] > 1.0


def test_missing_interface_disk_cgroup_and_proc_file_are_logged_not_fatal(start_agent, tmp_path):
    proc = tmp_path / "proc"
    proc.mkdir()
    for name in ("stat", "meminfo", "diskstats"):  # no net/dev: that source fails every sample
        (proc / name).write_text(Path("/proc", name).read_text())
    agent = start_agent("--interfaces", "nope0", "--disks", "nosuchdisk", "--cgroup-root", str(tmp_path / "no-cgroup"),
                        "--proc-root", str(proc))
    time.sleep(5 * INTERVAL)
    assert agent.alive()
    report = agent.usage()
    assert report["node"]["disks"] == [] and report["node"]["interfaces"] == []
    assert report["node"]["disk_write_bytes_per_second"]["current"] is None
    assert report["node"]["net_rx_bytes_per_second"]["current"] is None
    assert report["pods"] == {} and report["cgroup_version"] is None
    assert report["node"]["memory_bytes"]["current"] > 0  # the sources that exist still work
    metrics = agent.get("/metrics").text
    assert 'drsched_monitor_source_errors_total{source="net_dev"}' in metrics
    assert agent.get("/healthz").status_code == 200
    log = agent.log()
    assert "key=disk:nosuchdisk" in log
    assert "no cgroup hierarchy found" in log
    assert "key=source:net_dev" in log
    assert log.count("key=source:net_dev") == 1  # warned once, not every sample
