"""Helpers every test suite shares: the repository root, a free loopback port, and polling with a deadline.

Why it exists: the integration and e2e suites start real processes and wait for them; each suite used to
carry its own port picker and polling loop. One ``wait_for`` keeps the failure message the same everywhere:
what was awaited, for how long, the last value seen and, when given, the state to debug from.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from harness.procs import free_port

__all__ = ["REPO", "deadline", "free_port", "wait_for"]

REPO = Path(__file__).resolve().parents[1]
T = TypeVar("T")


def deadline(seconds: float) -> float:
    """``seconds`` stretched by how busy this machine is measured to be right now: the 1-minute load average per
    CPU, when above 1 (at most 5x). A deadline is not a performance claim -- a healthy wait returns as soon as
    its condition holds -- so on a machine running other work (a CPU burner, a second test suite, a cold Go
    build) a wait gets the time that work takes from it instead of failing for it."""
    try:
        busy = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        busy = 1.0
    return seconds * min(5.0, max(1.0, busy))


def wait_for(check: Callable[[], T], *, timeout: float, what: str, every: float = 0.1,
             ignore: tuple[type[Exception], ...] = (), on_timeout: Callable[[], object] | None = None) -> T:
    """Call ``check`` every ``every`` seconds until it returns something truthy, and return that.

    ``ignore``: exceptions that count as "not yet" (a server still starting refuses connections). After
    ``timeout`` seconds, stretched by ``deadline`` on a busy machine, raise ``TimeoutError`` naming ``what``,
    the last value and ``on_timeout()``.
    """
    timeout = deadline(timeout)
    until = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            last = check()
        except ignore as exc:
            last = exc
        else:
            if last:
                return last
        if time.monotonic() >= until:
            break
        time.sleep(every)
    extra = ""
    if on_timeout is not None:
        try:
            extra = f"\n{on_timeout()}"
        except (OSError, ValueError) as exc:
            extra = f"\nstate unavailable: {exc!r}"
    raise TimeoutError(f"timed out after {timeout:g}s waiting for {what}; last value: {last!r}{extra}")
