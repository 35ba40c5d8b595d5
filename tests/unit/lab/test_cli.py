"""`python -m lab`: --help everywhere, and bad input answered with where it is wrong, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.cli import main
from lab.schedule import make_schedule, schedule_csv


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["report", "--help"], ["schedule", "--help"],
                                  ["compare", "--help"], ["demo", "--help"]])
def test_help(argv, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0 and "usage: python -m lab" in capsys.readouterr().out


def test_schedule_prints_the_seeded_schedule_and_checks_a_file(tmp_path: Path, capsys) -> None:
    assert main(["schedule", "--seed", "3", "--jobs", "4"]) == 0
    assert capsys.readouterr().out == schedule_csv(make_schedule(seed=3, jobs=4))
    bad = tmp_path / "s.csv"
    bad.write_text(schedule_csv(make_schedule(seed=3, jobs=2)).replace("cpu-", "gpu-"))
    assert main(["schedule", "--check", str(bad)]) == 2
    assert f"{bad}:2: field 'template'" in capsys.readouterr().out


def test_report_of_an_empty_directory_says_so(tmp_path: Path, capsys) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "no jobs.csv" in capsys.readouterr().out


def test_bad_arms_and_seeds_are_usage_errors(capsys) -> None:
    for argv in (["run", "--out", "x", "--arms", "default,fastest"], ["run", "--out", "x", "--seeds", "1,a"],
                 ["run", "--out", "x", "--arms", "model@coolest"], ["run", "--out", "x", "--arms", "default@off"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown arm 'fastest'" in err
    assert "'model@coolest': hot-filter mode" in err and "'default@off'" in err


SMOKE = Path(__file__).resolve().parents[3] / "lab" / "protocols" / "ci-smoke.yaml"


def test_a_protocol_sets_the_plan_and_refuses_flags_it_fixes(tmp_path: Path, capsys) -> None:
    from lab.cli import parse_args, plan_from_args

    args = parse_args(["run", "--out", str(tmp_path), "--protocol", str(SMOKE), "--unregistered"])
    plan = plan_from_args(args)
    assert (plan.seeds, plan.arms, plan.jobs, plan.shape, plan.scale, plan.solo_runs, plan.order_key) == (
        [1], ["default", "model"], 16, "fraction", 0.5, 1, "ci-smoke")
    assert plan.arm_timeout_s == 300.0 and plan.registration.startswith("unregistered")
    plain = plan_from_args(parse_args(["run", "--out", str(tmp_path)]))
    assert plain.order_key is None and plain.solo_runs == 1 and plain.protocol is None
    assert main(["run", "--out", str(tmp_path), "--protocol", str(SMOKE), "--seeds", "4", "--jobs", "3",
                 "--unregistered"]) == 2
    assert "the protocol fixes --seeds, --jobs; drop them" in capsys.readouterr().out


def test_an_uncommitted_or_malformed_protocol_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    trial = tmp_path / "trial.yaml"
    trial.write_text(SMOKE.read_text())
    assert main(["run", "--out", str(tmp_path / "out"), "--protocol", str(trial)]) == 2
    assert "not pre-registered" in capsys.readouterr().out
    trial.write_text(SMOKE.read_text().replace("jobs: 16", "jobs: lots"))
    assert main(["run", "--out", str(tmp_path / "out"), "--protocol", str(trial), "--unregistered"]) == 2
    out = capsys.readouterr().out
    assert f"error: {trial}:" in out and "field 'scenario.jobs'" in out and "Traceback" not in out
    assert not (tmp_path / "out").exists()


def test_the_committed_smoke_protocol_counts_as_registered() -> None:
    from lab.cli import registration
    from lab.protocol import ProtocolError

    try:
        found = registration(SMOKE)
    except ProtocolError as exc:  # a checkout without git history (an sdist, a copy) cannot tell
        pytest.skip(f"no git history here: {exc}")
    assert len(found.split()) == 2


def test_report_judges_a_directory_against_a_protocol_given_on_the_command_line(tmp_path: Path, capsys) -> None:
    from tests.unit.lab.test_verdict import _dir

    out = _dir(tmp_path)
    (out / "protocol.yaml").unlink()
    assert main(["report", str(out), "--protocol", str(SMOKE)]) == 0
    assert "## Pre-registered protocol `ci-smoke` (smoke)" in capsys.readouterr().out


def test_no_isolate_reaches_the_plan_and_a_protocol_fixes_it(tmp_path: Path, capsys) -> None:
    from lab.cli import parse_args, plan_from_args

    assert plan_from_args(parse_args(["run", "--out", str(tmp_path)])).isolate is True
    assert plan_from_args(parse_args(["run", "--out", str(tmp_path), "--no-isolate"])).isolate is False
    smoke = plan_from_args(parse_args(["run", "--out", str(tmp_path), "--protocol", str(SMOKE),
                                                      "--unregistered"]))
    assert smoke.isolate is True and smoke.require_scored is True
    assert main(["run", "--out", str(tmp_path), "--protocol", str(SMOKE), "--no-isolate", "--unregistered"]) == 2
    assert "the protocol fixes --no-isolate; drop them" in capsys.readouterr().out
    assert parse_args(["demo", "--no-isolate"]).isolate is False


def test_a_protocol_names_the_straggler_node_and_refuses_the_straggler_flags(tmp_path: Path, capsys) -> None:
    from lab.cli import parse_args, plan_from_args

    text = SMOKE.read_text().replace("  regime: drs", "  regime: straggler\n  straggler_node: seed")
    assert text != SMOKE.read_text()
    trial = tmp_path / "straggler.yaml"
    trial.write_text(text)
    plan = plan_from_args(parse_args(["run", "--out", str(tmp_path / "o"), "--protocol", str(trial),
                                      "--unregistered"]))
    assert (plan.regime, plan.straggler_node) == ("straggler", "seed")
    assert main(["run", "--out", str(tmp_path / "o"), "--protocol", str(trial), "--unregistered",
                 "--straggler-node", "rn-small", "--straggler-quota-m", "100"]) == 2
    assert "the protocol fixes --straggler-node, --straggler-quota-m; drop them" in capsys.readouterr().out
    seeded = plan_from_args(parse_args(["run", "--out", str(tmp_path / "p"), "--straggler", "--straggler-node",
                                        "seed"]))
    assert seeded.straggler_node == "seed"
    assert main(["run", "--out", str(tmp_path / "q"), "--straggler", "--straggler-node", "rn-huge"]) == 2
    assert "--straggler-node: 'rn-huge' is not one of seed, seed-loaded, rn-small" in capsys.readouterr().out
    assert not (tmp_path / "q").exists()
