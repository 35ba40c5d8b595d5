"""Typed errors of the node monitor.

The type says what happens next: a ``ConfigError`` stops the process at start (bad
flags or environment); a ``SourceUnavailable`` is one failed read of one source in one
sample -- the sampler logs it, counts it and carries on with the other sources.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def _rebuild(cls: type[BaseException], args: tuple, state: dict) -> BaseException:
    exc = cls.__new__(cls)
    BaseException.__init__(exc, *args)
    exc.__dict__.update(state)
    return exc


class MonitorError(Exception):
    """Base class of every error the monitor raises on purpose; pickles by args and attributes, as
    ``policy.errors.PicklableError`` does (the monitor's image carries no ``policy``, so the shape is kept here)."""

    def __reduce__(self):
        return _rebuild, (type(self), self.args, dict(self.__dict__))


class ConfigError(MonitorError):
    """The configuration is invalid; the agent refuses to start. ``ConfigError(field, message)``: the shape of
    ``policy.errors.ConfigError``."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


class SourceUnavailable(MonitorError):
    """A host source (a /proc file, a cgroup file) could not be read or parsed this sample.

    ``source`` names the source (``proc_stat``, ``meminfo``, ``net_dev``, ``diskstats``,
    ``cgroup``) so the sampler can count failures per source.
    """

    def __init__(self, source: str, detail: str) -> None:
        super().__init__(f"{source}: {detail}")
        self.source = source
        self.detail = detail


def attempt(errors: list[SourceUnavailable], fn: Callable[[], T]) -> T | None:
    """``fn()``, or None when its source is unavailable this sample (the error is appended to ``errors``), so one
    unreadable file costs its own figure and not the whole sample."""
    try:
        return fn()
    except SourceUnavailable as exc:
        errors.append(exc)
        return None

