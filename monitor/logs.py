"""Warn-once for conditions that persist across samples, on top of the shared logging convention.

A missing interface or an unreadable cgroup stays missing every second; logging it every
sample would bury everything else. ``OnceLogger`` logs a condition the first time it is
seen and logs again (at INFO) when it clears, so the log shows when it started and ended.
Lines follow ``kube.logs``: a constant message, the condition's ``key`` and details as fields.
"""

from __future__ import annotations

import logging
from typing import Any

from kube.logs import kv


class OnceLogger:
    """Warn once per condition key; note when a condition clears."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger
        self._active: set[str] = set()

    def warn(self, key: str, message: str, **fields: Any) -> None:
        if key in self._active:
            return
        self._active.add(key)
        self._logger.warning(message, extra=kv(key=key, **fields))

    def clear(self, key: str) -> None:
        if key in self._active:
            self._active.discard(key)
            self._logger.info("condition cleared", extra=kv(key=key))

    def clear_prefix(self, prefix: str, keep: set[str]) -> None:
        """Clear every active key under ``prefix`` that is not in ``keep``."""
        for key in [k for k in self._active if k.startswith(prefix) and k not in keep]:
            self.clear(key)
