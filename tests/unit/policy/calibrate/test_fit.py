"""Fitting: data made with known parameters are fitted back to them, and the command writes its evidence."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from policy.calibrate.__main__ import main
from policy.calibrate.fit import Errors, fit, predict
from policy.calibrate.host import system_busy, system_speed
from policy.calibrate.labdata import read_results
from policy.calibrate.replay import Machine
from policy.sim.calibration import DEFAULT_PATH, params_of, read
from policy.sim.sharing import ORIGINAL, ContentionParams

from .synthetic import measured, schedule, write, write_system

TRUE = ContentionParams(cpu_share="requests", interference=0.1)


@pytest.fixture
def lab(tmp_path):
    rng = np.random.default_rng(11)
    return write(tmp_path / "lab", measured(schedule(range(1, 5), rng, n=10), TRUE))


def test_fit_recovers_the_parameters_the_data_were_made_with(lab) -> None:
    runs = read_results(lab)
    assert Errors.of(predict(runs, ORIGINAL, [3, 4])).median > 0.02  # the original rule is visibly wrong here
    best, machine, err = fit(runs, [1, 2])
    assert machine.host_cpu_m is None
    assert (best.cpu_share, best.interference) == ("requests", 0.1)
    assert err.p90 == pytest.approx(0, abs=1e-9)
    assert Errors.of(predict(runs, best, [3, 4])).p90 == pytest.approx(0, abs=1e-9)


def test_original_data_fit_back_to_the_original_rule(tmp_path) -> None:
    runs = read_results(write(tmp_path, measured(schedule([1, 2], np.random.default_rng(2)), ORIGINAL)))
    assert fit(runs, [1])[0].is_original


def test_fit_command_writes_table_plot_and_records_without_changing_the_active_set(lab, tmp_path) -> None:
    cal = tmp_path / "calibration.yaml"
    cal.write_text(DEFAULT_PATH.read_text())
    out = tmp_path / "out"
    assert main(["fit", "--results", str(lab), "--out", str(out), "--calibration", str(cal), "--fit-seeds", "1-2",
                 "--write"]) == 0
    table = (out / "calibration.md").read_text()
    assert "| all | " in table and "fitted: median" in table and "## held-out seeds [3, 4]" in table
    assert "## fitting seeds [1, 2]" in table
    assert (out / "scatter.png").stat().st_size > 0 and (out / "predictions.csv").exists()
    doc = read(cal)
    assert doc["active"] == read(DEFAULT_PATH)["active"] and params_of(doc) == params_of(read(DEFAULT_PATH))
    assert params_of(doc, "fitted").cpu_share == "requests"
    assert doc["fits"]["fitted"]["held_out_seeds"] == [3, 4]
    assert doc["fits"]["fitted"]["errors"]["fitted held-out"]["p90"] == 0
    assert yaml.safe_load(cal.read_text())["version"] == 1 and cal.read_text().startswith("# How co-located")


def test_replay_command_and_bad_input_exit_2(lab, tmp_path, capsys) -> None:
    assert main(["replay", "--results", str(lab), "--out", str(tmp_path / "r"), "--no-plot"]) == 0
    replayed = (tmp_path / "r" / "calibration.md").read_text()
    assert "| cpu |" in replayed
    nodes = sorted({line.split("|")[1].strip() for line in replayed.splitlines() if line.startswith("| node ")})
    assert len(nodes) > 1  # per-node rows when the jobs ran on several nodes
    cal = tmp_path / "calibration.yaml"
    cal.write_text(DEFAULT_PATH.read_text().replace("sets:\n", "sets:\n  cfs: {cpu_share: requests}\n"))
    assert main(["replay", "--results", str(lab), "--out", str(tmp_path / "r2"), "--calibration", str(cal),
                 "--set", "original,cfs", "--no-plot"]) == 0
    assert "original: median | original: p90 | cfs: median" in (tmp_path / "r2" / "calibration.md").read_text()
    assert main(["replay", "--results", str(lab), "--set", "nope", "--no-plot"]) == 2
    assert "no parameter set 'nope'" in capsys.readouterr().err
    assert main(["fit", "--results", str(lab), "--fit-seeds", "9"]) == 2
    assert "--fit-seeds" in capsys.readouterr().err
    (lab / "nodes.csv").write_text("node,node_type\n")
    assert main(["replay", "--results", str(lab)]) == 2
    assert "nodes.csv line 1" in capsys.readouterr().err


def test_grid_option_restricts_the_search(lab, tmp_path, capsys) -> None:
    cal = tmp_path / "calibration.yaml"
    cal.write_text(DEFAULT_PATH.read_text())
    args = ["fit", "--results", str(lab), "--out", str(tmp_path / "o"), "--calibration", str(cal), "--no-plot"]
    assert main([*args, "--grid", "interference=0", "--grid", "cpu_share=rate,requests", "--write"]) == 0
    fitted = params_of(read(cal), "fitted")
    assert (fitted.cpu_share, fitted.interference) == ("requests", 0.0)
    assert read(cal)["fits"]["fitted"]["grid"]["interference"] == [0.0]
    assert main([*args, "--write", "--name", "original"]) == 2
    assert "reference rule" in capsys.readouterr().err
    assert main([*args, "--grid", "speed=1"]) == 2
    assert "NAME one of cpu_share" in capsys.readouterr().err
    assert main([*args, "--grid", "interference=lots"]) == 2
    assert "must be numbers" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--help"], ["replay", "--help"], ["fit", "--help"]])
def test_every_command_has_help(argv, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0 and "usage: python -m policy.calibrate" in capsys.readouterr().out


def test_fit_finds_how_much_cpu_the_host_left_to_the_nodes(tmp_path) -> None:
    rng = np.random.default_rng(5)
    jobs = measured(schedule(range(1, 5), rng, n=10), ORIGINAL, machine=Machine(host_cpu_m=600))
    runs = read_results(write(tmp_path, jobs))
    hosts = [Machine(host_cpu_m=h) for h in (None, 400, 600, 800)]
    best, machine, err = fit(runs, [1, 2], candidates=[ORIGINAL, TRUE], machines=hosts)
    assert (best, machine.host_cpu_m) == (ORIGINAL, 600)
    assert Errors.of(predict(runs, best, [3, 4], machine=machine)).p90 == pytest.approx(0, abs=1e-9)


def test_host_cpu_option(lab, tmp_path, capsys) -> None:
    cal = tmp_path / "calibration.yaml"
    cal.write_text(DEFAULT_PATH.read_text())
    args = ["--results", str(lab), "--out", str(tmp_path / "o"), "--calibration", str(cal), "--no-plot"]
    assert main(["fit", *args, "--host-cpu-m", "none,900", "--grid", "interference=0.1", "--write",
                 "--name", "host"]) == 0
    assert read(cal)["fits"]["host"]["host_cpu_m_tried"] == [None, 900.0]
    assert params_of(read(cal), "host").interference == 0.1 and read(cal)["active"] == read(DEFAULT_PATH)["active"]
    assert main(["replay", *args, "--host-cpu-m", "900"]) == 0
    assert main(["replay", *args, "--host-cpu-m", "900,1000"]) == 2
    assert "replay takes one value" in capsys.readouterr().err
    assert main(["fit", *args, "--host-cpu-m", "none,usage:400", "--write", "--name", "floor"]) == 0
    assert read(cal)["fits"]["floor"]["host_cpu_m_tried"] == [None, "usage:400.0"]
    assert main(["fit", *args, "--host-cpu-m", "usage:lots"]) == 2
    assert main(["fit", *args, "--host-cpu-m", "0"]) == 2
    assert "--host-cpu-m" in capsys.readouterr().err


def test_held_host_option(lab, tmp_path, capsys) -> None:
    cal = tmp_path / "calibration.yaml"
    cal.write_text(DEFAULT_PATH.read_text())
    args = ["--results", str(lab), "--out", str(tmp_path / "o"), "--calibration", str(cal), "--no-plot"]
    assert main(["replay", *args, "--host-cpu-m", "held"]) == 0
    assert "host_held='total', held_margin_m=25.0" in (tmp_path / "o" / "calibration.md").read_text()
    assert main(["replay", *args, "--host-cpu-m", "node-held:50"]) == 0
    assert "host_held='node', held_margin_m=50.0" in (tmp_path / "o" / "calibration.md").read_text()
    assert main(["fit", *args, "--host-cpu-m", "none,held:0,held:100", "--grid", "interference=0.1", "--write",
                 "--name", "held"]) == 0
    assert read(cal)["fits"]["held"]["host_cpu_m_tried"] == [None, "held:0", "held:100"]
    assert main(["replay", *args, "--host-cpu-m", "held:-5"]) == 2
    assert main(["replay", *args, "--host-cpu-m", "held:lots"]) == 2
    assert "'held:lots': need millicores" in capsys.readouterr().err


def test_a_fitted_host_is_recorded_and_named(lab, tmp_path, capsys) -> None:
    cal = tmp_path / "calibration.yaml"
    cal.write_text(DEFAULT_PATH.read_text())
    args = ["--results", str(lab), "--out", str(tmp_path / "o"), "--calibration", str(cal), "--no-plot"]
    assert main(["fit", *args, "--host-cpu-m", "held:0,held:300", "--grid", "interference=0.1",
                 "--write-host", "bench"]) == 0
    doc = read(cal)
    assert doc["hosts"]["bench"]["host_cpu_m"] in ("held:0", "held:300")
    assert doc["hosts"]["bench"]["host_cpu_m_tried"] == ["held:0", "held:300"]
    assert doc["sets"] == read(DEFAULT_PATH)["sets"] and doc["active"] == read(DEFAULT_PATH)["active"]
    assert main(["replay", *args, "--host-cpu-m", "bench"]) == 0
    margin = float(doc["hosts"]["bench"]["host_cpu_m"].removeprefix("held:"))
    assert f"held_margin_m={margin}" in (tmp_path / "o" / "calibration.md").read_text()
    assert main(["fit", *args, "--host-cpu-m", "held", "--write-host", "usage"]) == 2
    assert main(["fit", *args, "--host-cpu-m", "held", "--write-host", "held:5"]) == 2
    assert "--write-host" in capsys.readouterr().err
    assert main(["replay", *args, "--host-cpu-m", "nobody"]) == 2


def _busy_lab(tmp_path, slowdown: float):
    """Runs whose system CPU is 10 % busy for the first 40 s and 90 % after, measured under host ``sys:slowdown``."""
    rng = np.random.default_rng(7)
    jobs = schedule(range(1, 5), rng, n=10)
    ticks = {run: [(float(t), 10 * min(t, 40) + 90 * max(t - 40, 0), 90 * min(t, 40) + 10 * max(t - 40, 0))
                   for t in range(0, 400)] for run in {j.run for j in jobs}}
    speed = {run: system_speed(system_busy(r), slowdown) for run, r in ticks.items()}
    return write_system(write(tmp_path, measured(jobs, ORIGINAL, speed=speed)), ticks)


def test_fit_finds_how_much_the_system_cpu_slows_the_nodes(tmp_path) -> None:
    runs = read_results(_busy_lab(tmp_path, 0.3))
    hosts = [Machine(system_slowdown=k) for k in (0.0, 0.1, 0.3, 0.5)]
    best, machine, _ = fit(runs, [1, 2], candidates=[ORIGINAL, TRUE], machines=hosts)
    assert (best, machine.system_slowdown, machine.speed) == (ORIGINAL, 0.3, "sys:0.3")
    assert Errors.of(predict(runs, best, [3, 4], machine=machine)).p90 == pytest.approx(0, abs=1e-9)
    assert Errors.of(predict(runs, best, [3, 4], machine=hosts[0])).p90 > 0.05


def test_host_speed_option(lab, tmp_path, capsys) -> None:
    busy = _busy_lab(tmp_path / "busy", 0.2)
    args = ["--out", str(tmp_path / "o"), "--no-plot", "--grid", "interference=0", "--grid", "cpu_share=rate"]
    assert main(["fit", "--results", str(busy), *args, "--host-speed", "none,sys:0.2,sys:0.4"]) == 0
    text = (tmp_path / "o" / "calibration.md").read_text()
    assert "host speed `sys:0.2` (tried: none, sys:0.2, sys:0.4)" in text
    assert main(["replay", "--results", str(busy), *args[:3], "--host-speed", "sys:0.2"]) == 0
    assert main(["replay", "--results", str(busy), *args[:3], "--host-speed", "sys:0.2,none"]) == 2
    for bad in ("sys:1", "sys:-0.1", "sys:lots", "cpu:0.2", ""):
        assert main(["fit", "--results", str(busy), *args, "--host-speed", bad]) == 2
    assert "--host-speed" in capsys.readouterr().err
    # no system.csv: the model has nothing to read, and says so
    assert main(["fit", "--results", str(lab), *args, "--host-speed", "sys:0.2"]) == 2
    assert "has no system CPU samples" in capsys.readouterr().err
    assert main(["fit", "--results", str(busy), *args, "--host-speed", "sys:0.2", "--write-host", "x"]) == 2
