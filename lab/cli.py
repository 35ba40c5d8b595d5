"""``python -m lab``: the real-node experiment's one command.

    run       run seeds x arms on a real-node cluster into an output directory (resumable), or what a
              pre-registered protocol file fixes (--protocol lab/protocols/NAME.yaml)
    report    rebuild summary.md and the plots from an output directory's CSV files (judged against its
              protocol when it has one)
    compare   a rerun against a reference run: same schedules? same placements? ratios inside the intervals?
    shadow    shadow mode's predicted gain in the default arm against the gain the drsched arm measured
    regate    judge a finished run's host-interference gate again by today's rule (--write: into gates.csv)
    schedule  print a seed's schedule (schedule.csv format), or check a schedule file
    demo      `make demo`: a short default vs drsched run on real nodes, or the KWOK demo (--kwok)

Each subcommand but demo declares its flags once, as a dataclass whose field defaults and docstrings are the
flags' defaults and help (RunArgs, ReportArgs, CompareArgs, ShadowArgs, RegateArgs,
ScheduleArgs; policy.cli builds the parsers).
"""

from __future__ import annotations

import argparse
import logging
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.procs import interrupt_on_signals
from kube.logs import setup_logging
from lab import arms, demo
from lab.errors import LabError
from lab.plan import Plan
from lab.protocol import Protocol, ProtocolError, load_protocol
from lab.schedule import (
    DEFAULTS,
    SEEDED_RULES,
    SHAPES,
    VARIANTS,
    ScheduleError,
    make_schedule,
    parse_schedule,
    schedule_csv,
    variant_text,
)
from lab.tenants import describe as tenants_text
from policy.cli import add_arguments, field_docs, flag, from_namespace, option
from policy.errors import ConfigError
from policy.labworld import WORLDS
from policy.logged import CONTEXTS
from policy.served import HOT_FILTERS
from policy.tenants import TENANTS

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


@dataclass(kw_only=True)
class ScheduleFlags:
    """The schedule a seed draws, as ``run`` and ``schedule`` take it; each field is the flag of the same name."""

    jobs: int = DEFAULTS.jobs
    """jobs per schedule"""
    window_s: float = DEFAULTS.window_s
    """jobs arrive over about this long"""
    scale: float | None = option(DEFAULTS.scale,
                                 fill={"scales": ", ".join(f"{w.name} {w.scale:g}" for w in WORLDS.values())})
    """multiply every job's work by this (unset: the world's, policy.labworld.World.scale: {scales})"""
    variant: str = option(DEFAULTS.variant, choices=VARIANTS,
                          fill={"variants": "; ".join(f"{v}: {variant_text(v)}" for v in VARIANTS)})
    """{variants}"""
    job_shape: str = option(DEFAULTS.shape, choices=tuple(SHAPES))
    """core: cpu and train jobs use a whole core (up to 4x the smallest node); fraction: capped at 0.3 / 0.5
    cores, so a node holds several, as in the simulator"""
    straggler: bool = False
    """SpeCon's regime: all jobs within 30 s, 2.5x longer, one node's cpu quota cut mid-run"""
    world: str = option(DEFAULTS.world, choices=tuple(WORLDS),
                        fill={"worlds": "; ".join(f"{w.name}: {w.note}" for w in WORLDS.values())})
    """the nodes, their links and the job mix the jobs are drawn from: {worlds}"""


