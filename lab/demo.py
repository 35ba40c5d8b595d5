"""``python -m lab demo`` (what ``make demo`` runs): the stock default-scheduler next to drsched on real nodes.

Why it exists: the demo should show measured numbers, so it is a short lab run (two arms, one seed, a few
jobs) followed by the per-pod table (node, start, finish, slowdown against the same job alone on the
same node type, measured and cached) and the per-scheduler summary. It runs a short version of the headline
scenario, the one ``HEADLINE`` registers (its world, requests and job shapes, jobs arriving at its rate), and
says what one seed of it can tell, from that protocol's own A/A pilot. With ``--kwok``, or when this machine
cannot run real nodes (``python -m harness.realnodes check``), it runs the KWOK demo (``lab.kwokdemo``,
in this process, with the arguments after ``--``) instead and says so loudly: there nothing runs, the numbers
come from the usage model.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from lab.plan import Plan
from lab.protocol import Protocol, load_protocol

REPO = Path(__file__).resolve().parents[1]
HEADLINE = REPO / "lab" / "protocols" / "multi-resource.yaml"
"""The protocol whose scenario the demo runs a short version of, and whose A/A pilot says what one seed tells."""
Z95 = 1.96
"""Two-sided 95 % normal quantile: one seed's log ratio under no effect is taken as normal with the pilot's sd."""


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_parser(sub) -> None:
    d = sub.add_parser("demo", help="default-scheduler vs drsched on real nodes, measured (--kwok: the KWOK demo)",
                       description=__doc__.split("\n\n")[0])
    d.add_argument("--kwok", action="store_true", help="run the KWOK demo (lab/kwokdemo) instead")
    d.add_argument("--out", type=Path, default=REPO / "out" / "demo-real", help="output directory [out/demo-real]")
    d.add_argument("--seed", type=int, default=1, help="schedule seed [%(default)s]")
    d.add_argument("--jobs", type=_positive_int, default=8, help="jobs, arriving at the headline's rate [%(default)s]")
    d.add_argument("--scale", type=float, default=None,
                   help="job size factor [the headline protocol's, lab/protocols/multi-resource.yaml]")
    d.add_argument("kwok_args", nargs=argparse.REMAINDER,
                   help="after --, arguments for the KWOK demo (--kwok -- --help lists them)")
    d.set_defaults(func=cmd_demo)


def demo_plan(protocol: Protocol, *, out: Path, seed: int, jobs: int, scale: float | None, isolate: bool) -> Plan:
    """The demo's run: the protocol's scenario cut to ``jobs`` arriving at its rate; ``default``, then ``model``."""
    s = protocol.scenario
    return Plan(out=out, seeds=[seed], arms=["default", "model"], variant=s.variant, regime=s.regime, jobs=jobs,
                window_s=s.window_s * jobs / s.jobs, scale=s.scale if scale is None else scale, shape=s.job_shape,
                arm_timeout_s=600.0, isolate=isolate, world=s.world)


def one_seed_range(sd_log_ratio: float) -> tuple[float, float]:
    """The 95 % range of one seed's ratio between two runs of the same scheduler (no effect), given the A/A
    pilot's sd of the per-seed log ratio: a single seed can only tell a ratio outside it."""
    return math.exp(-Z95 * sd_log_ratio), math.exp(Z95 * sd_log_ratio)


def _shown(path: str) -> str:
    p = Path(path)
    return str(p.relative_to(REPO)) if p.is_relative_to(REPO) else path


def what_one_seed_tells(protocol: Protocol, *, jobs: int) -> str:
    """The demo's closing words: what its one seed can and cannot tell, from the protocol's own pilot."""
    text = (f"What one seed can tell: where each of {jobs} pods went and how long it took, measured. What it cannot: "
            "whether drsched is faster.")
    if protocol.pilot_sd is not None:
        lo, hi = one_seed_range(protocol.pilot_sd)
        text += (f" On this world two runs of the default scheduler on the same schedule differ by chance: with the "
                 f"A/A pilot's sd of the log ratio, {protocol.pilot_sd:.3f} ({protocol.pilot_source}, seeds of "
                 f"{protocol.scenario.jobs} jobs; fewer jobs vary more), one seed's ratio falls between {lo:.2f} and "
                 f"{hi:.2f} 95 % of the time with no effect at all, so a ratio inside that range says nothing.")
    text += (" An arm flagged above ran on a host that starved its nodes. The experiment that can tell is "
             f"pre-registered: lab/README.md, `python -m lab run --protocol {_shown(protocol.path)}` "
             f"({len(protocol.seeds)} seeds).")
    return text


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
    from lab.report import read_rows

    started = time.monotonic()

    def progress(line: str) -> None:
        minutes, seconds = divmod(int(time.monotonic() - started), 60)
        _say(f"[demo {minutes}m{seconds:02d}s] {line}")

    headline = load_protocol(HEADLINE)
    plan = demo_plan(headline, out=args.out, seed=args.seed, jobs=args.jobs, scale=args.scale,
                     isolate=args.isolate)  # --no-isolate: lab.cli adds it to this parser as to `run`'s
    progress(f"a short version of the headline scenario ({HEADLINE.relative_to(REPO)}): world {plan.world}, "
             f"requests {plan.variant}, {plan.jobs} jobs over {plan.window_s:.0f} s, seed {args.seed}")
    shutil.rmtree(args.out, ignore_errors=True)
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
    _say(what_one_seed_tells(headline, jobs=args.jobs))
    _say(f"demo wall time: {time.monotonic() - started:.0f} s (output: {args.out})")
    return 0
