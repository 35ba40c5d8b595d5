"""The alerts checked and unit-tested by Prometheus's own ``promtool``.

``promtool check rules`` parses every expression and annotation template of the PrometheusRule's groups;
``promtool test rules`` runs ``alerts_test.yaml``: synthetic series for which each alert must fire (with
exactly the expected labels) and series for which it must not. promtool is built once from the Go module
proxy into ``~/.cache/drsched/tools`` by ``build-promtool.sh`` (pinned version, stamp, lock: the pattern of
``harness/controlplane/build.sh``), through ``harness.procs.run_to_completion`` with a status line every 30 s;
a cold build took 22 minutes on two cores busy with another Go build, 25 s with the Go build cache warm.
Without Go (and no cached binary) the tests skip, saying so.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from harness.procs import run_to_completion

from .rules import RULES, load_rules

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build-promtool.sh"
CASES = HERE / "alerts_test.yaml"
log = logging.getLogger(__name__)
BUILD_TIMEOUT_S = float(os.environ.get("DRSCHED_PROMTOOL_BUILD_TIMEOUT", "2400"))
# the first test's setup may build promtool cold: the suite's 600 s per test would cut that build short
pytestmark = [pytest.mark.slow, pytest.mark.timeout(int(BUILD_TIMEOUT_S) + 300)]


@pytest.fixture(scope="module")
def promtool() -> Path:
    binary = Path(subprocess.run(["bash", str(BUILD), "--path"], capture_output=True, text=True, check=True)
                  .stdout.strip())
    if not binary.is_file() and shutil.which("go") is None and not Path("/usr/local/go/bin/go").is_file():
        pytest.skip(f"no Go toolchain to build promtool ({BUILD}) and no cached {binary}")
    log_path = binary.parent / "build.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    run_to_completion(name="build-promtool.sh", argv=["bash", str(BUILD)], log_path=log_path,
                      timeout=BUILD_TIMEOUT_S, progress=log.warning)
    assert binary.is_file(), f"build-promtool.sh finished without {binary}"
    return binary


def plain_rule_file(dest: Path, *, annotations: bool) -> Path:
    """The PrometheusRule's ``spec`` is a Prometheus rule file (``groups:``); promtool reads that."""
    spec = yaml.safe_load(RULES.read_text())["spec"]
    if not annotations:  # test rules compares annotations too; their text is checked by check rules
        for group in spec["groups"]:
            for rule in group["rules"]:
                rule.pop("annotations", None)
    dest.write_text(yaml.safe_dump(spec, sort_keys=False))
    return dest


def run(promtool: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(promtool), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def test_promtool_checks_every_rule_and_template(promtool, tmp_path):
    rules = plain_rule_file(tmp_path / "drsched-rules.yaml", annotations=True)
    done = run(promtool, "check", "rules", str(rules), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(load_rules())} rules found" in done.stdout + done.stderr


def test_promtool_unit_tests_fire_and_spare_each_alert(promtool, tmp_path):
    plain_rule_file(tmp_path / "drsched-rules.yaml", annotations=False)
    shutil.copy(CASES, tmp_path / CASES.name)
    done = run(promtool, "test", "rules", CASES.name, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout + done.stderr


def test_promtool_fails_a_case_the_rules_do_not_meet(promtool, tmp_path):
    """The harness can fail: a threshold moved past the synthetic series makes promtool report the case."""
    plain_rule_file(tmp_path / "drsched-rules.yaml", annotations=False)
    rules = yaml.safe_load((tmp_path / "drsched-rules.yaml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            if rule["alert"] == "DrschedUsageStaleMostNodes":
                rule["expr"] = rule["expr"].replace("> 0.5", "> 0.8")
    (tmp_path / "drsched-rules.yaml").write_text(yaml.safe_dump(rules, sort_keys=False))
    shutil.copy(CASES, tmp_path / CASES.name)
    done = run(promtool, "test", "rules", CASES.name, cwd=tmp_path)
    assert done.returncode != 0 and "DrschedUsageStaleMostNodes" in done.stdout + done.stderr


def test_every_alert_has_a_firing_and_a_quiet_case():
    cases = yaml.safe_load(CASES.read_text())
    fired, quiet = set(), set()
    for test in cases["tests"]:
        for check in test.get("alert_rule_test", []):
            (fired if check.get("exp_alerts") else quiet).add(check["alertname"])
    names = {r["alert"] for r in load_rules()}
    assert fired == names, f"no firing case for {sorted(names - fired)}"
    assert quiet == names, f"no quiet case for {sorted(names - quiet)}"
