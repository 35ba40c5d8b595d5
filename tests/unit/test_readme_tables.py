"""The README's generated tables match the committed results they name, and the generator catches drift."""

from __future__ import annotations

import csv
import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("readme_tables", ROOT / "scripts" / "readme_tables.py")
readme_tables = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme_tables)


def test_readme_blocks_match_committed_results():
    docs = readme_tables.docs(ROOT)
    named = {doc.name: [m["path"] for m in readme_tables.BLOCK.finditer(doc.read_text())] for doc in docs}
    everywhere = [path for paths in named.values() for path in paths]
    assert "results/policy/test/summary.md" in everywhere and "results/policy/migration/migration.md" in everywhere
    assert "results/bench/benchmarks.md" in everywhere
    # the README's headline is the test split scored as served; the argmax tables live in the docs
    assert named["README.md"][0] == "results/policy/test-served/comparison.md"
    assert named["evaluation.md"].index("results/policy/test-served/comparison.md") < named["evaluation.md"].index(
        "results/policy/test/summary.md")
    for doc in docs:
        text = doc.read_text()
        assert readme_tables.render(text, ROOT) == text, f"{doc}: run `python scripts/readme_tables.py`"


def test_docs_links_resolve():
    """Every relative link in the README and docs/ names a file or folder of the checkout (moved text keeps working)."""
    import re
    for doc in readme_tables.docs(ROOT):
        for target in re.findall(r"\]\((?!https?:|#)([^)#]+)(?:#[^)]*)?\)", doc.read_text()):
            assert (doc.parent / target).exists(), f"{doc.relative_to(ROOT)} links to {target}, which does not exist"


def test_derived_files_match_their_csvs():
    derived = readme_tables.derived(ROOT)
    assert {str(p) for p in derived} >= {"results/policy/test-served/comparison.md",
                                         "results/policy/test/comparison.md", "results/policy/served.md",
                                         "results/policy/served-test.md",
                                         "results/bench/benchmarks.md"}
    for rel, text in derived.items():
        assert (ROOT / rel).read_text() == text, f"{rel} is stale: run `python scripts/readme_tables.py`"


def _copy_results(dest: Path) -> None:
    """Every committed result tree a README block reads (the simulator's, the benchmarks' and the real-node lab's)."""
    for tree in ("results/policy", "results/bench", "results/lab", "docs"):
        shutil.copytree(ROOT / tree, dest / tree)


def test_check_fails_on_a_hand_edited_block(tmp_path, capsys):
    _copy_results(tmp_path)
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    readme = tmp_path / "docs" / "evaluation.md"
    text = readme.read_text()
    start = text.index("<!-- BEGIN generated: results/policy/test/summary.md -->")
    end = text.index("<!-- END generated -->", start)
    readme.write_text(text[:end] + "| typed | by | hand |\n" + text[end:])
    assert readme_tables.main(["--check", "--root", str(tmp_path)]) == 1
    assert "evaluation.md" in capsys.readouterr().err
    assert readme_tables.main(["--root", str(tmp_path)]) == 0  # regenerating restores the committed table
    assert readme.read_text() == text


def test_check_fails_on_a_stale_derived_file(tmp_path):
    _copy_results(tmp_path)
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    summary = tmp_path / "results" / "policy" / "test" / "summary.csv"
    rows = readme_tables._read(summary)
    rows[0]["excess_slowdown"] = str(float(rows[0]["excess_slowdown"]) + 1)  # a rerun with other numbers
    with summary.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert readme_tables.main(["--check", "--root", str(tmp_path)]) == 1


def test_missing_result_file_is_named(tmp_path):
    _copy_results(tmp_path)
    (tmp_path / "results" / "policy" / "test" / "summary.md").unlink()
    with pytest.raises(FileNotFoundError, match="results/policy/test/summary.md"):
        readme_tables.render((ROOT / "docs" / "evaluation.md").read_text(), tmp_path)


def test_each_comparison_says_how_the_policies_were_scored():
    derived = readme_tables.derived(ROOT)
    assert "scored as served" in derived[Path("results/policy/test-served/comparison.md")]
    assert "pure argmax" in derived[Path("results/policy/test/comparison.md")]


def test_comparison_uses_ratio_of_mean_excess():
    rows = [{"scenario": "f", "load": "0.9", "policy": p, "seeds": "2", "excess_slowdown": str(x)}
            for p, x in (("default-k8s", 0.4), ("lookahead", 0.1), ("demand-aware", 0.2), ("dqn:default", 0.2))]
    table = readme_tables.comparison(rows)
    assert "| f | 0.9 | 0.4000 | 0.1000 | 0.2000 | 0.2000 | 0.50 | 2.00 |" in table
    assert "**0.50** | **2.00**" in table


def _record(figures: dict) -> dict:
    return {"command": "python bench/x.py", "measured_at": "2026-11-30 19:00 UTC", "load_before": 1.5,
            "load_after": 2.0, "figures": figures}


def test_benchmark_table_rows_and_target_marks_come_from_the_result_files():
    row = {"mode": "names", "nodes": 100, "noop": [0.3, 0.4, 0.2], "filter": [0.5, 0.8, 0.5],
           "prioritize": [0.6, 2.5, 0.55], "rss_mib": 70.0}
    records = {
        "extender": _record({"rows": [row, {**row, "nodes": 5000, "prioritize": [4.0, 9.0, 4.0], "rss_mib": 150.0}],
                             "encode_q_ms": {"100": [0.1, 0.1], "5000": [2.5, 1.9]}}),
        "scheduler": _record({"nodes": 500, "pods": 2000, "ratio_to_noop": 0.9, "ratio_to_no_extender": 0.6,
                              "arms": {"no extender": {"pods_s": 100.0, "cpu_per_pod": {"kube-scheduler": 0.002}},
                                       "drsched": {"pods_s": 60.0, "cpu_per_pod": {"extender": 0.003,
                                                                                   "kube-scheduler": 0.002}}}}),
    }
    table = readme_tables.benchmarks(records)
    assert "| 0.60/2.50 / 4.00/9.00 ms;" in table and "p99 ≤ 2 / 10 ms: ✘ / ✔" in table
    assert "| 0.10 / 2.50 ms (0.10 / 1.90 ms) | ≤ 2 ms at 5,000: wall ✘, CPU ✔ |" in table
    assert "| 150.0 MiB | ≤ 142 MiB ✘ |" in table
    assert "ratio to no-op extender **0.90**" in table and "ratio to no-op ≥ 0.85 ✔; to none ≥ 0.7 ✘" in table
    assert "2026-11-30 19:00 UTC, load 1.5 → 2" in table and "Commands: `python bench/x.py`" in table
