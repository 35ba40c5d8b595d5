"""The calibrated-world report matches the committed results, and its rule sees a DQN that got worse."""

from __future__ import annotations

import csv
import importlib.util
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script(name: str):
    """A script of scripts/ as a module, registered under its name: calibrated_world imports its sibling
    readme_tables by that name, as it does when run from scripts/ (no sys.path edit)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


_script("readme_tables")
calibrated_world = _script("calibrated_world")


def test_committed_report_is_up_to_date():
    assert calibrated_world.main(["--check"]) == 0


def _copy_results(tmp_path: Path) -> Path:
    for name, _ in calibrated_world.RUNS:
        for folder in (calibrated_world.ORIGINAL + name, calibrated_world.PREFIX + name):
            dst = tmp_path / calibrated_world.RESULTS / folder
            dst.mkdir(parents=True)
            for f in ("summary.csv", "contention.json"):
                if (ROOT / calibrated_world.RESULTS / folder / f).exists():
                    shutil.copy(ROOT / calibrated_world.RESULTS / folder / f, dst / f)
    return tmp_path


def test_a_dqn_that_loses_in_the_fitted_world_is_a_material_change(tmp_path):
    root = _copy_results(tmp_path)
    path = root / calibrated_world.RESULTS / "calibrated-test" / "summary.csv"
    rows = list(csv.DictReader(path.open()))
    base = calibrated_world.geo_means(rows)
    for r in rows:
        if r["policy"] == calibrated_world.DQN:
            r["excess_slowdown"] = str(1.5 * float(r["excess_slowdown"]))
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert calibrated_world.geo_means(rows)[1] > 1.4 * base[1]
    text, _ = calibrated_world.report(root)
    assert "test, argmax: dqn / best model-based +" in text and "changed materially" in text
