"""The migration evaluation's lab-straggler scenario: the lab's fault, the lab's knobs, every straggler arm."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from policy.labworld import REAL_NODES
from policy.migrate.knobs import LAB
from policy.migration_eval import LAB_PLACEMENT, LAB_RULE, LabDesign, MigrationArgs, lab_straggler_config, run
from policy.model import SHIPPED_MODEL
from policy.straggler import draw_fault


@pytest.mark.parametrize("seed", [701, 702, 705])
def test_lab_straggler_meets_the_fault_the_lab_draws_for_the_seed(seed: int) -> None:
    cfg = lab_straggler_config(seed)
    fault = draw_fault(LAB_RULE, seed, [(s.name, s.cpu_millis) for s in REAL_NODES], at_s=20.0)
    (ev,) = cfg.events
    assert [s.name for s in REAL_NODES][ev.node] == fault.node
    assert (ev.start, ev.factor) == (20.0, pytest.approx(1.0 / fault.cut))
    assert ev.duration == (cfg.time_limit if fault.restore_s is None else pytest.approx(fault.restore_s - 20.0))
    assert (cfg.migration_interval, cfg.n_jobs) == (LAB.interval_s, 48)


def test_every_straggler_arm_runs_and_is_paired_with_none(tmp_path: Path) -> None:
    args = MigrationArgs(scenarios="lab-straggler", seeds=2, seed_base=701, jobs=10,
                         arms="none,migration,restart,taint", out=tmp_path, no_plots=True)
    assert run(args) == 0
    rows = list(csv.DictReader((tmp_path / "migration_summary.csv").open()))
    assert [r["arm"] for r in rows] == ["none", "migration", "restart", "taint"]
    assert all(int(r["seeds"]) == 2 for r in rows)
    none = rows[0]
    assert float(none["mean_jct_geo"]) == pytest.approx(1.0) and float(none["makespan_geo"]) == pytest.approx(1.0)
    assert float(rows[3]["migrations"]) == 0.0  # taint moves nothing
    runs = list(csv.DictReader((tmp_path / "migration_runs.csv").open()))
    assert {r["finished"] for r in runs} == {"48"}  # the scenario's 48 jobs, whatever --jobs says


def test_an_unknown_arm_or_none_missing_is_refused(tmp_path: Path) -> None:
    for arms in ("migration", "none,teleport"):
        assert run(MigrationArgs(scenarios="lab-straggler", seeds=1, jobs=10, arms=arms, out=tmp_path)) == 2


def test_a_design_draws_its_jobs_window_work_variant_and_cut_time() -> None:
    design = LabDesign(jobs=16, window_s=90.0, work=5.0, variant="under", at_s=60.0)
    cfg, landed = lab_straggler_config(703, design), lab_straggler_config(703)
    fault = draw_fault(LAB_RULE, 703, [(s.name, s.cpu_millis) for s in REAL_NODES], at_s=60.0)
    (ev,) = cfg.events
    assert (cfg.n_jobs, cfg.work_scale, cfg.workload) == (16, 5.0, "lab-under-small")
    assert (ev.start, ev.factor) == (60.0, pytest.approx(1.0 / fault.cut))  # the same fault, only later
    assert cfg.load < landed.load  # fewer jobs over a longer window, though each is longer


def test_the_lab_flags_reach_the_design(tmp_path: Path) -> None:
    args = MigrationArgs(scenarios="lab-straggler", seeds=1, seed_base=701, lab_jobs=8, lab_window_s=60.0,
                         arms="none,migration", out=tmp_path, no_plots=True)
    assert args.lab_design() == LabDesign(jobs=8, window_s=60.0)
    assert run(args) == 0
    runs = list(csv.DictReader((tmp_path / "migration_runs.csv").open()))
    assert {r["finished"] for r in runs} == {"8"}


def test_the_placement_is_the_shipped_model_unless_named(tmp_path: Path) -> None:
    # a protocol's prediction names its model, so that shipping another one does not move it silently
    assert MigrationArgs().lab_design().placement == LAB_PLACEMENT == f"dqn:{SHIPPED_MODEL}"
    named = MigrationArgs(lab_placement="demand-aware").lab_design()
    assert named == LabDesign(placement="demand-aware")
    got = {}
    for placement in (LAB_PLACEMENT, "worst-fit"):
        args = MigrationArgs(scenarios="lab-straggler", seeds=1, seed_base=701, lab_jobs=24, lab_variant="under",
                             arms="none", lab_placement=placement, out=tmp_path / placement.replace("/", "_"),
                             no_plots=True)
        assert run(args) == 0
        (row,) = csv.DictReader((args.out / "migration_runs.csv").open())
        got[placement] = float(row["mean_jct"])
    assert got[LAB_PLACEMENT] != got["worst-fit"]
