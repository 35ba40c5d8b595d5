"""The calibrated-world report matches the committed results, and its rule sees a DQN that got worse.

``scripts/calibrated_world.py`` is run as the command it is (a subprocess, this checkout on its import path);
its ratios are ``policy.comparison``'s (``tests/unit/policy/test_comparison.py``).
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

from policy.comparison import DQN, excess_by_case, geo_means, read_summary

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "calibrated_world.py"
RESULTS = Path("results/policy")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=False)


def test_committed_report_is_up_to_date():
    done = _run("--check")
    assert done.returncode == 0, done.stderr


def _copy_results(tmp_path: Path) -> Path:
    """Each calibrated folder with its original-world twin: the inputs the script compares (not the model's)."""
    names = [p.name.removeprefix("calibrated-") for p in (ROOT / RESULTS).glob("calibrated-*")
             if (ROOT / RESULTS / "original-world" / p.name.removeprefix("calibrated-")).is_dir()]
    assert "test" in names, names
    for name in names:
        for folder in (f"original-world/{name}", f"calibrated-{name}"):
            src = ROOT / RESULTS / folder
            dst = tmp_path / RESULTS / folder
            dst.mkdir(parents=True)
            for f in ("summary.csv", "contention.json"):
                if (src / f).exists():
                    shutil.copy(src / f, dst / f)
    return tmp_path


def test_a_dqn_that_loses_in_the_fitted_world_is_a_material_change(tmp_path):
    root = _copy_results(tmp_path)
    path = root / RESULTS / "calibrated-test" / "summary.csv"
    rows = read_summary(path)
    base = geo_means(excess_by_case(rows))
    for r in rows:
        if r["policy"] == DQN:
            r["excess_slowdown"] = str(1.5 * float(r["excess_slowdown"]))
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert geo_means(excess_by_case(rows))[1] > 1.4 * base[1]
    assert _run("--check", "--root", str(root)).returncode == 1  # nothing committed there: everything is stale
    done = _run("--root", str(root))
    assert done.returncode == 0, done.stderr
    text = (root / RESULTS / "calibrated-world.md").read_text()
    assert "test, argmax: dqn / best model-based +" in text and "changed materially" in text
