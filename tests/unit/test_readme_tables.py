"""The README's generated tables match the committed results they name, and the generator catches drift.

``scripts/readme_tables.py`` is run as the command it is (a subprocess, this checkout on its import path); the
comparison it derives is ``policy.comparison``'s, tested in ``tests/unit/policy/test_comparison.py``.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "readme_tables.py"
BEGIN = re.compile(r"<!-- BEGIN generated: (\S+) -->")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=False)


def _docs(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def test_committed_docs_and_derived_files_are_up_to_date():
    done = _run("--check")
    assert done.returncode == 0, done.stderr


def test_readme_blocks_name_the_headline_and_the_result_files():
    named = {doc.name: BEGIN.findall(doc.read_text()) for doc in _docs(ROOT)}
    everywhere = [path for paths in named.values() for path in paths]
    assert "results/policy/test/summary.md" in everywhere and "results/policy/migration/migration.md" in everywhere
    assert "results/bench/benchmarks.md" in everywhere
    # the README's headline is the test split scored as served; the argmax tables live in the docs
    assert named["README.md"][0] == "results/policy/test-served/comparison.md"
    assert named["evaluation.md"].index("results/policy/test-served/comparison.md") < named["evaluation.md"].index(
        "results/policy/test/summary.md")


def test_docs_links_resolve():
    """Every relative link in the README and docs/ names a file or folder of the checkout (moved text keeps working)."""
    for doc in _docs(ROOT):
        for target in re.findall(r"\]\((?!https?:|#)([^)#]+)(?:#[^)]*)?\)", doc.read_text()):
            assert (doc.parent / target).exists(), f"{doc.relative_to(ROOT)} links to {target}, which does not exist"


def _copy_results(dest: Path) -> None:
    """Every committed result tree a README block reads (the simulator's, the benchmarks' and the real-node lab's)."""
    for tree in ("results/policy", "results/bench", "results/lab", "docs"):
        shutil.copytree(ROOT / tree, dest / tree)
    shutil.copy(ROOT / "README.md", dest / "README.md")


DERIVED = ("results/policy/test-served/comparison.md", "results/policy/test/comparison.md",
           "results/policy/validation/comparison.md", "results/policy/served.md", "results/policy/served-test.md",
           "results/policy/migration/migration.md", "results/bench/benchmarks.md")


def test_every_derived_file_is_rederived_from_its_inputs(tmp_path):
    _copy_results(tmp_path)
    for rel in DERIVED:
        (tmp_path / rel).unlink()
    done = _run("--root", str(tmp_path))
    assert done.returncode == 0, done.stderr
    for rel in DERIVED:  # written back from the CSVs and JSON files alone, as committed
        assert (tmp_path / rel).read_text() == (ROOT / rel).read_text(), rel


def test_check_fails_on_a_hand_edited_block(tmp_path):
    _copy_results(tmp_path)
    readme = tmp_path / "docs" / "evaluation.md"
    text = readme.read_text()
    start = text.index("<!-- BEGIN generated: results/policy/test/summary.md -->")
    end = text.index("<!-- END generated -->", start)
    readme.write_text(text[:end] + "| typed | by | hand |\n" + text[end:])
    done = _run("--check", "--root", str(tmp_path))
    assert done.returncode == 1 and "evaluation.md" in done.stderr
    assert _run("--root", str(tmp_path)).returncode == 0  # regenerating restores the committed table
    assert readme.read_text() == text


def test_check_fails_on_a_stale_derived_file(tmp_path):
    _copy_results(tmp_path)
    summary = tmp_path / "results" / "policy" / "test" / "summary.csv"
    with summary.open(newline="") as f:
        rows = list(csv.DictReader(f))
    rows[0]["excess_slowdown"] = str(float(rows[0]["excess_slowdown"]) + 1)  # a rerun with other numbers
    with summary.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    done = _run("--check", "--root", str(tmp_path))
    assert done.returncode == 1 and "results/policy/test/comparison.md" in done.stderr


def test_a_bad_summary_is_one_line_naming_file_line_and_field(tmp_path):
    _copy_results(tmp_path)
    summary = tmp_path / "results" / "policy" / "test" / "summary.csv"
    lines = summary.read_text().splitlines()
    head = lines[0].split(",")
    cells = lines[3].split(",")
    cells[head.index("load")] = "high"
    summary.write_text("\n".join([*lines[:3], ",".join(cells), *lines[4:]]) + "\n")
    done = _run("--check", "--root", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().endswith("results/policy/test/summary.csv:4: load: not a number: 'high'")
    assert "Traceback" not in done.stderr


def test_missing_result_file_is_named(tmp_path):
    _copy_results(tmp_path)
    (tmp_path / "results" / "policy" / "test" / "summary.md").unlink()
    done = _run("--check", "--root", str(tmp_path))
    assert done.returncode == 2 and "results/policy/test/summary.md, which does not exist" in done.stderr


def test_each_comparison_says_how_the_policies_were_scored():
    # the committed files are what the generator writes (test_committed_docs_and_derived_files_are_up_to_date)
    assert "scored as served" in (ROOT / "results/policy/test-served/comparison.md").read_text()
    assert "pure argmax" in (ROOT / "results/policy/test/comparison.md").read_text()


def _record(figures: dict) -> dict:
    return {"command": "python bench/x.py", "measured_at": "2026-11-30 19:00 UTC", "load_before": 1.5,
            "load_after": 2.0, "figures": figures}


def test_benchmark_table_rows_and_target_marks_come_from_the_result_files(tmp_path):
    row = {"mode": "names", "nodes": 100, "noop": [0.3, 0.4, 0.2], "filter": [0.5, 0.8, 0.5],
           "prioritize": [0.6, 2.5, 0.55], "rss_mib": 70.0}
    records = {
        "extender": _record({"rows": [row, {**row, "nodes": 5000, "prioritize": [4.0, 9.0, 4.0], "rss_mib": 150.0}],
                             "encode_q_ms": {"100": [0.1, 0.1], "5000": [2.5, 1.9]}}),
        "scheduler": _record({"nodes": 500, "pods": 2000, "ratio_to_noop": 0.9, "ratio_to_no_extender": 0.6,
                              "arms": {"no extender": {"pods_s": 100.0, "cpu_per_pod": {"kube-scheduler": 0.002}},
                                       "no-op extender": {"pods_s": 200 / 3, "cpu_per_pod": {"extender": 0.001}},
                                       "drsched": {"pods_s": 60.0, "cpu_per_pod": {"extender": 0.003,
                                                                                   "kube-scheduler": 0.002}}}}),
    }
    (tmp_path / "results" / "bench").mkdir(parents=True)
    for name, rec in records.items():
        (tmp_path / "results" / "bench" / f"{name}.json").write_text(json.dumps(rec))
    (tmp_path / "README.md").write_text("# no blocks\n")
    done = _run("--root", str(tmp_path))
    assert done.returncode == 0, done.stderr
    table = (tmp_path / "results" / "bench" / "benchmarks.md").read_text()
    assert "| 0.60/2.50 / 4.00/9.00 ms;" in table and "p99 ≤ 2 / 10 ms: ✘ / ✔" in table
    assert "| 0.10 / 2.50 ms (0.10 / 1.90 ms) | ≤ 2 ms at 5,000: wall ✘, CPU ✔ |" in table
    assert "| 150.0 MiB | ≤ 142 MiB ✘ |" in table
    assert "ratio to no-op extender **0.90**" in table and "ratio to no-op ≥ 0.85 ✔; to none ≥ 0.7 ✘" in table
    assert "2026-11-30 19:00 UTC, load 1.5 → 2" in table and "Commands: `python bench/x.py`" in table


def _scheduler_run(ratios: list[float], measured_at: str) -> dict:
    """A bench_scheduler record of ``len(ratios)`` interleaved rounds, drsched at ``ratio`` x the no-op's pods/s."""
    arms = {"no extender": {"pods_s": 200.0, "cpu_per_pod": {"kube-scheduler": 0.002}}}
    for r, ratio in enumerate(ratios, 1):
        suffix = "" if r == 1 else f" #{r}"
        arms[f"no-op extender{suffix}"] = {"pods_s": 100.0, "cpu_per_pod": {"extender": 0.001, "kube-scheduler": 0.003}}
        arms[f"drsched{suffix}"] = {"pods_s": 100.0 * ratio, "cpu_per_pod": {"extender": 0.002 + r / 1000,
                                                                            "kube-scheduler": 0.004}}
    return {**_record({"nodes": 500, "pods": 2000, "arms": arms}), "measured_at": measured_at,
            "command": f"python bench/bench_scheduler.py --repeat {len(ratios)}"}


def _scheduler_row(root: Path) -> str:
    done = _run("--root", str(root))
    assert done.returncode == 0, done.stderr
    return next(line for line in (root / "results" / "bench" / "benchmarks.md").read_text().splitlines()
                if "stock kube-scheduler" in line)


def test_the_scheduler_row_is_the_newest_run_with_five_rounds_then_the_newest_then_the_legacy_file(tmp_path):
    bench = tmp_path / "results" / "bench"
    (bench / "runs").mkdir(parents=True)
    (tmp_path / "README.md").write_text("# no blocks\n")
    (bench / "scheduler.json").write_text(json.dumps(_scheduler_run([0.5], "2026-11-30 19:00 UTC")))
    assert "1 round of the arms" in (row := _scheduler_row(tmp_path)) and "`results/bench/scheduler.json` |" in row

    (bench / "runs" / "scheduler-20261201T1000.json").write_text(json.dumps(_scheduler_run([0.6, 0.7],
                                                                                          "2026-12-01 10:40 UTC")))
    assert "`results/bench/runs/scheduler-20261201T1000.json` |" in _scheduler_row(tmp_path)  # newest, too short

    five = _scheduler_run([0.9, 0.8, 0.7, 0.86, 0.95], "2026-12-02 10:40 UTC")
    (bench / "runs" / "scheduler-20261202T1000.json").write_text(json.dumps(five))
    (bench / "runs" / "scheduler-20261203T1000.json").write_text(json.dumps(_scheduler_run([0.9, 0.9],
                                                                                          "2026-12-03 10:40 UTC")))
    row = _scheduler_row(tmp_path)  # the newer two-round run does not replace the five-round one
    assert "`results/bench/runs/scheduler-20261202T1000.json` |" in row and "5 rounds of the arms" in row
    assert "ratio to no-op extender **0.86 [0.70–0.95]**, to no extender 0.45;" in row
    assert "extender CPU ms per pod drsched 5.00 [3.00–7.00], no-op 1.00 [1.00–1.00]; kube-scheduler 4.00" in row
    assert "| ratio to no-op ≥ 0.85 ✔ (3 of 5 rounds); to none ≥ 0.7 ✘ |" in row
    assert "| 200.0 / 100.0 [100.0–100.0] / 86.0 [70.0–95.0] pods/s:" in row
    assert "Commands: `python bench/bench_scheduler.py --repeat 5`" in (bench / "benchmarks.md").read_text()


def test_a_scheduler_run_at_5000_nodes_is_its_own_row_and_never_the_main_one(tmp_path):
    bench = tmp_path / "results" / "bench"
    (bench / "runs").mkdir(parents=True)
    (tmp_path / "README.md").write_text("# no blocks\n")
    five = _scheduler_run([0.9, 0.8, 0.7, 0.86, 0.95], "2026-12-02 10:40 UTC")
    (bench / "runs" / "scheduler-20261202T1000.json").write_text(json.dumps(five))
    scale = _scheduler_run([0.4], "2026-12-03 10:40 UTC")  # newer, five times the nodes, one round
    scale["figures"]["nodes"] = 5000
    (bench / "runs" / "scheduler-20261203T1000.json").write_text(json.dumps(scale))
    assert _run("--root", str(tmp_path)).returncode == 0
    rows = [line for line in (bench / "benchmarks.md").read_text().splitlines() if "stock kube-scheduler" in line]
    assert len(rows) == 2
    assert "500 KWOK nodes" in rows[0] and "`results/bench/runs/scheduler-20261202T1000.json` |" in rows[0]
    assert "5,000 KWOK nodes" in rows[1] and "`results/bench/runs/scheduler-20261203T1000.json` |" in rows[1]
    assert "ratio to no-op extender **0.40**" in rows[1]


def test_a_scheduler_record_without_a_complete_round_is_one_line_naming_the_file(tmp_path):
    bench = tmp_path / "results" / "bench"
    (bench / "runs").mkdir(parents=True)
    (tmp_path / "README.md").write_text("# no blocks\n")
    rec = _scheduler_run([0.5], "2026-12-01 10:40 UTC")
    del rec["figures"]["arms"]["drsched"]
    (bench / "runs" / "scheduler-20261201T1000.json").write_text(json.dumps(rec))
    done = _run("--root", str(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "results/bench/runs/scheduler-20261201T1000.json: no round with both" in done.stderr
