"""Command line for the real-node cluster: check the machine, or bring a cluster up until interrupted.

    python -m harness.realnodes check      # exit 0 when this machine can run real nodes, else say why
    python -m harness.realnodes up         # start, print the kubeconfig, run until SIGINT/SIGTERM
    python -m harness.realnodes up --isolate   # the same with host isolation (harness.isolation)

`up` tears everything down on SIGINT or SIGTERM (a second signal during teardown is ignored, so the
cleanup always finishes). The teardown test drives it exactly that way.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import tempfile
import time
from pathlib import Path

from . import nodes, procs
from .cluster import ensure_binaries
from .errors import HarnessError
from .isolation import Isolation
from .realcluster import RealCluster, ensure_node_binaries

log = logging.getLogger(__name__)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m harness.realnodes", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="say whether this machine can run real nodes")
    up = sub.add_parser("up", help="start a real-node cluster and keep it up until SIGINT/SIGTERM")
    up.add_argument(
        "--workdir", type=Path, default=None, help="where configs, data and logs go (default: a new temp dir)"
    )
    up.add_argument(
        "--image", type=Path, action="append", default=[], help="extra image archive to import into every node"
    )
    up.add_argument(
        "--ready-file", type=Path, default=None, help="write the kubeconfig path here once the cluster is up"
    )
    up.add_argument("--isolate", action="store_true",
                    help="host isolation: system on its own CPUs, nodes on the rest (writes <workdir>/placement.json)")
    return parser.parse_args(argv)


def _up(args: argparse.Namespace) -> int:
    with procs.interrupt_on_signals(signal.SIGINT, signal.SIGTERM):  # interrupts a start-up in progress too
        workdir = args.workdir or Path(tempfile.mkdtemp(prefix="drsched-realnodes-"))
        cluster = RealCluster(
            workdir=workdir, binaries=ensure_binaries(), node_binaries=ensure_node_binaries(), images=args.image,
            isolation=Isolation.for_this_machine() if args.isolate else None,
        )
        try:
            started = time.monotonic()
            cluster.start()
            log.info("cluster up seconds=%.1f kubeconfig=%s nodes=%s", time.monotonic() - started,
                     cluster.kubeconfig, ",".join(n.name for n in cluster.nodes))  # fmt: skip
            if args.isolate:
                misplaced = cluster.write_placement(workdir / "placement.json")
                log.info("placement written path=%s misplaced=%d", workdir / "placement.json", len(misplaced))
            if args.ready_file is not None:
                args.ready_file.write_text(f"{cluster.kubeconfig}\n")
            while True:
                time.sleep(1.0)
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C must not cut the cleanup short, whatever
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # ended the run
            cluster.close()
            log.info("cluster down")
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    args = _parse(argv)
    if args.command == "check":
        reason = nodes.unavailable_reason()
        print(reason or "ok: this machine can run real nodes")  # noqa: T201 (the command's output)
        return 0 if reason is None else 1
    try:
        return _up(args)
    except HarnessError as exc:  # typed: one line naming what failed, no traceback
        log.error("realnodes failed error=%s", " ".join(str(exc).split("\n", 1)[0].split()))
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201 (the command's output)
        return 2


if __name__ == "__main__":
    sys.exit(main())
