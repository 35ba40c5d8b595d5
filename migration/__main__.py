"""``python -m migration``: flags generated from ``Settings`` (``--help`` lists every option), then the loop.

Precedence: defaults < ``DRSCHED_MIGRATION_*`` env vars < flags. Exit 2 with one line for a bad option;
exit 1 when leadership is lost (the Deployment restarts the process as a follower); 0 on SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

from kube.config import add_settings_flags
from kube.errors import ConfigError
from kube.logs import kv
from migration.settings import Settings, build_settings

log = logging.getLogger("migration")  # not __name__: under ``python -m`` that is "__main__"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m migration",
        description="drsched speculative migration controller: moves slow, checkpointed pods (label "
                    "drsched.io/migrate=true) to better nodes, one step at a time, resumable after a crash.",
        epilog="Every option is also an env var DRSCHED_MIGRATION_<NAME>. See migration/README.md.")
    add_settings_flags(parser, Settings, computed={"identity": "$POD_NAME or hostname"})
    return parser


def main(argv: list[str] | None = None) -> int:
    args = vars(build_parser().parse_args(argv))
    try:
        settings = build_settings(**args)
    except ConfigError as exc:
        print(f"migration: {exc}", file=sys.stderr)  # noqa: T201 -- before logging exists
        return 2
    from kube.logs import setup_logging

    setup_logging(level=settings.log_level, fmt=settings.log_format)
    try:
        from migration.app import build_app

        app = build_app(settings)
    except ConfigError as exc:
        log.error("refusing to start", extra=kv(error=str(exc)))
        return 2
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return app.run(stop)


if __name__ == "__main__":
    sys.exit(main())
