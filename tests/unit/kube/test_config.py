"""Settings -> flags: every field a flag, types and choices from the annotation, None when not given."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from kube.config import add_settings_flags, problems


class Opts(BaseModel):
    model_path: Path | None = Field(None, description="A path.")
    rate: float = Field(1.5, gt=0, description="A rate.")
    count: int | None = Field(None, description="A count.")
    mode: Literal["a", "b"] = Field("a", description="A mode.")
    provider: Literal["x", "y"] | None = Field(None, description="Maybe a provider.")
    dry_run: bool = Field(False, description="A switch.")
    who: str = Field(default_factory=lambda: "host", description="Computed.")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="t")
    add_settings_flags(p, Opts, computed={"who": "the hostname"})
    return p


def test_flags_parse_to_typed_values_and_absent_flags_are_none():
    args = vars(parser().parse_args(["--model-path", "m.npz", "--rate", "2", "--count", "3", "--mode", "b",
                                     "--provider", "y", "--dry-run"]))
    assert args == {"model_path": Path("m.npz"), "rate": 2.0, "count": 3, "mode": "b", "provider": "y",
                    "dry_run": True, "who": None}
    assert set(vars(parser().parse_args([])).values()) == {None}
    assert vars(parser().parse_args(["--no-dry-run"]))["dry_run"] is False


@pytest.mark.parametrize("argv, expected", [
    (["--dry-run"], True), (["--dry-run", "true"], True), (["--dry-run=false"], False), (["--dry-run", "No"], False),
    (["--dry-run", "1"], True), (["--no-dry-run"], False),
])
def test_a_bool_flag_takes_a_bare_switch_a_value_or_no(argv, expected):
    assert vars(parser().parse_args(argv))["dry_run"] is expected


@pytest.mark.parametrize("argv", [["--mode", "c"], ["--provider", "z"], ["--rate", "fast"], ["--dry-run", "maybe"]])
def test_bad_values_are_refused_by_the_parser(argv):
    with pytest.raises(SystemExit):
        parser().parse_args(argv)


def test_help_lists_description_and_default():
    text = parser().format_help()
    assert "A rate. [default: 1.5]" in text and "Computed. [default: the hostname]" in text


def test_problems_is_one_line_naming_each_field():
    with pytest.raises(ValidationError) as err:
        Opts(rate=0, mode="c")
    line = problems(err.value)
    assert "\n" not in line and line.startswith("rate: ") and "; mode: " in line