@dataclass(kw_only=True)
class RunArgs(ScheduleFlags):
    """``run``: seeds x arms on real nodes into --out (resumable: done arms are skipped)."""

    out: Path
    """output directory (CSV files, summary.md, plots)"""
    seeds: list[int] = option(default_factory=lambda: [1, 2, 3, 4, 5], type=_int_list)
    """comma-separated seeds"""
    arms: list[str] = option(default_factory=lambda: ["default", "model", "demand-aware", "migration"], type=_arms,
                             fill={"bases": ", ".join(arms.BASES), "filters": ", ".join(HOT_FILTERS)})
    """comma-separated arms: {bases} (worst-fit: the positive control), each drsched one optionally with
    @HOT_FILTER (the extender's --hot-filter for that arm: {filters}; without: the shipped one), any of them with
    #N for a replicate (default#2: the A/A arm), e.g. model,model@prefer-fit"""
    arm_timeout_s: float = Plan.arm_timeout_s
    """give up on an arm after this long"""
    straggler_node: str = Plan.straggler_node
    """node whose quota is cut (--straggler); 'seed': each seed draws the node, a 2-4x cut and whether it is
    restored 30-90 s later (the straggler pilot's rule); 'seed-loaded': the same among all but the smallest node,
    by their cpu, a 2.5-4x cut, restored 90-150 s later or never (policy.straggler.RULES)"""
    straggler_at_s: float = Plan.straggler_at_s
    """seconds into the arm of the cut"""
    straggler_quota_m: int = Plan.straggler_quota_m
    """the node's cpu quota after the cut"""
    tenants: int = option(Plan.tenants, metavar="N", fill={"what": tenants_text(), "n": TENANTS})
    """the tenants scenario (N > 0; tenants-pilot-2.yaml has {n}): {what}"""
    protocol: Path | None = None
    """run what this pre-registered protocol file fixes (seeds, arms, schedule, arm order, solo runs); the flags
    it fixes may not be given too. The file must be committed, unchanged"""
    unregistered: bool = False
    """allow a --protocol file that is not committed (a trial: the report says so)"""
    isolate: bool = option(True, flags=("--no-isolate",), action="store_false")
    """start the cluster without host isolation even where this machine allows it (by default the system runs on
    its own CPUs and the nodes, their quotas and the jobs scaled to fit, on the others: harness/README.md);
    isolation.json records which"""


@dataclass(kw_only=True)
class ReportArgs:
    """``report``: rebuild summary.md and the plots from a run's CSV files."""

    out: Path = option(positional=True)
    """output directory of a run"""
    protocol: Path | None = None
    """judge the runs against this protocol file (unset: the run's own protocol.yaml)"""


@dataclass(kw_only=True)
class CompareArgs:
    """``compare``: a rerun against a reference run: schedules, placements, ratio intervals."""

    reference: Path = option(positional=True)
    """output directory of the reference run"""
    rerun: Path = option(positional=True)
    """output directory of the rerun"""
    write: Path | None = None
    """also write the markdown to this file"""


@dataclass(kw_only=True)
class ShadowArgs:
    """``shadow``: shadow mode's predicted gain in the default arm against the gain the drsched arm measured."""

    out: list[Path] = option(positional=True)
    """output directory of a run whose default arm ran with shadow mode (it has runs.csv and decisions/); with
    several, each is judged and then their seeds pooled (post hoc)"""
    arm: str = "model"
    """the drsched arm whose measured JCT ratio the prediction is judged against"""
    baseline: str = "default"
    """the default-scheduler arm the extender shadowed"""
    params: str | None = None
    """contention parameter set of the calibration file the prediction uses (unset: its active set)"""
    calibration: Path | None = None
    """the calibration file --params names a set of (unset: policy/sim/calibration.yaml), e.g. one that
    `python -m policy.calibrate log --write --calibration FILE` fitted from a log"""
    crossfit: bool = False
    """predict each seed with contention parameters fitted on the other seeds' pods (instead of --params)"""
    rescore: bool = True
    """re-score offline, with the arm's own policy among nodes.csv's job nodes, the shadow rows written while the
    extender served another policy or whose live choice is no job node (unset with --no-rescore: left out)"""
    model: Path | None = None
    """the model the `model` arm served, to re-score with (unset: the shipped policy/models/default.npz); its
    version must be the one the arm's serve rows recorded, e.g. an archived model for a run made before a
    promotion"""
    daemon_pods: int | None = None
    """pods on every node that are no job, left out of the contention split, for rows that did not count them
    (decision log schema 2; unset: the lab's, its monitor pod)"""
    context: str = option(CONTEXTS[0], choices=CONTEXTS)
    """the cluster a re-scored row is encoded over: logged (the figures the server logged, what it scored) or kept
    (the row's kept job nodes alone, as today's extender encodes over a pod's pool)"""
    by_kind: bool = False
    """also the contention model at the binding per job kind"""
    json: bool = False
    """print the JSON instead of the markdown"""
    write: Path | None = None
    """also write the markdown to this file"""


@dataclass(kw_only=True)
class RegateArgs:
    """``regate``: judge a finished run's host-interference gate again by today's rule, from the files it kept."""

    out: Path
    """output directory of a finished run (counters.csv, system.csv, jobs.csv, nodes.csv)"""
    max_share: float | None = None
    """flag limit, starved / busy (unset: the protocol.yaml kept in OUT, else 0.05)"""
    write: bool = False
    """replace gates.csv's host-interference rows (the old file is kept as gates-recorded.csv), so report,
    shadow and the next run read the new verdicts"""


