"""``python -m lab demo`` (what ``make demo`` runs): the stock default-scheduler next to drsched on real nodes.

Why it exists: the demo should show measured numbers, so it is a short lab run (two arms, one seed, a few
small jobs) followed by the per-pod table (node, start, finish, slowdown against the same job alone on the
same node type, measured and cached) and the per-scheduler summary. With ``--kwok``, or when this machine
cannot run real nodes (``python -m harness.realnodes check``), it runs the KWOK demo (``lab.kwokdemo``,
in this process, with the arguments after ``--``) instead and says so loudly: there nothing runs, the numbers
come from the usage model.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from policy.labworld import DEFAULT_WORLD, WORLDS

REPO = Path(__file__).resolve().parents[1]


def add_parser(sub) -> None:
    d = sub.add_parser("demo", help="default-scheduler vs drsched on real nodes, measured (--kwok: the KWOK demo)",
                       description=__doc__.split("\n\n")[0])
    d.add_argument("--kwok", action="store_true", help="run the KWOK demo (lab/kwokdemo) instead")
    d.add_argument("--out", type=Path, default=REPO / "out" / "demo-real", help="output directory [out/demo-real]")
    d.add_argument("--seed", type=int, default=1, help="schedule seed [%(default)s]")
    d.add_argument("--jobs", type=int, default=8, help="jobs [%(default)s]")
    d.add_argument("--scale", type=float, default=WORLDS[DEFAULT_WORLD].scale,
                   help="job size factor [%(default)s: the world's, policy.labworld.World.scale]")
    d.add_argument("kwok_args", nargs=argparse.REMAINDER,
                   help="after --, arguments for the KWOK demo (--kwok -- --help lists them)")
    d.set_defaults(func=cmd_demo)


def _say(line: str) -> None:
    print(line, flush=True)  # noqa: T201 (the demo's output)


def _kwok(args: argparse.Namespace) -> int:
    from lab.kwokdemo.demo import main  # the control plane's imports only when the KWOK demo runs

    return main([a for a in args.kwok_args if a != "--"])


def cmd_demo(args: argparse.Namespace) -> int:
    from harness.nodes import unavailable_reason

    if args.kwok:
        return _kwok(args)
    reason = unavailable_reason()
    if reason is not None:
        banner = "!" * 100
        _say(f"{banner}\n!! THIS MACHINE CANNOT RUN REAL NODES: {reason}\n"
             f"!! To get them: as root, `make deps` (scripts/install-deps.sh installs the Debian packages), then\n"
             f"!! `make demo` again; `python -m harness.realnodes check` says whether it is enough.\n"
             f"!! Falling back to the KWOK demo: no pod really runs there; its load figures are modelled.\n{banner}")
        return _kwok(args)
    import shutil

    from lab.experiment import run
    from lab.plan import Plan
    from lab.report import read_rows

    started = time.monotonic()

    def progress(line: str) -> None:
        minutes, seconds = divmod(int(time.monotonic() - started), 60)
        _say(f"[demo {minutes}m{seconds:02d}s] {line}")

    shutil.rmtree(args.out, ignore_errors=True)
    plan = Plan(out=args.out, seeds=[args.seed], arms=["default", "model"], jobs=args.jobs, window_s=20.0,
                scale=args.scale, arm_timeout_s=300.0,
                isolate=args.isolate)  # --no-isolate: lab.cli adds it to this parser as to `run`'s
    run(plan, progress)
    rows = read_rows(args.out / "jobs.csv")
    _say("")
    _say(f"{'arm':8} {'job':5} {'kind':6} {'node':14} {'submit':>7} {'start':>7} {'finish':>7} {'solo':>6} "
         f"{'slowdown':>8} exit")
    for r in sorted(rows, key=lambda r: (r["arm"], r["job"])):
        _say(f"{r['arm']:8} {r['job']:5} {r['kind']:6} {r['node']:14} {r['submit_s']:>7} {r['start_s']:>7} "
             f"{r['finish_s']:>7} {r['solo_s']:>6} {r['slowdown']:>8} {r['exit_code']}")
    _say("")
    _say((args.out / "summary.md").read_text())
    _say(f"What one seed can tell: where each of {args.jobs} pods went and how long it took, measured. What it "
         "cannot: whether drsched is faster -- one seed has no interval, and an arm flagged above ran on a host "
         "that starved its nodes. The experiment that can tell is pre-registered: lab/README.md, "
         "`python -m lab run --protocol lab/protocols/aa-pilot.yaml`.")
    _say(f"demo wall time: {time.monotonic() - started:.0f} s (output: {args.out})")
    return 0
