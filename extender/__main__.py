"""``python -m extender``: flags generated from ``Settings`` (so ``--help`` lists every option), then uvicorn.

Precedence: defaults < ``--config`` YAML (or $DRSCHED_CONFIG) < ``DRSCHED_*`` env vars < flags.
Exit status 2 with one line naming the problem for a bad option, config file, static cluster, or no
cluster at all. Two listeners: the service port and, unless ``--debug-port 0``, the loopback debug port.
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
        settings.server_ssl_context()
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(None, f"TLS files (tls_cert_file / tls_key_file / tls_client_ca_file) unusable: {exc}"
                          ) from None


def _check_cluster(settings: Settings) -> None:
    """Build the Kubernetes client once up front, so "no cluster" is one line and exit 2, not a traceback."""
    if settings.static_cluster is not None:
        return
    from extender.kube import make_core_api

    try:
        make_core_api(kubeconfig=settings.kubeconfig)
    except ConfigError as exc:
        detail = " ".join(str(exc).split())
        raise ConfigError(None, f"no cluster to serve ({detail}); pass --kubeconfig FILE, run in a pod (in-cluster "
                          "config), or serve a YAML cluster with --static-cluster FILE") from None


def _load_apart(settings):
    """The static cluster, parsed in a forked child and handed back pickled.

    Parsing builds millions of short-lived YAML objects; the few MiB that survive (nodes, pods) end up
    spread over the allocator's arenas and keep them resident after the rest is freed: at 5,000 nodes and
    10,000 pods, 7.6 MiB of survivors held ~70 MiB for the life of the server. Unpickled in the parent
    they take only their own size. Where fork is unavailable the file is parsed here."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from extender.static_cluster import load_static_cluster

    options = {"default_net_mbps": settings.default_net_mbps, "default_disk_mbps": settings.default_disk_mbps}
    if "fork" not in multiprocessing.get_all_start_methods():
        return load_static_cluster(settings.static_cluster, **options)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        return pool.submit(load_static_cluster, settings.static_cluster, **options).result()


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
            cluster = _load_apart(settings)
        from extender.usage import make_provider

        make_provider(settings, static_usage=cluster.usage if cluster else None)
        _check_tls(settings)
        _check_cluster(settings)
        app = create_app(settings, cluster=cluster)
    except ConfigError as exc:
        print(f"extender: {exc}", file=sys.stderr)  # noqa: T201 -- one line, not a log record
        return 2
    from extender.debug_routes import create_debug_app
    from extender.heap import keep_freed_memory
    from extender.listeners import serve

    keep_freed_memory()
    try:
        serve(settings, app, create_debug_app(app) if settings.debug_port else None)
    except SystemExit as exc:
        return int(exc.code or 0)
    except ConfigError as exc:  # raised inside the lifespan (static file, provider)
        log.error("refusing to start", extra=kv(error=str(exc)))
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