@dataclass(kw_only=True)
class ScheduleArgs(ScheduleFlags):
    """``schedule``: print a seed's schedule as CSV, or check a schedule file (--check)."""

    seed: int = 1
    """seed"""
    check: Path | None = None
    """parse this schedule file and report the first error"""


def add_isolate_flag(p: argparse.ArgumentParser) -> None:
    """``run``'s ``--no-isolate``, for a subcommand still on plain argparse (``demo``)."""
    p.add_argument("--no-isolate", dest="isolate", action="store_false", help=field_docs(RunArgs)["isolate"])


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lab", description=__doc__.split("\n\n")[0],
                                epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name, cls in (("run", RunArgs), ("report", ReportArgs), ("compare", CompareArgs), ("shadow", ShadowArgs),
                      ("regate", RegateArgs), ("schedule", ScheduleArgs)):
        text = cls.__doc__.split(": ", 1)[1].rstrip(".")
        add_arguments(sub.add_parser(name, help=text), cls)
    demo.add_parser(sub)
    add_isolate_flag(sub.choices["demo"])
    return p


def parse_args(argv: list[str] | None = None):
    """The subcommand's dataclass (``RunArgs``, ...); for ``demo``, the namespace its own parser fills."""
    return from_namespace(build_parser().parse_args(argv))


FIXED_BY_PROTOCOL = ("seeds", "arms", "jobs", "window_s", "scale", "variant", "job_shape", "straggler", "isolate",
                     "world", "straggler_node", "straggler_at_s", "straggler_quota_m", "tenants")
"""``run`` flags whose values a protocol file fixes (``--arm-timeout-s`` too where the protocol sets one)."""


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


def plan_from_args(args: RunArgs) -> Plan:
    """The run's ``Plan``: from the flags, or from ``--protocol`` (refusing flags the protocol fixes)."""
    straggler = {"straggler_node": args.straggler_node, "straggler_at_s": args.straggler_at_s,
                 "straggler_quota_m": args.straggler_quota_m}
    if args.protocol is None:
        nodes = [n.name for n in WORLDS[args.world].nodes]
        if args.straggler and args.straggler_node not in (*SEEDED_RULES, *nodes):
            raise ScheduleError(f"--straggler-node: {args.straggler_node!r} is not one of "
                                f"{', '.join((*SEEDED_RULES, *nodes))}")
        if not 0 <= args.tenants <= len(nodes):
            raise ScheduleError(f"--tenants: {args.tenants} is not 0-{len(nodes)} (one tenant a node)")
        return Plan(out=args.out, seeds=args.seeds, arms=args.arms, variant=args.variant,
                    regime="straggler" if args.straggler else "drs", jobs=args.jobs, window_s=args.window_s,
                    scale=args.scale, shape=args.job_shape, arm_timeout_s=args.arm_timeout_s, isolate=args.isolate,
                    world=args.world, tenants=args.tenants, **straggler)
    p: Protocol = load_protocol(args.protocol)
    plain = RunArgs(out=args.out)  # every flag at its default
    fixed = (*FIXED_BY_PROTOCOL, *(("arm_timeout_s",) if p.arm_timeout_s is not None else ()))
    given = [name for name in fixed if getattr(args, name) != getattr(plain, name)]
    if given:
        raise ProtocolError(f"{args.protocol}: the protocol fixes " + ", ".join(
            flag(RunArgs, name) for name in given)
            + "; drop them (the file is the one record of what runs)")
    s = p.scenario
    return Plan(out=args.out, seeds=list(p.seeds), arms=list(p.arms), variant=s.variant, regime=s.regime,
                jobs=s.jobs, window_s=s.window_s, scale=s.scale, shape=s.job_shape,
                arm_timeout_s=args.arm_timeout_s if p.arm_timeout_s is None else p.arm_timeout_s,
                order_key=p.order_key if p.order == "random" else None, solo_runs=p.solo_runs,
                protocol=args.protocol, interference_max=p.interference_max, require_scored=p.require_scored,
                isolate=p.isolate, world=s.world, tenants=s.tenants,
                registration="unregistered (--unregistered)" if args.unregistered else registration(args.protocol),
                **{**straggler, "straggler_node": s.straggler_node})


