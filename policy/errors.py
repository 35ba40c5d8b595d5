"""The one configuration error of drsched: its shape, defined once, for every layer.

A ``ConfigError`` is bad input, not a bug: it names the offending ``field`` (or None when the message already
says where) so a CLI can print one line (``field: message``) and exit 2. ``policy.sim``, ``policy.env`` and
``policy.migrate`` raise it directly; ``kube.errors.ConfigError`` (extender, migration controller) is a
subclass, so one ``except ConfigError`` in a CLI catches every layer's. The monitor, which runs standalone in
its own image without ``policy``, keeps the same shape in ``monitor.errors``.

Why pickling matters: ``policy.evaluate`` runs episodes in worker processes, and an error raised there must
reach the parent as itself. Python pickles an exception as ``cls(*self.args)``, which breaks any subclass
whose ``__init__`` takes other arguments than its message (it then surfaces as ``BrokenProcessPool`` and a
40-line traceback). ``__reduce__`` here rebuilds the exception from its args and attributes instead, for
this class and every subclass, whatever their signatures.
"""

from __future__ import annotations

from typing import Any


def _rebuild(cls: type[BaseException], args: tuple, state: dict[str, Any]) -> BaseException:
    exc = cls.__new__(cls)
    BaseException.__init__(exc, *args)
    exc.__dict__.update(state)
    return exc


class PicklableError(Exception):
    """Mixin base: pickles by args and attributes, not by re-calling ``__init__`` (module docstring)."""

    def __reduce__(self):
        return _rebuild, (type(self), self.args, dict(self.__dict__))


class ConfigError(PicklableError, ValueError):
    """A configuration value is impossible (unknown name, non-positive capacity, bad range, unreadable file).

    Attributes:
        field: the name of the offending configuration field, or None when ``message`` says it.
        message: what is wrong, without the field.
    """

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message
