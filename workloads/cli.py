"""Command line: one subcommand per job kind plus ``sink`` and ``source``; parses flags, sets up logging, runs.

Flags shared by every kind are added by ``_common``; each kind adds its own (``Job.add_arguments``).
The effective configuration is logged once at start. Exit codes: 0 done or stopped at a checkpoint,
1 failed, 2 bad usage, 3 SIGTERM grace period exceeded.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from kube.logs import kv, setup_logging
from workloads.jobs import KINDS, job_class
from workloads.jobs.base import JobError
from workloads.runner import EXIT_FAILED, RunSettings, run
from workloads.source import IDLE_TIMEOUT_S

log = logging.getLogger("workloads")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--state-dir", type=Path, required=True,
                        help="directory for progress.json, checkpoints and output (the volume that survives migration)")
    parser.add_argument("--units", type=int, default=100, help="total units of work (default: %(default)s)")
    parser.add_argument("--checkpoint-every", type=float, default=10.0,
                        help="seconds between periodic checkpoints, 0 = off (default: %(default)s)")
    parser.add_argument("--checkpoint-units", type=int, default=0,
                        help="also checkpoint every N units, 0 = off (default: %(default)s)")
    parser.add_argument("--keep", type=int, default=3, help="checkpoint files to keep (default: %(default)s)")
    parser.add_argument("--grace", type=float, default=20.0,
                        help="seconds from SIGTERM to the final checkpoint before giving up with exit 3; keep it "
                             "below the pod's terminationGracePeriodSeconds (default: %(default)s)")
    parser.add_argument("--progress-interval", type=float, default=0.25,
                        help="minimum seconds between progress.json rewrites (default: %(default)s)")
    parser.add_argument("--progress-port", type=int, default=None,
                        help="also serve progress JSON over HTTP at GET /progress on this port (default: off)")
    parser.add_argument("--progress-host", default="0.0.0.0", help="address for --progress-port (default: %(default)s)")
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="log level (default: %(default)s)")


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The parser; only the ``selected`` kind's module is imported for its flags (numpy only for train)."""
    parser = argparse.ArgumentParser(prog="python -m workloads", description="Run a checkpointable workload.")
    sub = parser.add_subparsers(dest="kind", required=True, metavar="{" + ",".join([*KINDS, "sink", "source"]) + "}")
    for kind, (_, helptext) in KINDS.items():
        kind_parser = sub.add_parser(kind, help=helptext, description=helptext)
        _common(kind_parser)
        if kind == selected:
            job_class(kind).add_arguments(kind_parser)
    sink = sub.add_parser("sink", help="run a standalone TCP sink for net jobs",
                          description="run a standalone TCP sink for net jobs until SIGTERM")
    sink.add_argument("--listen", default="127.0.0.1:9009", help="HOST:PORT to listen on (default: %(default)s)")
    sink.add_argument("--dir", type=Path, required=True, help="directory for received streams")
    sink.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    source = sub.add_parser("source", help="serve the deterministic data to pulling net jobs (net --source)",
                            description="serve the deterministic data to pulling net jobs (net --source) until "
                                        "SIGTERM; stateless, one thread per connection")
    source.add_argument("--port", type=int, required=True, help="TCP port to listen on (0: any free one, logged)")
    source.add_argument("--bind", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    source.add_argument("--idle-timeout", type=float, default=IDLE_TIMEOUT_S, metavar="S",
                        help="close a connection that sends no complete request, or reads nothing of its reply, "
                             "for S seconds (default: %(default)s)")
    source.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    return parser


def _settings(args: argparse.Namespace) -> RunSettings:
    if args.units < 1 or args.keep < 1 or args.checkpoint_every < 0 or args.checkpoint_units < 0 or args.grace <= 0:
        raise JobError("--units and --keep must be >= 1, --checkpoint-* >= 0, --grace > 0")
    return RunSettings(state_dir=args.state_dir, checkpoint_every=args.checkpoint_every,
                       checkpoint_units=args.checkpoint_units, keep=args.keep, grace=args.grace,
                       progress_interval=args.progress_interval, progress_port=args.progress_port,
                       progress_host=args.progress_host)


def _run_sink(args: argparse.Namespace) -> int:
    from workloads.jobs.net import parse_hostport
    from workloads.sink import SinkServer

    host, port = parse_hostport(args.listen)
    return _serve_until_signal(SinkServer(args.dir, host=host, port=port))


def _run_source(args: argparse.Namespace) -> int:
    from workloads.source import SourceServer

    if not 0 <= args.port < 65536 or not args.idle_timeout > 0:
        log.error("bad arguments", extra=kv(error="--port must be 0 .. 65535 and --idle-timeout > 0"))
        return 2
    try:
        server = SourceServer(host=args.bind, port=args.port, idle_timeout_s=args.idle_timeout)
    except OSError as exc:
        log.error("cannot listen", extra=kv(bind=args.bind, port=args.port, error=exc))
        return EXIT_FAILED
    return _serve_until_signal(server)


def _serve_until_signal(server) -> int:
    stopped = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopped.set())
    server.start()
    stopped.wait()
    server.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    setup_logging(level=args.log_level, fmt="text")
    if args.kind == "sink":
        return _run_sink(args)
    if args.kind == "source":
        return _run_source(args)
    log.info("effective config", extra=kv(**dict(sorted(vars(args).items()))))
    try:
        settings = _settings(args)
        job = job_class(args.kind)(args, args.state_dir)
    except JobError as exc:
        log.error("bad arguments", extra=kv(error=exc))
        return EXIT_FAILED
    return run(job, settings)
