"""The logging convention of every drsched process: module loggers, a constant message, key=value fields.

A call site writes ``log.info("bound pod", extra=kv(pod="ns/p", node="n1"))``: the message stays constant
(so it can be counted and searched), the fields ride on the record. ``setup_logging`` installs one handler
on the root logger when a process starts (never at import): ``JsonFormatter`` writes one JSON object per line
with the fields as keys, ``TextFormatter`` appends `` key=value`` to a classic line.

Standard library only, so the node monitor and the workloads use it without pulling in anything else.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def kv(**fields: Any) -> dict[str, Any]:
    """``extra=`` for a log call: ``log.info("bound pod", extra=kv(pod="ns/p", node="n1"))``."""
    return {"kv": fields}


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """The key=value fields a record carries (empty for a record logged without ``kv``)."""
    return getattr(record, "kv", {}) or {}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {"ts": round(record.created, 3), "level": record.levelname.lower(), "logger": record.name,
               "msg": record.getMessage()}
        out.update(fields_of(record))
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        base = super().format(record)
        return base + "".join(f" {k}={v}" for k, v in fields_of(record).items())


def setup_logging(*, level: str = "INFO", fmt: str = "json") -> None:
    """Configure the root logger once per process (called by ``__main__``, not at import)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
