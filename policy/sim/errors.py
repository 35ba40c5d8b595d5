"""Typed errors of the simulator, so callers can tell bad input from a bad action.

Every error is a ``ValueError`` subclass (bad values, not bugs) and carries the fields a caller needs to
report it: the config field, the unknown name, or the file, line and field of a bad trace row. A bad
configuration raises the policy layer's one ``ConfigError`` (``policy.errors``), re-exported here. The
module owns no state.
"""

from __future__ import annotations

from policy.errors import ConfigError, PicklableError

__all__ = ["ActionError", "ConfigError", "SimError", "TraceError", "UnknownClassError"]


class SimError(PicklableError, ValueError):
    """Base class of every error raised by ``policy.sim`` (pickles with its fields: evaluate's workers raise it)."""


class UnknownClassError(ConfigError):
    """A job class, node type or workload mix names something the simulator does not define."""

    def __init__(self, field: str, name: str, known) -> None:
        super().__init__(field, f"unknown {field} {name!r}; known: {', '.join(sorted(known))}")
        self.name = name


class TraceError(SimError):
    """A trace row could not be turned into a job.

    Attributes:
        path: the trace file.
        line: 1-based line number in that file (0 when the problem is the whole file).
        field: the column that was bad.
    """

    def __init__(self, path, line: int, field: str, message: str) -> None:
        super().__init__(f"{path}:{line}: field {field!r}: {message}")
        self.path = str(path)
        self.line = line
        self.field = field


class ActionError(SimError):
    """An action the simulator cannot apply now (placing on an infeasible node, no pod pending)."""


class InfeasiblePlacement(ActionError):
    """The chosen node cannot take the pending pod (requests do not fit, pod limit reached, or node down)."""

    def __init__(self, node: int, reason: str) -> None:
        super().__init__(f"node {node}: {reason}")
        self.node = node
        self.reason = reason


class NoPendingPod(ActionError):
    """``place`` or ``defer`` was called with no pod awaiting a decision (call ``next_decision`` first)."""
