"""A lab protocol's registered prediction is what its ``predicted.by`` command computes, run as written
(with the model the prediction was made with: ``PREVIOUS_MODEL``)."""

import csv
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = "dqn:policy/models/default.npz"
PREVIOUS_MODEL = "dqn:policy/models/archive/default-ebc0f11-s100000.npz"
REGISTERED_WITH_PREVIOUS_MODEL = {"multi-resource.yaml", "misleading-pilot.yaml", "tenants-pilot.yaml",
                                  "straggler.yaml", "straggler-under-pilot.yaml"}
"""Protocols registered while ``policy/models/default.npz`` was the DQN the distilled student replaced
(``results/policy/ship-student/``): their ratios are that model's, now in the archive, so the command runs with it
(a ``by`` that names the shipped path gets the archive's instead; a straggler ``by``, which placed with the shipped
model without naming it, gets ``--lab-placement``). Their predictions are not edited: ``multi-resource`` is under
way and keeps a byte copy of itself (``lab.experiment``), and a registered prediction is not recomputed for another
model. The ones that had not run are superseded by successors (``*-2.yaml``) registered with the student."""
ARM_OF = {"dqn:default": "model", "dqn:default-ebc0f11-s100000": "model", "demand-aware": "demand-aware",
          "worst-fit@off": "worst-fit@off"}
"""Simulator policy labels -> the protocol's arm names (``policy.evaluate``; the migration evaluation's arms are
the protocol's own)."""


def _by(protocol: str, doc: dict) -> list[str]:
    by = doc["predicted"]["by"]
    if protocol in REGISTERED_WITH_PREVIOUS_MODEL:
        if SHIPPED in by:
            by = by.replace(SHIPPED, PREVIOUS_MODEL)
        else:
            assert " migration " in by and "--lab-placement" not in by
            by = f"{by} --lab-placement {PREVIOUS_MODEL}"
    elif " migration " in by:
        assert "--lab-placement" in by  # names the model it placed with, so shipping another cannot move it
    argv = shlex.split(by)
    assert argv[:3] == ["python", "-m", "policy.evaluate"]
    return argv


@pytest.mark.parametrize("protocol", [
    "multi-resource.yaml", "mr-pilot.yaml", "misleading-pilot.yaml", "tenants-pilot.yaml",
    "misleading-pilot-2.yaml", "tenants-pilot-2.yaml"])
def test_the_registered_ratios_are_what_the_by_command_computes(protocol, tmp_path):
    # the yaml directly: only the prediction is under test here, not the protocol's other fields
    doc = yaml.safe_load((ROOT / "lab" / "protocols" / protocol).read_text())
    argv = _by(protocol, doc)
    proc = subprocess.run([sys.executable, *argv[1:], "--no-plots", "-q", "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    got = {ARM_OF[r["policy"]]: round(float(r["jct_ratio"]), 2)
           for r in csv.DictReader((tmp_path / "jct_ratios.csv").open())}
    assert got == doc["predicted"]["ratios"]


@pytest.mark.parametrize("protocol", [
    "straggler.yaml", "straggler-under-pilot.yaml", "straggler-2.yaml", "straggler-under-pilot-2.yaml"])
def test_the_registered_straggler_ratios_are_what_the_by_command_computes(protocol, tmp_path):
    doc = yaml.safe_load((ROOT / "lab" / "protocols" / protocol).read_text())
    argv = _by(protocol, doc)
    assert argv[3] == "migration"
    proc = subprocess.run([sys.executable, *argv[1:], "--no-plots", "-q", "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    # the registered ratio is the paired per-seed log ratio's exp(mean), as the lab's endpoint
    got = {r["arm"]: round(float(r["mean_jct_geo"]), 2)
           for r in csv.DictReader((tmp_path / "migration_summary.csv").open()) if r["arm"] != "none"}
    assert got == doc["predicted"]["ratios"]
