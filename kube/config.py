"""What the extender's and the controller's settings share: flags generated from fields, one-line errors.

Each process has one pydantic-settings object; its ``__main__`` turns every field into a flag
(``add_settings_flags``: ``--model-path`` for ``model_path``, its description and default as the help, a
Literal's values as choices, ``--x/--no-x`` for a bool) so ``--help`` lists every option and nothing is
written twice. A flag left out is ``None`` and falls through to env vars and defaults. ``problems`` turns a
``ValidationError`` into the one line a ``ConfigError`` carries.

``DEFAULT_MODEL`` is the shipped DQN artifact both serve when no model path is given.
"""

from __future__ import annotations

import argparse
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from policy.model import SHIPPED_MODEL

DEFAULT_MODEL = SHIPPED_MODEL


def _flag_type(annotation: Any) -> tuple[Any, list | None]:
    """argparse ``type`` and ``choices`` for a field's annotation (``X | None`` reads as ``X``)."""
    base = annotation
    if typing.get_origin(annotation) is not typing.Literal:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        base = args[0] if args else annotation
    if typing.get_origin(base) is typing.Literal:
        return str, list(typing.get_args(base))
    return (base if base in (int, float, str, Path) else str), None


def add_settings_flags(parser: argparse.ArgumentParser, settings_cls: Any, *,
                       computed: Mapping[str, str] | None = None) -> None:
    """One ``--flag`` per field of ``settings_cls`` (default None: not given). ``computed`` names what a
    ``default_factory`` field's default is, for the help text."""
    for name, info in settings_cls.model_fields.items():
        flag = f"--{name.replace('_', '-')}"
        default = (computed or {}).get(name, "computed at start") if info.default_factory else info.default
        helptext = f"{info.description} [default: {default}]"
        if info.annotation is bool:
            # ``--x``, ``--x true|false`` (and ``--x=false``, as manifests write it) or ``--no-x``.
            parser.add_argument(flag, dest=name, nargs="?", const=True, type=parse_bool, default=None,
                                metavar="true|false", help=helptext)
            parser.add_argument(f"--no-{name.replace('_', '-')}", dest=name, action="store_false",
                                help=argparse.SUPPRESS)
            continue
        kind, choices = _flag_type(info.annotation)
        parser.add_argument(flag, dest=name, type=kind, choices=choices, default=None, help=helptext)


def parse_bool(value: str) -> bool:
    """A boolean flag's value: true/false, yes/no, on/off, 1/0 (any case); anything else is a usage error."""
    v = value.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {value!r}")


def problems(exc: Any) -> str:
    """A pydantic ``ValidationError`` as one line: ``field: message; field: message``."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg']}" for e in exc.errors())
