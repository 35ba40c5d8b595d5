"""A SIGTERM to a command that started a cluster becomes KeyboardInterrupt once, so its teardown runs."""

from __future__ import annotations

import os
import signal

import pytest

from harness.procs import interrupt_on_signals


def test_sigterm_raises_once_then_is_ignored_during_teardown_and_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    torn_down = []
    with pytest.raises(KeyboardInterrupt):
        with interrupt_on_signals(signal.SIGTERM):
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                pytest.fail("SIGTERM did not interrupt")
            finally:
                os.kill(os.getpid(), signal.SIGTERM)  # a second signal while tearing down: ignored
                torn_down.append(True)
    assert torn_down == [True]
    assert signal.getsignal(signal.SIGTERM) is before
