"""``python -m migration``: --help, and bad options refused with exit 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kube.errors import ConfigError
from migration.__main__ import main
from migration.settings import build_settings


def test_help_lists_the_options():
    out = subprocess.run([sys.executable, "-m", "migration", "--help"], capture_output=True, text=True, check=True)
    for flag in ("--dry-run", "--kubeconfig", "--progress-source", "--max-per-job", "--lease-namespace", "--mode",
                 "--resume"):
        assert flag in out.stdout


@pytest.mark.parametrize("argv", [["--policy", "nope"], ["--lease-s", "3", "--renew-s", "3"],
                                  ["--node-selector", "novalue"], ["--interval-s", "0"],
                                  ["--mode", "taint", "--resume", "scratch"]])
def test_bad_options_exit_2(argv, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("migration: ")


def test_settings_defaults_and_selector():
    s = build_settings(node_selector="pool=batch, zone=a", dry_run=True)
    assert s.selector == {"pool": "batch", "zone": "a"} and s.dry_run
    with pytest.raises(ConfigError):
        build_settings(slow_ratio=2)
    with pytest.raises(ConfigError, match="node_selector: selector term 'zone!=a' is not key=value"):
        build_settings(node_selector="pool=batch,zone!=a")  # the extender's monitor_selector reads the same


def test_baseline_settings():
    assert (build_settings().mode, build_settings().resume) == ("migrate", "checkpoint")
    assert build_settings(mode="taint").mode == "taint" and build_settings(resume="scratch").resume == "scratch"
    with pytest.raises(ConfigError, match="resume 'scratch' needs mode 'migrate'"):
        build_settings(mode="taint", resume="scratch")
