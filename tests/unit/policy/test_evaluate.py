"""``policy.evaluate``'s choice of contention set: a named set of the shipped calibration file, or a clear error."""

import json

import numpy as np
import pytest

from policy.evaluate import main, parse_args
from policy.grid import Case, run_all
from policy.report import format_counts, format_placements, parse_counts
from policy.sim import calibration
from policy.sim.errors import ConfigError
from policy.sim.sharing import ORIGINAL


def test_a_named_set_comes_from_the_shipped_file():
    doc = calibration.read(calibration.DEFAULT_PATH)
    for name in doc["sets"]:
        assert calibration.shipped(name) == calibration.params_of(doc, name)
    assert calibration.shipped("original") == ORIGINAL
    assert calibration.shipped("fitted-lab") != ORIGINAL


def test_an_unknown_set_is_refused_with_the_known_names(capsys, tmp_path):
    with pytest.raises(ConfigError, match="no parameter set 'moon'; known: original"):
        calibration.shipped("moon")
    assert main(["--quick", "--contention", "moon", "--out", str(tmp_path)]) == 2
    assert "--contention" in capsys.readouterr().err
    assert not (tmp_path / "summary.csv").exists()


def test_the_set_reaches_every_episode():
    # equal cpu amounts instead of equal rates: an overloaded node's jobs finish at other times
    cases = [Case("base", "drs", 1.5, 1000)]
    rows = {}
    for name in ("original", "fitted-lab"):
        out, _ = run_all(cases, ["default-k8s"], n_jobs=40, workers=1, progress=False,
                         contention=calibration.shipped(name))
        rows[name] = out[0]
    default, _ = run_all(cases, ["default-k8s"], n_jobs=40, workers=1, progress=False)
    active = calibration.read(calibration.DEFAULT_PATH)["active"]
    assert default[0]["mean_jct"] == rows.get(active, rows["original"])["mean_jct"]
    assert rows["fitted-lab"]["mean_jct"] != rows["original"]["mean_jct"]


@pytest.mark.parametrize("counts", [{}, {"rn-small": 1}, {"rn-large": 3, "rn-small": 1, "small": 12}])
def test_placement_counts_survive_a_csv_cell(counts):
    assert parse_counts(format_counts(counts)) == counts


def test_the_placement_table_sums_seeds_per_case_and_policy():
    rows = [dict(scenario="s", workload="w", load=1.0, policy="p", compute_placements=cell)
            for cell in ("a=1;b=3", "b=1", "")]
    table = format_placements(rows, ("cpu", "train"))
    assert "cpu/train jobs" in table
    assert table.splitlines()[-1].split() == ["s/w/1", "p", "1", "(0.20)", "4", "(0.80)"]


def test_the_lab_split_defaults_to_the_labs_jobs_and_loads():
    from policy.evaluate import parse_args
    from policy.splits import LAB, LAB_JOBS, LAB_LOADS

    args = parse_args(["--split", "lab"])
    assert (args.jobs, args.loads, args.scenarios) == (LAB_JOBS, ",".join(map(str, LAB_LOADS)), ",".join(LAB))
    assert parse_args(["--split", "validation"]).jobs == 200


def _run(seed, policy, jct, scenario="s"):
    return dict(scenario=scenario, workload="w", load=1.0, seed=seed, policy=policy, mean_jct=jct)


def test_the_jct_ratio_is_the_labs_paired_log_ratio_over_seeds():
    import math

    from policy.tables import jct_ratios

    rows = [_run(1, "default-k8s", 10.0), _run(1, "p", 20.0), _run(2, "default-k8s", 20.0), _run(2, "p", 10.0),
            _run(3, "default-k8s", 10.0), _run(3, "p", 10.0), _run(4, "p", 99.0)]  # seed 4 has no baseline
    (r,) = jct_ratios(rows)
    assert (r["policy"], r["seeds"]) == ("p", 3)
    assert r["jct_ratio"] == pytest.approx(1.0)  # 2x, 0.5x and 1x: a geometric mean, not (2 + 0.5 + 1) / 3
    assert r["sd_log_ratio"] == pytest.approx(math.log(2))
    half = 4.303 * math.log(2) / math.sqrt(3)  # t(0.975, 2)
    assert (r["jct_ratio_low"], r["jct_ratio_high"]) == pytest.approx((math.exp(-half), math.exp(half)), rel=1e-3)


def test_the_jct_ratio_pairs_seeds_within_a_case_and_leaves_the_baseline_out():
    from policy.tables import jct_ratios

    rows = [_run(1, "default-k8s", 10.0), _run(1, "p", 15.0), _run(1, "default-k8s", 30.0, "t"),
            _run(1, "p", 15.0, "t")]
    got = {r["scenario"]: r["jct_ratio"] for r in jct_ratios(rows)}
    assert got == pytest.approx({"s": 1.5, "t": 0.5})


