"""Experiment tooling: seeded schedules, placements, pinning, and the CLI offline."""

from __future__ import annotations

import subprocess
import sys

import pytest

from migration.experiment.__main__ import main
from migration.experiment.plan import (
    ExperimentError,
    initial_nodes,
    make_schedule,
    parse_schedule,
    pinned,
    placements,
    placements_csv,
    schedule_csv,
)

from ..fakes import pod


def test_schedule_is_seeded_increasing_and_round_trips():
    a = make_schedule(jobs=[f"j{i}" for i in range(20)], seed=3, mean_gap_s=10)
    assert a == make_schedule(jobs=[f"j{i}" for i in range(20)], seed=3, mean_gap_s=10)
    assert a != make_schedule(jobs=[f"j{i}" for i in range(20)], seed=4, mean_gap_s=10)
    offsets = [s.offset_s for s in a]
    assert all(b > x for x, b in zip(offsets, offsets[1:], strict=False))
    assert 50 < offsets[-1] < 500
    assert parse_schedule(schedule_csv(a)) == a
    with pytest.raises(ExperimentError):
        make_schedule(jobs=["a"], seed=0, mean_gap_s=0)
    with pytest.raises(ExperimentError, match=":2:"):
        parse_schedule("offset_s,job\nsoon,j1\n", path="s.csv")


def test_placements_group_successors_under_their_job_and_replay_pins_the_originals():
    pods = [pod("j1", node="n1"), pod("j2-m1", node="n3", labels={"drsched.io/job": "j2"}), pod("j2", node="n2")]
    rows = placements(pods)
    assert [(r["job"], r["pod"], r["node"]) for r in rows] == [("j1", "j1", "n1"), ("j2", "j2", "n2"),
                                                               ("j2", "j2-m1", "n3")]
    assert initial_nodes(placements_csv(rows)) == {"j1": "n1", "j2": "n2"}
    template = {"kind": "Pod", "metadata": {"name": "j1"}, "spec": {"containers": []}}
    assert pinned(template, "n1")["spec"]["nodeName"] == "n1" and "nodeName" not in template["spec"]


def test_cli_schedule_from_templates(tmp_path, capsys):
    (tmp_path / "b.yaml").write_text("kind: Pod\nspec: {containers: []}\n")
    (tmp_path / "a.yaml").write_text("kind: Pod\nspec: {containers: []}\n")
    assert main(["schedule", "--templates", str(tmp_path), "--seed", "1", "--mean-gap-s", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "offset_s,job" and [line.split(",")[1] for line in lines[1:]] == ["a", "b"]
    (tmp_path / "bad.yaml").write_text("kind: Deployment\n")
    assert main(["schedule", "--templates", str(tmp_path)]) == 2


def test_help_of_every_subcommand():
    for sub in ("", "schedule", "submit", "record", "replay"):
        out = subprocess.run([sys.executable, "-m", "migration.experiment", *([sub] if sub else []), "--help"],
                             capture_output=True, text=True, check=True).stdout
        assert "usage:" in out
