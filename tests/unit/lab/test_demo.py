"""``python -m lab demo --kwok`` runs the KWOK demo in this process: ``lab.kwokdemo.demo.main`` gets the arguments
after ``--`` and its exit code is the command's, and no child process runs a script."""

from __future__ import annotations

import subprocess

import pytest

import lab.kwokdemo.demo
from lab.cli import main


@pytest.fixture
def no_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError(f"lab demo --kwok started a process: {args}")

    for name in ("Popen", "call", "run", "check_call"):
        monkeypatch.setattr(subprocess, name, refuse)


def test_kwok_calls_the_demo_module_with_the_arguments_after_the_separator(monkeypatch, no_subprocess) -> None:
    calls: list[list[str]] = []

    def fake_main(argv: list[str]) -> int:
        calls.append(argv)
        return 7

    monkeypatch.setattr(lab.kwokdemo.demo, "main", fake_main)
    assert main(["demo", "--kwok", "--", "--nodes", "4", "--pods", "8"]) == 7
    assert calls == [["--nodes", "4", "--pods", "8"]]


def test_kwok_help_is_the_demo_s_own(no_subprocess, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--kwok", "--", "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0 and out.startswith("usage: python -m lab demo --kwok --")
    for flag in ("--nodes", "--pods", "--keep-running", "--policy", "--out", "--submit-seconds", "--run-for"):
        assert flag in out


def test_kwok_refuses_bad_numbers_before_starting_anything(no_subprocess, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--kwok", "--", "--nodes", "0"])
    assert exc.value.code == 2 and "must be positive" in capsys.readouterr().err


# ---- the real-node demo: a short version of the headline protocol ----------------------------------------------

def test_the_demo_runs_the_headline_scenario_at_its_arrival_rate(tmp_path) -> None:
    from lab.demo import HEADLINE, demo_plan
    from lab.protocol import load_protocol

    headline = load_protocol(HEADLINE)
    s = headline.scenario
    plan = demo_plan(headline, out=tmp_path, seed=3, jobs=8, scale=None, isolate=True)
    assert (plan.world, plan.variant, plan.regime, plan.shape, plan.scale) == (
        s.world, s.variant, s.regime, s.job_shape, s.scale)
    assert plan.world == "multi-resource" and plan.arms == ["default", "model"] and plan.seeds == [3]
    assert plan.jobs / plan.window_s == pytest.approx(s.jobs / s.window_s)  # the headline's arrival rate
    assert demo_plan(headline, out=tmp_path, seed=1, jobs=8, scale=0.5, isolate=False).scale == 0.5


def test_one_seed_range_is_the_aa_pilot_s_95_percent_band() -> None:
    from lab.demo import one_seed_range

    lo, hi = one_seed_range(0.180)
    assert lo == pytest.approx(0.7027, abs=1e-4) and hi == pytest.approx(1.4231, abs=1e-4)
    assert lo * hi == pytest.approx(1.0) and one_seed_range(0.0) == (1.0, 1.0)


def test_the_demo_says_what_one_seed_cannot_tell_from_the_protocol_s_own_pilot() -> None:
    from lab.demo import HEADLINE, what_one_seed_tells
    from lab.protocol import load_protocol

    text = what_one_seed_tells(load_protocol(HEADLINE), jobs=8)
    assert "between 0.70 and 1.42" in text and "0.180" in text
    assert "lab/protocols/multi-resource.yaml" in text and "(16 seeds)" in text


def test_demo_refuses_zero_jobs_before_starting_anything(no_subprocess, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--jobs", "0"])
    assert exc.value.code == 2 and "must be at least 1" in capsys.readouterr().err
