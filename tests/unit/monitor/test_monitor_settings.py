"""Settings: defaults, environment, flags over environment, and refusal of bad values."""

import logging
import socket
from pathlib import Path

import pytest

from monitor.__main__ import main, parse_args
from monitor.errors import ConfigError
from monitor.settings import build_settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ("NODE_NAME", "DRSCHED_MONITOR_INTERVAL", "DRSCHED_MONITOR_INTERFACES", "DRSCHED_MONITOR_PORT"):
        monkeypatch.delenv(var, raising=False)


def test_defaults():
    s = build_settings()
    assert s.interval == 1.0
    assert s.port == 9847
    assert s.proc_root == Path("/proc")
    assert s.cgroup_root == Path("/sys/fs/cgroup")
    assert s.interfaces == [] and s.disks == []
    assert s.node_name == socket.gethostname()
    assert s.window_seconds() == 60.0


def test_environment(monkeypatch):
    monkeypatch.setenv("NODE_NAME", "worker-7")
    monkeypatch.setenv("DRSCHED_MONITOR_INTERVAL", "0.5")
    monkeypatch.setenv("DRSCHED_MONITOR_INTERFACES", "eth0, eth1")
    s = build_settings()
    assert (s.node_name, s.interval, s.interfaces) == ("worker-7", 0.5, ["eth0", "eth1"])


def test_flags_win_over_environment(monkeypatch):
    monkeypatch.setenv("DRSCHED_MONITOR_PORT", "1234")
    monkeypatch.setenv("NODE_NAME", "from-env")
    overrides = parse_args(["--port", "4321", "--node-name", "from-flag", "--disks", "sda,nvme0n1",
                            "--pod-network", "false"])
    s = build_settings(**overrides)
    assert (s.port, s.node_name, s.disks, s.pod_network) == (4321, "from-flag", ["sda", "nvme0n1"], False)


def test_absent_flags_are_not_overrides():
    assert parse_args([]) == {}


@pytest.mark.parametrize(
    "overrides",
    [
        {"interval": 0},
        {"interval": -1},
        {"window": 0},
        {"ewma_alpha": 0},
        {"ewma_alpha": 1.5},
        {"port": 70000},
        {"cgroup_version": "3"},
        {"node_name": "  "},
        {"no_such_option": 1},
    ],
)
def test_bad_values_are_refused(overrides):
    with pytest.raises(ConfigError):
        build_settings(**overrides)


def test_main_exits_2_on_bad_config(monkeypatch):
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", list(root.handlers))  # main() configures the process's logging
    monkeypatch.setattr(root, "level", root.level)
    assert main(["--interval", "0"]) == 2
