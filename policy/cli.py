"""Command lines built from dataclasses: each field is the flag of the same name, its attribute docstring the help.

Why it exists: every ``python -m`` entry point (``policy.train``, ``policy.evaluate``, ``policy.calibrate``,
``lab``) declares its options once, as a dataclass whose field defaults are the only place a default is
written and whose field docstrings are the only place a flag is described; this module turns such a class
into argparse arguments and a parsed namespace back into an instance. It owns no state and does no I/O
(it reads the classes' source for their docstrings, as ``inspect`` does).

The annotation gives the flag's kind: ``bool`` defaulting to False is a switch (``--quick``), defaulting to
True a ``--x/--no-x`` pair; ``list[T]`` takes one or more T; ``T | None`` parses T and leaves None meaning
"unset"; a field without a default is a required flag. What an annotation cannot say goes in ``option()``.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import textwrap
import types
import typing
from dataclasses import MISSING, Field, field, fields, is_dataclass
from typing import Any

_KEY = "policy.cli"
_CLASS = "_dataclass"
"""Namespace attribute naming the dataclass a (sub)parser fills, set by ``add_arguments``."""


def option(default: Any = MISSING, *, default_factory: Any = MISSING, positional: bool = False,
           flags: tuple[str, ...] = (), fill: dict[str, str] | None = None, **argparse_kwargs: Any) -> Any:
    """A dataclass field with what its annotation cannot say: ``positional``; ``flags``, the spellings when not
    ``--field-name`` (e.g. ``("-q", "--quiet")``); ``fill``, values for ``{name}`` placeholders of the docstring
    (names listed from a table); and argparse keywords (``choices``, ``metavar``, ``nargs``, ``const``,
    ``action``, a ``type`` that parses the text)."""
    meta = {_KEY: {"positional": positional, "flags": flags, "fill": fill or {}, **argparse_kwargs}}
    return field(default=default, default_factory=default_factory, metadata=meta)


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of dataclass ``cls`` and of the dataclasses it extends."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not is_dataclass(klass):
            continue
        body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0].body
        for node, nxt in zip(body, body[1:], strict=False):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(nxt, ast.Expr)
                    and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)):
                docs[node.target.id] = nxt.value.value
    return docs


def add_arguments(parser: argparse.ArgumentParser, cls: type, defaults: Any = None) -> argparse.ArgumentParser:
    """Add one argument per field of ``cls`` to ``parser``, defaults from ``defaults`` (an instance) when given,
    else the fields' own; ``from_namespace`` then builds the instance. A field without a docstring is a
    ``TypeError``: every flag is described."""
    docs = field_docs(cls)
    hints = typing.get_type_hints(cls)
    for f in fields(cls):
        if f.name not in docs:
            raise TypeError(f"{cls.__name__}.{f.name}: no docstring, so no --help text")
        parser.add_argument(*_names(f), **_kwargs(f, hints[f.name], docs[f.name], _default(f, defaults)))
    parser.set_defaults(**{_CLASS: cls})
    return parser


def command_parser(module: str, doc: str, cls: type) -> argparse.ArgumentParser:
    """``python -m <module>``'s parser from its docstring (``"<title>: <description>"``, a blank line, then the
    epilog) and the flags of the dataclass ``cls``."""
    p = argparse.ArgumentParser(prog=f"python -m {module}", epilog=doc.split("\n\n", 1)[1],
                                description=doc.split("\n\n")[0].split(": ", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    return add_arguments(p, cls)


def from_namespace(ns: argparse.Namespace, cls: type | None = None) -> Any:
    """The dataclass instance a parsed namespace holds (``cls``, else the one its (sub)parser was built from);
    the namespace itself when it was not built from one (a subcommand still on plain argparse)."""
    cls = cls or getattr(ns, _CLASS, None)
    if cls is None:
        return ns
    return cls(**{f.name: getattr(ns, f.name) for f in fields(cls)})


def flag(cls: type, name: str) -> str:
    """How field ``name`` of ``cls`` is spelled on the command line (its last spelling: ``--quiet``, not ``-q``),
    for messages that name a flag."""
    return _names(next(f for f in fields(cls) if f.name == name))[-1]


def _default(f: Field, defaults: Any) -> Any:
    if defaults is not None:
        return getattr(defaults, f.name)
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


def _names(f: Field) -> tuple[str, ...]:
    meta = f.metadata.get(_KEY, {})
    if meta.get("positional"):
        return (f.name,)
    return tuple(meta.get("flags") or ("--" + f.name.replace("_", "-"),))


def _kwargs(f: Field, hint: Any, doc: str, default: Any) -> dict:
    meta = {k: v for k, v in f.metadata.get(_KEY, {}).items() if k not in ("positional", "flags", "fill")}
    fill = f.metadata.get(_KEY, {}).get("fill")
    text = (doc.format(**fill) if fill else doc).replace("%", "%%")
    base = _unwrap(hint)
    kw: dict[str, Any] = {}
    if base is bool and "action" not in meta:
        kw["action"] = argparse.BooleanOptionalAction if default is True else "store_true"
    elif typing.get_origin(base) is list and "type" not in meta and "action" not in meta:
        kw.update(nargs="+", type=typing.get_args(base)[0])
    elif "action" not in meta or meta["action"] == "append":
        kw["type"] = typing.get_args(base)[0] if typing.get_origin(base) is list else base
    kw.update(meta)
    positional = f.metadata.get(_KEY, {}).get("positional")
    if not positional:
        kw["dest"] = f.name  # the field, however the flag is spelled (--no-isolate)
    if default is MISSING:
        if not positional:
            kw["required"] = True
    else:
        kw["default"] = default
        if default is not None and not isinstance(default, bool) and not (isinstance(default, list) and not default):
            shown = ",".join(map(str, default)) if isinstance(default, list) and "type" in meta else "%(default)s"
            text += f" (default: {shown})"
    kw["help"] = text
    return kw


def _unwrap(hint: Any) -> Any:
    """``T`` of ``T``, ``T | None`` and ``Optional[T]``: None is the field's "unset", never parsed."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return hint
