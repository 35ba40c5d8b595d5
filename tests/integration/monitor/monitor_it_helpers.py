"""Helpers shared by the monitor integration tests (a module, since tests must not import conftest)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

INTERVAL = 0.2


def poll(check: Callable[[], Any], *, timeout: float, every: float = INTERVAL, what: str = "condition") -> Any:
    """Call ``check`` until it returns something truthy; fail with the last value after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    pytest.fail(f"timed out after {timeout}s waiting for {what}; last value: {last!r}")


def window_sum(report: dict[str, Any], series: str) -> float:
    """Total over the window (mean x filled samples x interval): bytes for a bytes/s series.

    While the window has not slid (filled < samples) this is the total since the agent started.
    """
    stat = report["node"][series]
    filled = report["window"]["filled"]
    if stat["mean"] is None:
        return 0.0
    # the first sample has no rate, so filled counts it for memory but rates have one value fewer
    return stat["mean"] * max(filled - 1, 1) * report["interval_seconds"]
