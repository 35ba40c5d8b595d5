"""The lab's typed errors; ``python -m lab`` turns each into one line (``error: ...``) and exit code 2.

``LabError`` is the base: a bad schedule file (``schedule.ScheduleError``), a result directory that does not
read (``report.ReportError``), an arm name that does not parse (``arms.ArmError``), or a run that could not go
on (``RunError``: a rollout that did not finish, a solo measurement that failed or timed out). The cluster
underneath raises ``harness.errors.HarnessError``, which the CLI reports the same way. Pure: no imports.
"""

from __future__ import annotations


class LabError(Exception):
    """Base class of every error the lab raises on purpose."""


class RunError(LabError, RuntimeError):
    """An experiment step could not complete (rollout, solo runs); the message names the step and why."""
