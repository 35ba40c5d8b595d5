"""Entry point: ``python -m monitor --port 9847`` parses flags, builds settings, serves.

Each flag mirrors one ``MonitorSettings`` field and its help text is that field's
description, plus its default and its environment variable. Flags not given fall through
to the environment, then to the defaults. The effective configuration is logged once.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import Any

import uvicorn

from kube.logs import kv, setup_logging
from monitor.errors import ConfigError
from monitor.server import create_app
from monitor.settings import ENV_PREFIX, MonitorSettings, build_settings

log = logging.getLogger("monitor")  # not __name__: under ``python -m`` that is "__main__"

# flag name -> (argparse type, metavar); bool flags take true/false so env and flag read alike.
_FLAGS: dict[str, tuple[Any, str]] = {
    "host": (str, "ADDR"),
    "port": (int, "PORT"),
    "node_name": (str, "NAME"),
    "interval": (float, "SECONDS"),
    "window": (int, "SAMPLES"),
    "ewma_alpha": (float, "ALPHA"),
    "proc_root": (str, "DIR"),
    "cgroup_root": (str, "DIR"),
    "cgroup_parent": (str, "PATH"),
    "cgroup_version": (str, "{auto,1,2}"),
    "interfaces": (str, "IF[,IF...]"),
    "disks": (str, "DEV[,DEV...]"),
    "pod_network": (str, "{true,false}"),
    "node_view": (str, "{host,cgroup}"),
    "node_cgroup": (str, "PATH"),
    "node_net_dev": (str, "DEV[,DEV...]"),
    "log_level": (str, "LEVEL"),
    "pods_token_file": (str, "FILE"),
}


def _help(name: str) -> str:
    info = MonitorSettings.model_fields[name]
    default = "hostname" if name == "node_name" else info.get_default(call_default_factory=True)
    default = "unset" if default is None else default
    if isinstance(default, list):
        default = ",".join(default) or "''"
    env = "NODE_NAME" if name == "node_name" else f"{ENV_PREFIX}{name.upper()}"
    return f"{info.description} Default: {default}. Env: {env}."


def parse_args(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The flags given on the command line, as settings overrides (absent flags are left out)."""
    parser = argparse.ArgumentParser(
        prog="python -m monitor",
        description="drsched node monitor: samples node and per-pod CPU, memory, network and disk usage "
        "and serves GET /usage (JSON), GET /metrics (Prometheus) and GET /healthz.",
        argument_default=argparse.SUPPRESS,
    )
    for name, (kind, metavar) in _FLAGS.items():
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind, metavar=metavar, help=_help(name))
    return vars(parser.parse_args(argv))


def main(argv: Sequence[str] | None = None) -> int:
    overrides = parse_args(argv)
    try:
        settings = build_settings(**overrides)
    except ConfigError as exc:
        setup_logging(level="ERROR", fmt="text")
        log.error("refusing to start", extra=kv(error=exc))
        return 2
    setup_logging(level=settings.log_level, fmt="text")
    log.info("effective config", extra=kv(**settings.model_dump(mode="json")))
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        access_log=False,  # probes and scrapes every few seconds would drown the agent's own log lines
        log_config=None,  # keep the stdlib logging configured above
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
