"""What every checkpointable job implements; the runner (``workloads.runner``) drives the rest.

A job is a deterministic function of its arguments, cut into ``units``. The runner calls ``restore``
once (with a verified checkpoint's state, or ``None`` for a fresh start), then ``run_unit(i)`` for each
remaining unit in order, ``snapshot`` whenever a checkpoint is due, and ``finish`` after the last unit.
The job owns its in-memory state and any partial output files; it must make partial output durable in
``snapshot`` *before* returning the state that points at it, so a checkpoint never refers to data
that a crash could lose.
"""

from __future__ import annotations

import abc
import argparse
from pathlib import Path
from typing import Any, ClassVar


class JobError(Exception):
    """The job cannot continue (bad input, unreachable sink, failed verification); it exits 'failed'."""


class StateRejected(Exception):
    """``restore`` cannot use a checkpoint's state (its partial output disagrees); try an older one."""


class Job(abc.ABC):
    kind: ClassVar[str]

    def __init__(self, args: argparse.Namespace, state_dir: Path) -> None:
        self.args = args
        self.state_dir = state_dir
        self.units_total: int = args.units

    @classmethod
    @abc.abstractmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """Add this kind's flags (each with a help text)."""

    def prepare(self) -> None:
        """Create inputs / helpers before anything else (generate the input file, start the sink)."""
        return None

    @abc.abstractmethod
    def config(self) -> dict[str, Any]:
        """The arguments that determine the output; hashed into every checkpoint's fingerprint."""

    @abc.abstractmethod
    def restore(self, state: dict[str, Any] | None, units_done: int) -> None:
        """Load state (``None``: fresh start, reset everything). Raise ``StateRejected`` if it cannot be used."""

    @abc.abstractmethod
    def run_unit(self, index: int) -> None:
        """Do unit ``index`` (0-based, called in order)."""

    @abc.abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """Make the work so far durable and return a JSON-able state for the checkpoint."""

    @abc.abstractmethod
    def finish(self) -> None:
        """Write the final output atomically (its appearance is the commit point of the whole job)."""

    @abc.abstractmethod
    def is_complete(self) -> bool:
        """True when the final output already exists (a rerun then does nothing)."""

    def close(self) -> None:
        """Release sockets, files, helper threads."""
        return None
