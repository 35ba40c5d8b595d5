"""`python -m lab compare`: a rerun checked against a reference run from the two directories' CSV files."""

from __future__ import annotations

from pathlib import Path

from lab import report
from lab.cli import main
from lab.compare import placements, ratio_checks, schedules
from policy.labworld import JOB_COLUMNS

NODES = [{"node": "a", "node_type": "small", "cpu_quota_m": 500, "mem_mi": 1024, "net_mbit": 40},
         {"node": "b", "node_type": "large", "cpu_quota_m": 1000, "mem_mi": 2048, "net_mbit": 80}]


def _run(out: Path, jcts: dict[tuple[int, str], list[float]], nodes: dict[tuple[int, str], list[str]]) -> Path:
    """A lab directory whose (seed, arm) runs have these job completion times and placements."""
    out.mkdir(parents=True)
    report.append_rows(out, "nodes.csv", NODES)
    rows = []
    for (seed, arm), times in jcts.items():
        for i, jct in enumerate(times):
            row = dict.fromkeys(JOB_COLUMNS, "")
            row.update(seed=seed, arm=arm, variant="under", job=f"j{i:03d}", kind="cpu",
                       node=nodes[(seed, arm)][i], submit_s=float(i), finish_s=i + jct, jct_s=jct, slowdown=1.0,
                       exit_code=0)
            rows.append(row)
    report.append_rows(out, "jobs.csv", rows)
    for seed in {s for s, _ in jcts}:
        (out / f"schedule-drs-under-{seed}.csv").write_text(f"schedule of seed {seed}\n")
    return out


def _pair(tmp_path: Path, rerun_model_jct: float):
    place = {(s, a): ["a", "b"] for s in (1, 2, 3) for a in ("default", "model")}
    ref = _run(tmp_path / "ref", {(1, "default"): [10, 10], (1, "model"): [8, 8], (2, "default"): [10, 10],
                                  (2, "model"): [9, 9], (3, "default"): [10, 10], (3, "model"): [10, 10]}, place)
    moved = dict(place)
    moved[(1, "model")] = ["b", "b"]
    new = _run(tmp_path / "new", {(1, "default"): [10, 10], (1, "model"): [rerun_model_jct] * 2,
                                  (2, "default"): [10, 10], (2, "model"): [rerun_model_jct] * 2}, moved)
    return ref, new


def test_a_rerun_inside_the_interval_passes_and_one_outside_fails(tmp_path: Path) -> None:
    ref, inside = _pair(tmp_path / "in", rerun_model_jct=9.0)
    (check,) = [c for c in ratio_checks(ref, inside) if c.metric == "mean_jct_s"]
    assert check.reference[2] == 3 and abs(check.reference[0] - 0.9) < 1e-9 and check.rerun[2] == 2
    assert check.inside
    ref, outside = _pair(tmp_path / "out", rerun_model_jct=14.0)
    (check,) = [c for c in ratio_checks(ref, outside) if c.metric == "mean_jct_s"]
    assert abs(check.rerun[0] - 1.4) < 1e-9 and not check.inside


def test_placements_count_jobs_on_the_same_node_per_seed_and_arm(tmp_path: Path) -> None:
    ref, new = _pair(tmp_path, rerun_model_jct=9.0)
    got = {(p.arm, p.seed): (p.same, p.jobs) for p in placements(ref, new)}
    assert got == {("default", 1): (2, 2), ("default", 2): (2, 2), ("model", 1): (1, 2), ("model", 2): (2, 2)}


def test_schedules_compare_bytes_and_the_cli_writes_the_table(tmp_path: Path, capsys) -> None:
    ref, new = _pair(tmp_path, rerun_model_jct=9.0)
    (new / "schedule-drs-under-2.csv").write_text("another schedule\n")
    assert schedules(ref, new) == [("schedule-drs-under-1.csv", True), ("schedule-drs-under-2.csv", False)]
    out = tmp_path / "compare.md"
    assert main(["compare", str(ref), str(new), "--write", str(out)]) == 0
    text = out.read_text()
    assert "1 of 2 schedule files byte-identical (differ: schedule-drs-under-2.csv)" in text
    assert "| under | model | 3 | 4 | 0.75 |" in text
    assert text in capsys.readouterr().out


def test_compare_of_an_empty_directory_is_a_clear_error(tmp_path: Path, capsys) -> None:
    ref, _ = _pair(tmp_path, rerun_model_jct=9.0)
    (tmp_path / "empty").mkdir()
    assert main(["compare", str(ref), str(tmp_path / "empty")]) == 2
    assert "no jobs.csv" in capsys.readouterr().out
