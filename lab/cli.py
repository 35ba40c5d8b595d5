"""``python -m lab``: the real-node experiment's one command.

    run       run seeds x arms on a real-node cluster into an output directory (resumable), or what a
              pre-registered protocol file fixes (--protocol lab/protocols/NAME.yaml)
    report    rebuild summary.md and the plots from an output directory's CSV files (judged against its
              protocol when it has one)
    compare   a rerun against a reference run: same schedules? same placements? ratios inside the intervals?
    schedule  print a seed's schedule (schedule.csv format), or check a schedule file
    demo      `make demo`: a short default vs drsched run on real nodes, or the KWOK demo (--kwok)
"""

from __future__ import annotations

import argparse
import logging
import signal
import subprocess
import sys
from pathlib import Path

from harness.errors import HarnessError
from harness.procs import interrupt_on_signals
from kube.logs import setup_logging
from lab import arms, demo
from lab.errors import LabError
from lab.protocol import Protocol, ProtocolError, load_protocol
from lab.schedule import SHAPES, VARIANTS, make_schedule, parse_schedule, schedule_csv, variant_text
from policy.errors import ConfigError
from policy.served import HOT_FILTERS

log = logging.getLogger("lab")


def _say(line: str) -> None:
    print(line, flush=True)  # noqa: T201 (progress is this command's output)


def _int_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers") from None


def _arms(text: str) -> list[str]:
    names = [a.strip() for a in text.split(",") if a.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"no arms in {text!r}; known: {', '.join(arms.BASES)}")
    for name in names:
        try:
            arms.parse(name)
        except arms.ArmError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return list(dict.fromkeys(names))


def add_isolate_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-isolate", dest="isolate", action="store_false",
                   help="start the cluster without host isolation even where this machine allows it (by default "
                        "the system runs on its own CPUs and the nodes, their quotas and the jobs scaled to fit, "
                        "on the others: harness/README.md); isolation.json records which")


def _schedule_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", type=int, default=12, help="jobs per schedule [12]")
    p.add_argument("--window-s", type=float, default=60.0, help="jobs arrive over about this long [60]")
    p.add_argument("--scale", type=float, default=1.0, help="multiply every job's work by this [1]")
    p.add_argument("--variant", choices=VARIANTS, default="under",
                   help="; ".join(f"{v}: {variant_text(v)}" for v in VARIANTS) + " [under]")
    p.add_argument("--job-shape", choices=tuple(SHAPES), default="core",
                   help="core: cpu and train jobs use a whole core (up to 4x the smallest node); fraction: capped at "
                        "0.3 / 0.5 cores, so a node holds several, as in the simulator [core]")
    p.add_argument("--straggler", action="store_true",
                   help="SpeCon's regime: all jobs within 30 s, 2.5x longer, one node's cpu quota cut mid-run")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lab", description=__doc__.split("\n\n")[0],
                                epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run seeds x arms on real nodes into --out (resumable: done arms are skipped)")
    r.add_argument("--out", type=Path, required=True, help="output directory (CSV files, summary.md, plots)")
    r.add_argument("--seeds", type=_int_list, default=[1, 2, 3, 4, 5], help="comma-separated seeds [1,2,3,4,5]")
    r.add_argument("--arms", type=_arms, default=["default", "model", "demand-aware", "migration"],
                   help=f"comma-separated arms: {', '.join(arms.BASES)} (worst-fit: the positive control), "
                        "each drsched one optionally with @HOT_FILTER (the extender's --hot-filter for that arm: "
                        f"{', '.join(HOT_FILTERS)}; without: the shipped one), any of them with #N for a "
                        "replicate (default#2: the A/A arm), e.g. model,model@prefer-fit "
                        "[default,model,demand-aware,migration]")
    _schedule_args(r)
    r.add_argument("--arm-timeout-s", type=float, default=600.0, help="give up on an arm after this long [600]")
    r.add_argument("--straggler-node", default="rn-large", help="node whose quota is cut (--straggler) [rn-large]")
    r.add_argument("--straggler-at-s", type=float, default=20.0, help="seconds into the arm of the cut [20]")
    r.add_argument("--straggler-quota-m", type=int, default=200, help="the node's cpu quota after the cut [200]")
    r.add_argument("--protocol", type=Path, default=None,
                   help="run what this pre-registered protocol file fixes (seeds, arms, schedule, arm order, solo "
                        "runs); the flags it fixes may not be given too. The file must be committed, unchanged")
    r.add_argument("--unregistered", action="store_true",
                   help="allow a --protocol file that is not committed (a trial: the report says so)")
    add_isolate_flag(r)
    r.set_defaults(func=cmd_run, fixed_by_protocol={d: r.get_default(d) for d in (*FIXED_BY_PROTOCOL, "arm_timeout_s")})
    rep = sub.add_parser("report", help="rebuild summary.md and the plots from a run's CSV files")
    rep.add_argument("out", type=Path, help="output directory of a run")
    rep.add_argument("--protocol", type=Path, default=None,
                     help="judge the runs against this protocol file (default: the run's own protocol.yaml)")
    rep.set_defaults(func=cmd_report)
    c = sub.add_parser("compare", help="a rerun against a reference run: schedules, placements, ratio intervals")
    c.add_argument("reference", type=Path, help="output directory of the reference run")
    c.add_argument("rerun", type=Path, help="output directory of the rerun")
    c.add_argument("--write", type=Path, default=None, help="also write the markdown to this file")
    c.set_defaults(func=cmd_compare)
    s = sub.add_parser("schedule", help="print a seed's schedule as CSV, or check a schedule file (--check)")
    s.add_argument("--seed", type=int, default=1, help="seed [1]")
    _schedule_args(s)
    s.add_argument("--check", type=Path, default=None, help="parse this schedule file and report the first error")
    s.set_defaults(func=cmd_schedule)
    demo.add_parser(sub)
    add_isolate_flag(sub.choices["demo"])
    return p