@pytest.mark.parametrize("entry,expected", [("worst-fit@off", ("worst-fit", "off")),
                                            ("demand-aware", ("demand-aware", "prefer-cool")),
                                            ("dqn:policy/models/default.npz@prefer-fit",
                                             ("dqn:policy/models/default.npz", "prefer-fit"))])
def test_a_policy_entry_may_name_its_hot_filter_as_the_labs_arms_do(entry, expected):
    from policy.grid import policy_setting

    assert policy_setting(entry, "prefer-cool") == expected


def test_a_bad_hot_filter_in_a_policy_entry_is_refused(capsys, tmp_path):
    from policy.grid import policy_setting

    with pytest.raises(ValueError, match="prefer-cool, prefer-fit, strict, off"):
        policy_setting("worst-fit@cold", "off")
    assert main(["--quick", "--served", "--policies", "default-k8s,worst-fit@cold", "--out", str(tmp_path)]) == 2
    assert "worst-fit@cold" in capsys.readouterr().err
    assert main(["--quick", "--policies", "default-k8s,worst-fit@off", "--out", str(tmp_path)]) == 2
    assert "only with --served" in capsys.readouterr().err
    assert not (tmp_path / "summary.csv").exists()


def test_the_hot_filter_of_a_policy_entry_reaches_its_episodes():
    # worst-fit with the filter off keeps the busiest nodes it prefers; prefer-cool filters them out
    cases = [Case("lab-mr-under", "lab-multi-resource-under", 1.07, 2**32, "lab")]
    rows, _ = run_all(cases, ["worst-fit", "worst-fit@off"], n_jobs=48, workers=1, progress=False,
                      served_weight=10.0, hot_filter="prefer-cool")
    by = {r["policy"]: r["mean_jct"] for r in rows}
    assert set(by) == {"worst-fit", "worst-fit@off"} and by["worst-fit@off"] != by["worst-fit"]
    off, _ = run_all(cases, ["worst-fit"], n_jobs=48, workers=1, progress=False, served_weight=10.0,
                     hot_filter="off")
    assert off[0]["mean_jct"] == by["worst-fit@off"]


def test_hot_thresholds_reach_every_served_episode_and_served_json(capsys, tmp_path):
    # worst-fit prefers the busiest nodes; at the shipped 65 % cpu prefer-cool filters them, with no check it cannot
    cases = [Case("lab-mr-under", "lab-multi-resource-under", 1.07, 2**32, "lab")]
    common = dict(n_jobs=48, workers=1, progress=False, served_weight=10.0, hot_filter="prefer-cool")
    shipped, _ = run_all(cases, ["worst-fit"], **common)
    unchecked, _ = run_all(cases, ["worst-fit"], hot_thresholds=(np.inf,) * 4, **common)
    off, _ = run_all(cases, ["worst-fit@off"], **common)
    assert shipped[0]["mean_jct"] != unchecked[0]["mean_jct"] == off[0]["mean_jct"]
    assert parse_args(["--served", "--hot-thresholds", "0.9,0.95"]).hot_thresholds == (0.9, 0.95, np.inf, np.inf)
    assert main(["--quick", "--served", "--policies", "default-k8s,worst-fit", "--seeds", "1", "--jobs", "8",
                 "--no-plots", "-q", "--hot-thresholds", "0.9,none", "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "served.json").read_text())["hot_thresholds"] == "0.9,none"
    with pytest.raises(SystemExit):
        parse_args(["--served", "--hot-thresholds", "0.9"])
    assert "CPU,MEM" in capsys.readouterr().err


def test_net_shown_reaches_every_episode():
    # worst-fit packs net jobs onto the slowest link while it sees the links; shown 1250 MB/s everywhere it cannot
    cases = [Case("lab-mr-under", "lab-multi-resource-under", 1.07, 2**32, "lab")]
    own, _ = run_all(cases, ["worst-fit"], n_jobs=48, workers=1, progress=False)
    blind, _ = run_all(cases, ["worst-fit"], n_jobs=48, workers=1, progress=False, net_shown=1250.0)
    assert blind[0]["mean_jct"] < own[0]["mean_jct"]
    assert main(["--quick", "--net-shown", "0", "--out", "unused"]) == 2


def test_the_size_split_keeps_each_familys_jobs_and_refuses_jobs():
    from policy.evaluate import parse_args
    from policy.grid import split_cases

    assert parse_args(["--split", "size"]).jobs is None
    with pytest.raises(SystemExit):
        parse_args(["--split", "size", "--jobs", "200"])
    size = split_cases("size", ["bursty-100", "bursty-1000"], [0.9], 1)
    assert [c.sim_config(200).n_jobs for c in size] == [625, 6250]
    assert split_cases("test", ["bursty"], [0.9], 1)[0].sim_config(200).n_jobs == 200