def cmd_run(args: RunArgs) -> int:
    from lab.experiment import run

    plan = plan_from_args(args)
    if plan.protocol is not None:
        _say(f"protocol {plan.protocol}: registered at commit {plan.registration}; {len(plan.seeds)} seeds x "
             f"{len(plan.arms)} arms, {plan.jobs} jobs a seed, {plan.solo_runs} solo runs")
    run(plan, _say)
    _say((args.out / "summary.md").read_text() if (args.out / "summary.md").exists() else "no summary")
    return 0


def cmd_report(args: ReportArgs) -> int:
    from lab.report import summarise

    _say(summarise(args.out, None if args.protocol is None else load_protocol(args.protocol)))
    return 0


def cmd_compare(args: CompareArgs) -> int:
    from lab.compare import compare

    text = compare(args.reference, args.rerun)
    if args.write is not None:
        args.write.write_text(text)
    _say(text)
    return 0


def cmd_shadow(args: ShadowArgs) -> int:
    import json

    from lab.shadow import LAB_DAEMON_PODS, markdown, pooled, shadow_check, verdict_line
    from policy.model import SHIPPED_MODEL
    from policy.sim import calibration

    path = calibration.DEFAULT_PATH if args.calibration is None else args.calibration
    params = (None if args.params is None and args.calibration is None
              else calibration.params_of(calibration.read(path), args.params))
    if args.crossfit and args.params is not None:
        raise ConfigError("--crossfit", "fits its own parameters per seed; leave --params out")
    if args.model is not None and not args.model.is_file():  # named, so a typo is an error, not rows left out
        raise ConfigError("--model", f"{args.model}: no such model file")
    results = [shadow_check(out, arm=args.arm, baseline=args.baseline, params=params,
                            params_label=args.params or "active", rescore=args.rescore,
                            daemon_pods=LAB_DAEMON_PODS if args.daemon_pods is None else args.daemon_pods,
                            crossfit=args.crossfit, by_kind=args.by_kind,
                            model=SHIPPED_MODEL if args.model is None else args.model, context=args.context)
               for out in args.out]
    res = results[0] if len(results) == 1 else {"results": results, "pooled": pooled(results)}
    text = "\n".join(markdown(r) for r in results)
    if len(results) > 1:
        text += "\n" + verdict_line(res["pooled"], what=f" of {len(results)} results pooled (post hoc)") + "\n"
    if args.write is not None:
        args.write.write_text(text)
    _say(json.dumps(res, indent=2) if args.json else text)
    return 0


def cmd_regate(args: RegateArgs) -> int:
    from lab.regate import markdown, regate, write_regated

    res = regate(args.out, max_share=args.max_share)
    _say(markdown(res))
    if args.write:
        changed = write_regated(args.out, res)
        _say(f"{args.out / 'gates.csv'}: {len(res)} host-interference rows written, {changed} verdicts changed; "
             f"the recorded file kept as gates-recorded.csv")
    return 0


def cmd_schedule(args: ScheduleArgs) -> int:
    if args.check is not None:
        jobs = parse_schedule(args.check.read_text(), path=str(args.check))
        _say(f"{args.check}: {len(jobs)} jobs, ok")
        return 0
    sys.stdout.write(schedule_csv(make_schedule(
        seed=args.seed, jobs=args.jobs, window_s=args.window_s, scale=args.scale, variant=args.variant,
        regime="straggler" if args.straggler else "drs", shape=args.job_shape, world=WORLDS[args.world])))
    return 0


COMMANDS = {RunArgs: cmd_run, ReportArgs: cmd_report, CompareArgs: cmd_compare, ShadowArgs: cmd_shadow,
            RegateArgs: cmd_regate, ScheduleArgs: cmd_schedule}
"""What each subcommand's dataclass runs; ``demo``'s namespace names its own (``func``)."""


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = COMMANDS.get(type(args)) or args.func
    setup_logging(level="WARNING", fmt="text")
    try:
        with interrupt_on_signals(signal.SIGTERM, signal.SIGINT):
            return command(args)
    except KeyboardInterrupt:
        _say("interrupted: the cluster this command started was torn down; `run` resumes with the arms not "
             "yet in jobs.csv")
        return 130
    except (LabError, HarnessError, ConfigError, OSError) as exc:  # typed: one line, no traceback
        log.error("lab failed error=%s", exc)
        _say(f"error: {exc}")
        return 2
