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
