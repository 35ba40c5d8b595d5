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
