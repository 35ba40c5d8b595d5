"""``policy.cli``: a dataclass's fields become flags with its defaults and docstrings, and parse back into it."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import pytest

from policy.cli import add_arguments, field_docs, flag, from_namespace, option


@dataclass(kw_only=True)
class Base:
    out: Path
    """where results go"""
    jobs: int = 12
    """jobs per run"""


@dataclass(kw_only=True)
class Example(Base):
    quick: bool = False
    """smoke run"""
    progress: bool = True
    """a progress bar"""
    layers: list[int] = option(default_factory=lambda: [64, 64])
    """hidden layers"""
    seeds: int | None = None
    """seeds (unset: per mode)"""
    mode: str = option("a", choices=("a", "b"), fill={"names": "a, b"})
    """one of {names}, 50 % of the time"""
    quiet: bool = option(False, flags=("-q", "--quiet"))
    """no output"""
    name: str = option(positional=True)
    """a positional"""


def _parse(argv, cls=Example):
    return from_namespace(add_arguments(argparse.ArgumentParser(), cls).parse_args(argv))


def test_parsing_nothing_gives_the_dataclass_defaults():
    assert _parse(["x", "--out", "o"]) == Example(out=Path("o"), name="x")


def test_each_annotation_gives_its_flag_kind():
    got = _parse(["x", "--out", "o", "--jobs", "3", "--quick", "--no-progress", "--layers", "8", "4", "--seeds", "2",
                  "--mode", "b", "-q"])
    assert got == Example(out=Path("o"), jobs=3, quick=True, progress=False, layers=[8, 4], seeds=2, mode="b",
                          quiet=True, name="x")
    assert isinstance(got.out, Path)


@pytest.mark.parametrize("argv", [["x"], ["x", "--out", "o", "--mode", "c"], ["x", "--out", "o", "--jobs", "many"],
                                  ["--out", "o"]])
def test_bad_or_missing_values_are_usage_errors(argv):
    with pytest.raises(SystemExit) as exc:
        _parse(argv)
    assert exc.value.code == 2


def test_help_shows_each_docstring_and_each_default_once():
    text = " ".join(add_arguments(argparse.ArgumentParser(), Example).format_help().split())
    assert "jobs per run (default: 12)" in text and "hidden layers (default: [64, 64])" in text
    assert "one of a, b, 50 % of the time (default: a)" in text
    assert "seeds (unset: per mode)" in text and "(default: None)" not in text
    assert "--quiet" in text and "--no-progress" in text


def test_docs_include_the_inherited_fields():
    assert field_docs(Example) == {"out": "where results go", "jobs": "jobs per run", "quick": "smoke run",
                                   "progress": "a progress bar", "layers": "hidden layers",
                                   "seeds": "seeds (unset: per mode)", "mode": "one of {names}, 50 % of the time",
                                   "quiet": "no output", "name": "a positional"}


def test_a_field_without_a_docstring_is_refused():
    @dataclass
    class Undocumented:
        steps: int = 1

    with pytest.raises(TypeError, match="Undocumented.steps: no docstring"):
        add_arguments(argparse.ArgumentParser(), Undocumented)


def test_other_defaults_override_the_fields():
    p = add_arguments(argparse.ArgumentParser(), Base, Base(out=Path("d"), jobs=5))
    assert from_namespace(p.parse_args([])) == Base(out=Path("d"), jobs=5)


def test_a_namespace_not_built_from_a_dataclass_comes_back_as_it_is():
    ns = argparse.Namespace(kwok=True)
    assert from_namespace(ns) is ns


def test_a_flag_is_named_as_it_is_spelled():
    assert (flag(Example, "jobs"), flag(Example, "quiet"), flag(Example, "name")) == ("--jobs", "--quiet", "name")
