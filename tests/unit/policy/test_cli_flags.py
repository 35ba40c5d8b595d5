"""The flags of ``policy.evaluate`` (and its migration mode), ``policy.calibrate`` and ``policy.train``: the
values each spelling parses to and each flag's default, pinned so the parsers can change shape but not meaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from policy.calibrate.__main__ import parse_args as calibrate_args
from policy.calibrate.replay import DISK_MBPS
from policy.evaluate import DEFAULT_POLICIES
from policy.evaluate import parse_args as evaluate_args
from policy.served import DEFAULT_MAPPING, DEFAULT_WEIGHT, ScoreMapping
from policy.sim import calibration
from policy.splits import LOADS, SPLITS


def _values(args, **expected) -> dict:
    return {name: getattr(args, name) for name in expected}


def test_evaluate_defaults_per_mode():
    fixed = dict(policies=DEFAULT_POLICIES, trace=None, split=None, scenarios="base,hetero,noisy,stale",
                 workloads="drs", loads="0.6,0.9,1.2,1.5", seeds=5, seed_base=1000, jobs=200, served=None,
                 mapping=DEFAULT_MAPPING, hot_filter="prefer-cool", contention=None, workers=1,
                 out=Path("out/evaluate"), no_plots=False, quick=False, quiet=False)
    assert _values(evaluate_args([]), **fixed) == fixed
    quick = dict(scenarios="base", workloads="drs", loads="0.9,1.5", seeds=2, jobs=60, seed_base=1000, quick=True)
    assert _values(evaluate_args(["--quick"]), **quick) == quick
    split = dict(scenarios=",".join(SPLITS["test"]), workloads=None, loads=",".join(map(str, LOADS)), seeds=5,
                 jobs=200, seed_base=0)
    assert _values(evaluate_args(["--split", "test"]), **split) == split
    assert _values(evaluate_args(["--split", "test", "--quick"]), seeds=2, jobs=60) == dict(seeds=2, jobs=60)


def test_evaluate_flags_parse_to_todays_values():
    argv = ["--policies", "tlp,random", "--trace", "t.csv", "--scenarios", "base", "--workloads", "batch",
            "--loads", "0.7", "--seeds", "3", "--seed-base", "7", "--jobs", "11", "--served", "--mapping", "band:0.1",
            "--hot-filter", "strict", "--contention", "fitted-lab", "--workers", "2", "--out", "o", "--no-plots",
            "--quick", "-q"]
    want = dict(policies="tlp,random", trace="t.csv", scenarios="base", workloads="batch", loads="0.7", seeds=3,
                seed_base=7, jobs=11, served=DEFAULT_WEIGHT, mapping=ScoreMapping.parse("band:0.1"),
                hot_filter="strict", contention="fitted-lab", workers=2, out=Path("o"), no_plots=True, quick=True,
                quiet=True)
    assert _values(evaluate_args(argv), **want) == want
    assert evaluate_args(["--served", "3", "--quiet"]).served == 3.0
    assert evaluate_args(["--quiet"]).quiet is True


@pytest.mark.parametrize("argv", [["--split", "moon"], ["--hot-filter", "hottest"], ["--mapping", "cubic"],
                                  ["--seeds", "two"], ["--split", "test", "--workloads", "drs"]])
def test_evaluate_refuses_bad_flags_as_usage_errors(argv):
    with pytest.raises(SystemExit) as exc:
        evaluate_args(argv)
    assert exc.value.code == 2


def test_calibrate_defaults_and_spellings():
    common = dict(results=Path("r"), out=Path("results/policy/calibration"), calibration=calibration.DEFAULT_PATH,
                  disk_mbps=DISK_MBPS, host_cpu_m="none", cpu_bound="", ignore_links=False, no_plot=False)
    replay = calibrate_args(["replay", "--results", "r"])
    assert _values(replay, **common, set=None) == {**common, "set": None}
    fit = dict(fit_seeds=None, grid=[], name="fitted", write=False, write_host=None)
    assert _values(calibrate_args(["fit", "--results", "r"]), **common, **fit) == {**common, **fit}
    argv = ["fit", "--results", "r", "--out", "o", "--calibration", "c.yaml", "--disk-mbps", "90", "--host-cpu-m",
            "held,none", "--cpu-bound", "cpu,train", "--ignore-links", "--no-plot", "--fit-seeds", "1-3", "--grid",
            "interference=0", "--grid", "cpu_share=rate", "--name", "lab", "--write", "--write-host", "box"]
    want = dict(results=Path("r"), out=Path("o"), calibration=Path("c.yaml"), disk_mbps=90.0, host_cpu_m="held,none",
                cpu_bound="cpu,train", ignore_links=True, no_plot=True, fit_seeds="1-3",
                grid=["interference=0", "cpu_share=rate"], name="lab", write=True, write_host="box")
    assert _values(calibrate_args(argv), **want) == want
    assert calibrate_args(["replay", "--results", "r", "--set", "a,b"]).set == "a,b"


@pytest.mark.parametrize("argv", [["replay"], ["fit"], [], ["replay", "--results", "r", "--write"],
                                  ["fit", "--results", "r", "--set", "a"]])
def test_calibrate_refuses_missing_and_foreign_flags(argv):
    with pytest.raises(SystemExit) as exc:
        calibrate_args(argv)
    assert exc.value.code == 2


def _migration_args(argv):
    return evaluate_args(["migration", *argv])


def test_migration_defaults_and_spellings():
    from policy.migration_eval import DEFAULT_SCENARIOS, LAB_RULE

    want = dict(scenarios=",".join(DEFAULT_SCENARIOS), arms="none,migration", fault_rule=LAB_RULE, seeds=8,
                seed_base=1000, jobs=150, scorer="demand-aware", workers=1,
                out=Path("out/evaluate"), no_plots=False, quick=False, quiet=False)
    assert _values(_migration_args([]), **want) == want
    assert _values(_migration_args(["--quick"]), seeds=2, jobs=40) == dict(seeds=2, jobs=40)
    argv = ["--scenarios", "calm", "--seeds", "3", "--seed-base", "5", "--jobs", "9", "--scorer", "tlp", "--workers",
            "2", "--out", "o", "--no-plots", "--quick", "-q", "--arms", "none,taint", "--fault-rule", "seed"]
    want = dict(scenarios="calm", arms="none,taint", fault_rule="seed", seeds=3, seed_base=5, jobs=9, scorer="tlp",
                workers=2, out=Path("o"),
                no_plots=True, quick=True, quiet=True)
    assert _values(_migration_args(argv), **want) == want


def test_the_old_migration_flag_is_refused_with_one_line_naming_the_subcommand(capsys):
    with pytest.raises(SystemExit) as exc:
        evaluate_args(["--migration", "--quick"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "python -m policy.evaluate migration" in err


def test_migration_flags_belong_to_the_subcommand():
    from policy.evaluate import EvaluateArgs
    from policy.migration_eval import MigrationArgs

    assert isinstance(evaluate_args(["--quick"]), EvaluateArgs)
    assert isinstance(evaluate_args(["migration", "--quick"]), MigrationArgs)
    with pytest.raises(SystemExit):
        evaluate_args(["migration", "--split", "test"])  # an evaluation flag, not the migration evaluation's


@pytest.mark.parametrize("argv", [["--help"], ["migration", "--help"], ["replay", "--help"], ["fit", "--help"]])
def test_help_describes_every_flag(argv, capsys, monkeypatch):
    from policy.calibrate.__main__ import FitArgs, ReplayArgs
    from policy.cli import field_docs
    from policy.evaluate import EvaluateArgs
    from policy.migration_eval import MigrationArgs

    cls = {"--help": EvaluateArgs, "migration": MigrationArgs, "replay": ReplayArgs, "fit": FitArgs}[argv[0]]
    parse = calibrate_args if cls in (ReplayArgs, FitArgs) else evaluate_args
    monkeypatch.setenv("COLUMNS", "10000")  # one line per flag: no docstring broken at a hyphen
    with pytest.raises(SystemExit) as exc:
        parse(argv)
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for name, doc in field_docs(cls).items():
        flag = "-q, --quiet" if name == "quiet" else "--" + name.replace("_", "-")
        assert flag in text, flag
        assert " ".join(doc.split()).split("{")[0].replace("%%", "%") in text, name
