"""``python -m extender``: flags generated from ``Settings`` (so ``--help`` lists every option), then uvicorn.

Precedence: defaults < ``--config`` YAML (or $DRSCHED_CONFIG) < ``DRSCHED_*`` env vars < flags.
Exit status 2 with one line naming the problem for a bad option, config file or static cluster.
"""

from __future__ import annotations

import os

# Before numpy loads: the request path does small matrix products (N nodes x 64) on kube-scheduler's serial
# path, where a multi-threaded BLAS only adds spin-waiting against the scheduler and apiserver for the same
# cores (measured: prioritize p50 0.7 ms in-process, 20+ ms under contention with BLAS threads). Set these
# variables yourself to override.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from extender.settings import Settings, build_settings  # noqa: E402
from kube.config import add_settings_flags  # noqa: E402
from kube.errors import ConfigError  # noqa: E402
from kube.logs import kv  # noqa: E402

log = logging.getLogger("extender")  # not __name__: under ``python -m`` that is "__main__"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m extender",
        description="drsched scheduler extender (filter / prioritize / bind / preempt for kube-scheduler).",
        epilog="Every option is also an env var DRSCHED_<NAME> and a key of the --config YAML file.")
    parser.add_argument("--config", type=Path, default=None, help="YAML file of options (or $DRSCHED_CONFIG).")
    add_settings_flags(parser, Settings)
    return parser


def _check_tls(settings: Settings) -> None:
    """Load the TLS files once up front, so a missing or bad file is exit 2 with its name, not a traceback."""
    if settings.tls_cert_file is None:
        return
    import ssl

    try:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(settings.tls_cert_file, settings.tls_key_file)
        if settings.tls_client_ca_file is not None:
            ctx.load_verify_locations(settings.tls_client_ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"TLS files (tls_cert_file / tls_key_file / tls_client_ca_file) unusable: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    args = vars(build_parser().parse_args(argv))
    config = args.pop("config")
    try:
        settings = build_settings(config, **args)
        from extender.service import create_app
        from kube.logs import setup_logging

        setup_logging(level=settings.log_level, fmt=settings.log_format)
        cluster = None
        if settings.static_cluster is not None:  # fail here, with file:line:field, not inside uvicorn
            from extender.static_cluster import load_static_cluster

            cluster = load_static_cluster(settings.static_cluster, default_net_mbps=settings.default_net_mbps,
                                          default_disk_mbps=settings.default_disk_mbps)
        from extender.usage import make_provider

        make_provider(settings, static_usage=cluster.usage if cluster else None)
        _check_tls(settings)
        app = create_app(settings, cluster=cluster)
    except ConfigError as exc:
        print(f"extender: {exc}", file=sys.stderr)  # noqa: T201 -- before logging exists
        return 2
    import uvicorn

    from extender.heap import keep_freed_memory

    keep_freed_memory()
    try:
        uvicorn.run(app, host=settings.host, port=settings.port, log_config=None, access_log=False,
                    **settings.uvicorn_tls())
    except SystemExit as exc:
        return int(exc.code or 0)
    except ConfigError as exc:  # raised inside the lifespan (static file, provider)
        log.error("refusing to start", extra=kv(error=str(exc)))
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
