"""`python -m lab`'s subcommand flags: each spelling's value and each default, pinned so the parser can change
shape but not meaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.cli import CompareArgs, ReportArgs, RunArgs, ScheduleArgs, parse_args, plan_from_args
from lab.schedule import make_schedule
from policy.cli import field_docs
from policy.labworld import WORLDS


def _parse(argv):
    return parse_args(argv)


def _values(args, **expected) -> dict:
    return {name: getattr(args, name) for name in expected}


SCHEDULE = dict(jobs=12, window_s=60.0, scale=None, variant="under", job_shape="core", straggler=False)
"""``scale`` None: the world's (``test_a_flagless_run_takes_its_worlds_scale``)."""


def test_run_defaults():
    want = dict(out=Path("o"), seeds=[1, 2, 3, 4, 5], arms=["default", "model", "demand-aware", "migration"],
                **SCHEDULE, arm_timeout_s=600.0, straggler_node="rn-large", straggler_at_s=20.0,
                straggler_quota_m=200, protocol=None, unregistered=False, isolate=True)
    assert _values(_parse(["run", "--out", "o"]), **want) == want


def test_run_spellings():
    argv = ["run", "--out", "o", "--seeds", "3,1", "--arms", "model,default#2,model", "--jobs", "4", "--window-s",
            "30", "--scale", "2", "--variant", "honest", "--job-shape", "fraction", "--straggler", "--arm-timeout-s",
            "99", "--straggler-node", "rn-small", "--straggler-at-s", "5", "--straggler-quota-m", "300", "--protocol",
            "p.yaml", "--unregistered", "--no-isolate"]
    want = dict(out=Path("o"), seeds=[3, 1], arms=["model", "default#2"], jobs=4, window_s=30.0, scale=2.0,
                variant="honest", job_shape="fraction", straggler=True, arm_timeout_s=99.0, straggler_node="rn-small",
                straggler_at_s=5.0, straggler_quota_m=300, protocol=Path("p.yaml"), unregistered=True, isolate=False)
    assert _values(_parse(argv), **want) == want


def test_schedule_report_compare():
    assert _values(_parse(["schedule"]), seed=1, check=None, **SCHEDULE) == dict(seed=1, check=None, **SCHEDULE)
    got = _parse(["schedule", "--seed", "4", "--jobs", "3", "--straggler", "--check", "s.csv"])
    assert _values(got, seed=4, jobs=3, straggler=True, check=Path("s.csv")) == dict(
        seed=4, jobs=3, straggler=True, check=Path("s.csv"))
    assert _values(_parse(["report", "d"]), out=Path("d"), protocol=None) == dict(out=Path("d"), protocol=None)
    assert _parse(["report", "d", "--protocol", "p.yaml"]).protocol == Path("p.yaml")
    assert _values(_parse(["compare", "a", "b"]), reference=Path("a"), rerun=Path("b"), write=None) == dict(
        reference=Path("a"), rerun=Path("b"), write=None)
    assert _parse(["compare", "a", "b", "--write", "m.md"]).write == Path("m.md")


def test_each_subcommand_parses_into_its_dataclass():
    assert type(_parse(["run", "--out", "o"])) is RunArgs
    assert _parse(["run", "--out", "o"]) == RunArgs(out=Path("o"))
    assert _parse(["report", "d"]) == ReportArgs(out=Path("d"))
    assert _parse(["compare", "a", "b"]) == CompareArgs(reference=Path("a"), rerun=Path("b"))
    assert _parse(["schedule"]) == ScheduleArgs()
    assert _parse(["demo", "--no-isolate"]).isolate is False  # demo stays on plain argparse


@pytest.mark.parametrize("cls", [RunArgs, ReportArgs, CompareArgs, ScheduleArgs])
def test_help_describes_every_flag(cls, capsys, monkeypatch):
    name = cls.__doc__.split("`")[2]
    monkeypatch.setenv("COLUMNS", "10000")
    with pytest.raises(SystemExit) as exc:
        _parse([name, "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for field, doc in field_docs(cls).items():
        assert " ".join(doc.split()).split("{")[0] in text, field


@pytest.mark.parametrize(("world", "scale"), [("drs", 0.5), ("multi-resource", 1.0)])
def test_a_flagless_run_takes_its_worlds_scale(world, scale):
    """The work factor is written once, as ``World.scale``: a run or a schedule without --scale draws the
    world's (the drs world's jobs at half size, as its protocols and the demo run them), --scale overrides it."""
    assert plan_from_args(_parse(["run", "--out", "o", "--world", world])).scale == scale
    assert plan_from_args(_parse(["run", "--out", "o", "--world", world, "--scale", "2"])).scale == 2.0
    halved = make_schedule(seed=3, jobs=6, scale=scale, world=WORLDS[world])
    assert make_schedule(seed=3, jobs=6, world=WORLDS[world]) == halved
    assert make_schedule(seed=3, jobs=6, scale=2 * scale, world=WORLDS[world]) != halved
