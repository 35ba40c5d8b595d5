"""``python -m migration.experiment {schedule,submit,record,replay}``: the A/B experiment SpeCon ran by hand.

    schedule  write a seeded submission schedule (offset_s,job) for the templates in a directory
    submit    create each <job>.yaml pod at its offset (monotonic clock: no drift)
    record    write where each job's pods run (job,pod,node,phase) to CSV
    replay    submit again, each job pinned to the node its original pod had in a recorded run

A fair comparison: run ``submit`` with the default scheduler and no controller, ``record`` once every job
is placed; then ``replay`` with the controller running, so both runs start from the same placement and only
migration differs. Cluster calls go through ``migration.kube`` (the only module that talks to the API).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import yaml

from kube.errors import ApiError, ConfigError, Conflict
from kube.logs import kv, setup_logging
from migration.experiment.plan import (
    ExperimentError,
    initial_nodes,
    make_schedule,
    parse_schedule,
    pinned,
    placements,
    placements_csv,
    schedule_csv,
)

log = logging.getLogger("migration.experiment")


def _templates(directory: Path) -> dict[str, dict]:
    out = {}
    for path in sorted(directory.glob("*.yaml")):
        try:
            doc = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            raise ExperimentError(f"{path}: not YAML: {exc}") from None
        if not isinstance(doc, dict) or doc.get("kind") != "Pod":
            raise ExperimentError(f"{path}: expected one Pod manifest")
        doc.setdefault("metadata", {})["name"] = path.stem  # the file name is the job name
        out[path.stem] = doc
    if not out:
        raise ExperimentError(f"{directory}: no *.yaml pod templates")
    return out


def _kube(args):
    from kube.client import make_api_client
    from migration.kube import Kube

    return Kube(make_api_client(kubeconfig=args.kubeconfig))


def _submit(args, *, nodes: dict[str, str] | None = None) -> int:
    templates = _templates(args.templates)
    schedule = parse_schedule(args.schedule.read_text(), path=str(args.schedule))
    missing = sorted({s.job for s in schedule} - set(templates))
    if missing:
        raise ExperimentError(f"{args.schedule}: no template for jobs {missing}")
    kube = _kube(args)
    start = time.monotonic()
    for sub in schedule:
        delay = start + sub.offset_s / args.speed - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        body = pinned(templates[sub.job], (nodes or {}).get(sub.job))
        try:
            kube.create_pod(namespace=args.namespace, body=body)
            log.info("submitted", extra=kv(job=sub.job, offset_s=sub.offset_s, node=body["spec"].get("nodeName")))
        except Conflict:
            log.warning("already exists, skipped", extra=kv(job=sub.job))
    return 0


def cmd_schedule(args) -> int:
    jobs = sorted(_templates(args.templates)) if args.templates else [f"job{i + 1}" for i in range(args.jobs)]
    text = schedule_csv(make_schedule(jobs=jobs, seed=args.seed, mean_gap_s=args.mean_gap_s))
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_record(args) -> int:
    pods = _kube(args).list_pods(namespace=args.namespace, label_selector=args.selector or None)
    text = placements_csv(placements(pods))
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_replay(args) -> int:
    nodes = initial_nodes(args.placements.read_text(), path=str(args.placements))
    return _submit(args, nodes=nodes)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m migration.experiment", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("schedule", help="write a seeded submission schedule CSV (offset_s,job)")
    s.add_argument("--templates", type=Path, help="directory of <job>.yaml pod templates (jobs = file names)")
    s.add_argument("--jobs", type=int, default=7, help="number of jobs job1..jobN when no --templates [7]")
    s.add_argument("--seed", type=int, default=0, help="random seed [0]")
    s.add_argument("--mean-gap-s", type=float, default=30.0, help="mean seconds between submissions [30]")
    s.add_argument("--out", type=Path, help="output CSV (default: stdout)")
    s.set_defaults(func=cmd_schedule)

    def cluster(q):
        q.add_argument("--kubeconfig", type=Path, help="kubeconfig (default: in-cluster, then ~/.kube/config)")
        q.add_argument("--namespace", default="default", help="namespace of the jobs [default]")

    for name, func, helptext in (("submit", lambda a: _submit(a), "create the pods at their scheduled offsets"),
                                 ("replay", cmd_replay, "submit again, pinned to a recorded run's initial nodes")):
        q = sub.add_parser(name, help=helptext)
        cluster(q)
        q.add_argument("--schedule", type=Path, required=True, help="schedule CSV from 'schedule'")
        q.add_argument("--templates", type=Path, required=True, help="directory of <job>.yaml pod templates")
        q.add_argument("--speed", type=float, default=1.0, help="time compression: 2 = twice as fast [1]")
        if name == "replay":
            q.add_argument("--placements", type=Path, required=True, help="placements CSV from 'record'")
        q.set_defaults(func=func)

    r = sub.add_parser("record", help="write job,pod,node,phase of the jobs' pods to CSV")
    cluster(r)
    r.add_argument("--selector", default="", help="label selector of the jobs' pods (default: all)")
    r.add_argument("--out", type=Path, help="output CSV (default: stdout)")
    r.set_defaults(func=cmd_record)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(level="INFO", fmt="text")
    if getattr(args, "speed", 1.0) <= 0:
        log.error("--speed must be > 0")
        return 2
    try:
        return args.func(args)
    except (ExperimentError, ConfigError, OSError) as exc:
        log.error("refusing", extra=kv(error=str(exc)))
        return 2
    except ApiError as exc:
        log.error("cluster call failed", extra=kv(error=str(exc)))
        return 1


if __name__ == "__main__":
    sys.exit(main())
