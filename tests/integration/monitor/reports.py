"""Reading an agent's ``/usage`` report in the monitor integration tests (tests must not import conftest)."""

from __future__ import annotations

from typing import Any

INTERVAL = 0.2
"""Sampling interval (seconds) the tests start agents with."""



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