FIXED_BY_PROTOCOL = ("seeds", "arms", "jobs", "window_s", "scale", "variant", "job_shape", "straggler", "isolate")
"""``run`` flags whose values a protocol file fixes (``--arm-timeout-s`` too where the protocol sets one)."""
_FLAG_NAMES = {"isolate": "--no-isolate"}


def registration(path: Path) -> str:
    """The commit that last changed the protocol file, as ``<hash> <date>``; a ``ProtocolError`` when the file
    is not committed or differs from its commit (it would not be the pre-registered one)."""
    where = path.resolve().parent
    try:
        changed = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--", path.name],
                                 capture_output=True, text=True, timeout=30)
        last = subprocess.run(["git", "-C", str(where), "log", "-1", "--format=%h %cI", "--", path.name],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ProtocolError(f"{path}: cannot ask git whether the protocol is committed ({exc}); "
                            "--unregistered runs it anyway") from None
    if changed.returncode != 0 or last.returncode != 0 or changed.stdout.strip() or not last.stdout.strip():
        raise ProtocolError(f"{path}: not committed as it is, so not pre-registered: commit it before the runs it "
                            "governs (or pass --unregistered for a trial)")
    return last.stdout.strip()


def plan_from_args(args: argparse.Namespace):
    """The run's ``Plan``: from the flags, or from ``--protocol`` (refusing flags the protocol fixes)."""
    from lab.experiment import Plan

    straggler = {"straggler_node": args.straggler_node, "straggler_at_s": args.straggler_at_s,
                 "straggler_quota_m": args.straggler_quota_m}
    if args.protocol is None:
        return Plan(out=args.out, seeds=args.seeds, arms=args.arms, variant=args.variant,
                    regime="straggler" if args.straggler else "drs", jobs=args.jobs, window_s=args.window_s,
                    scale=args.scale, shape=args.job_shape, arm_timeout_s=args.arm_timeout_s, isolate=args.isolate,
                    **straggler)
    p: Protocol = load_protocol(args.protocol)
    fixed = {k: v for k, v in args.fixed_by_protocol.items() if k != "arm_timeout_s" or p.arm_timeout_s is not None}
    given = [name for name, default in fixed.items() if getattr(args, name) != default]
    if given:
        raise ProtocolError(f"{args.protocol}: the protocol fixes " + ", ".join(
            _FLAG_NAMES.get(name, "--" + name.replace("_", "-")) for name in given)
            + "; drop them (the file is the one record of what runs)")
    s = p.scenario
    return Plan(out=args.out, seeds=list(p.seeds), arms=list(p.arms), variant=s.variant, regime=s.regime,
                jobs=s.jobs, window_s=s.window_s, scale=s.scale, shape=s.job_shape,
                arm_timeout_s=args.arm_timeout_s if p.arm_timeout_s is None else p.arm_timeout_s,
                order_key=p.order_key if p.order == "random" else None, solo_runs=p.solo_runs,
                protocol=args.protocol, interference_max=p.interference_max, require_scored=p.require_scored,
                isolate=p.isolate,
                registration="unregistered (--unregistered)" if args.unregistered else registration(args.protocol),
                **straggler)


def cmd_run(args: argparse.Namespace) -> int:
    from lab.experiment import run

    plan = plan_from_args(args)
    if plan.protocol is not None:
        _say(f"protocol {plan.protocol}: registered at commit {plan.registration}; {len(plan.seeds)} seeds x "
             f"{len(plan.arms)} arms, {plan.jobs} jobs a seed, {plan.solo_runs} solo runs")
    run(plan, _say)
    _say((args.out / "summary.md").read_text() if (args.out / "summary.md").exists() else "no summary")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from lab.report import summarise

    _say(summarise(args.out, None if args.protocol is None else load_protocol(args.protocol)))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from lab.compare import compare

    text = compare(args.reference, args.rerun)
    if args.write is not None:
        args.write.write_text(text)
    _say(text)
    return 0


def cmd_schedule(args: argparse.Namespace) -> int:
    if args.check is not None:
        jobs = parse_schedule(args.check.read_text(), path=str(args.check))
        _say(f"{args.check}: {len(jobs)} jobs, ok")
        return 0
    sys.stdout.write(schedule_csv(make_schedule(
        seed=args.seed, jobs=args.jobs, window_s=args.window_s, scale=args.scale, variant=args.variant,
        regime="straggler" if args.straggler else "drs", shape=args.job_shape)))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(level="WARNING", fmt="text")
    try:
        with interrupt_on_signals(signal.SIGTERM, signal.SIGINT):
            return args.func(args)
    except KeyboardInterrupt:
        _say("interrupted: the cluster this command started was torn down; `run` resumes with the arms not "
             "yet in jobs.csv")
        return 130
    except (LabError, HarnessError, ConfigError, OSError) as exc:  # typed: one line, no traceback
        log.error("lab failed error=%s", exc)
        _say(f"error: {exc}")
        return 2
