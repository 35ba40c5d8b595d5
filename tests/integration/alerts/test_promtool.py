"""The alerts checked and unit-tested by Prometheus's own ``promtool``.

``promtool check rules`` parses every expression and annotation template of the PrometheusRule's groups;
``promtool test rules`` runs ``alerts_test.yaml``: synthetic series for which each alert must fire (with
exactly the expected labels) and series for which it must not. promtool is Debian's (package
``prometheus``, which ``scripts/install-deps.sh`` installs with the real Prometheus the usage-provider tests
run): building it from the Go module proxy took 22 minutes cold on two busy cores, too much for a fresh CI.
Without it the tests skip, saying so.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from .rules import RULES, load_rules

HERE = Path(__file__).resolve().parent
CASES = HERE / "alerts_test.yaml"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def promtool() -> Path:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip("no promtool on PATH: it comes with Debian's prometheus package (make deps installs it)")
    return Path(found)


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
