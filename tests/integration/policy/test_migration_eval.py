"""``python -m policy.evaluate --migration --quick`` end to end, as a user runs it."""

import csv
import subprocess
import sys


def _run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "policy.evaluate", "--migration", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_migration_quick_end_to_end(tmp_path):
    proc = _run("--quick", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "migration scenario=stragglers" in proc.stdout and "migration scenario=calm" in proc.stdout
    for name in ("migration_runs.csv", "migration_summary.csv", "migration_table.txt", "migration_jct_cdf.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    rows = list(csv.DictReader((tmp_path / "migration_summary.csv").open()))
    assert {(r["scenario"], r["arm"]) for r in rows} == {(s, a) for s in ("stragglers", "calm")
                                                         for a in ("none", "migration")}
    none = [r for r in rows if r["arm"] == "none"]
    assert all(float(r["mean_jct_ratio"]) == 1.0 and float(r["migrations"]) == 0 for r in none)
    runs = list(csv.DictReader((tmp_path / "migration_runs.csv").open()))
    assert all(int(r["finished"]) == 40 for r in runs)


def test_migration_rejects_unknown_scenario(tmp_path):
    proc = _run("--quick", "--scenarios", "moon", "--out", str(tmp_path))
    assert proc.returncode == 2 and "unknown migration scenario" in proc.stderr
