"""``python -m policy.evaluate migration``: no migration vs the migration controller, with and without stragglers.

Why it exists: the claim that speculative migration shortens jobs (SpeCon reports −14.8 % mean JCT and
−24.7 % makespan) must be measured on episodes where the only difference is migration. Each seed draws one
workload and one set of stragglers; both arms ("none", "migration") run it with the same placement scorer,
checkpoints and restore cost, and both see a straggler as busy (its monitor reads the slowdown,
``policy.sim.contention``), so the no-migration arm does not keep feeding a slow node that looks idle. Prints a table
per scenario (mean over seeds with a 95 % interval, and the per-seed ratio migration/none), writes
``migration_runs.csv``, ``migration_summary.csv``, ``migration_table.txt`` and ``migration_jct_cdf.png``.

Scenarios (fixed before any result was seen; long checkpointed jobs):
    stragglers  8 standard nodes, DRS mix with work × 5 (≈ 300 s jobs), load 0.8; each node independently
                (p = 0.3) becomes a straggler at a uniform time in the arrival window, at a factor drawn in
                [0.2, 0.5], for half the arrival window
    calm        the same without stragglers: migration should do no harm
    specon      SpeCon's regime: 48 jobs (6 per node) submitted at once, work × 10 (≈ 600 s); each node
                (p = 0.3) becomes a straggler at a uniform time within the median job's work, at a factor
                in [0.2, 0.5], until the end of the run; makespan is what migration can shorten
Common: checkpoint every 30 s of work, restore cost 10 s, a check every 10 s, rule and budget defaults.

    lab-straggler  the simulator's copy of the lab's ``straggler`` scenario (``lab/protocols/straggler.yaml``): the
                lab's 4 nodes (``policy.sim.cluster.LAB_CLUSTER``), the DRS mix in the ``small`` shape with honest
                requests, 48 jobs (``--jobs`` is not used) over ``policy.straggler.WINDOW_S`` at
                ``WORK`` times the world's work, and the very fault the lab draws for the seed
                (``policy.straggler.draw_fault``, rule ``--fault-rule``) as a cpu/net/disk slowdown of its node.
                ``--lab-jobs``, ``--lab-window-s``, ``--lab-work``, ``--lab-variant`` and ``--lab-at-s`` draw
                another design of it (``LabDesign``: a protocol's ``scenario.jobs``, ``scale`` and ``variant``; the
                lab's straggler regime keeps its 30 s window and a protocol its cut at ``AT_S``, so other windows and
                cut times are the simulator's alone), as the design sweep of results/policy/lab-straggler-room does.
                Placement as the lab deploys drsched (the shipped model, served: ``policy.served``; another
                with ``--lab-placement``, as a protocol's prediction names its model), targets by
                ``--scorer`` (the lab's controller runs demand-aware), the controller's knobs as the lab's
                (``policy.migrate.knobs.LAB``), checkpoints every ``LAB_CHECKPOINT_S`` and ``LAB_RESTORE_S`` from
                stop to progress. The seeds draw the lab's faults (``--seed-base``), so a protocol's seeds can be
                predicted one by one; the jobs are the simulator's own draw (``policy.sim.labmix``), not the
                lab's schedule of that seed. The lab's cut is of cpu alone: io and net jobs that need little cpu
                lose less there than here.

Arms (``--arms``): ``none`` (no controller), ``migration``, and the straggler baselines of issue #21: ``restart``
(the same controller, jobs restart from zero: no checkpoint, and the rule counts all work as lost) and ``taint``
(``policy.migrate.taint.Tainter``: no move; the nodes the rule judges degraded are closed to new pods until they
recover, as a NoSchedule taint closes them).
"""

from __future__ import annotations

import logging
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from policy.baselines import make_scorer
from policy.cli import option
from policy.labworld import DEFAULT_WORLD, VARIANTS, WORLDS
from policy.migrate import Budget, MigrationController, RuleParams
from policy.migrate.knobs import LAB as LAB_KNOBS
from policy.migrate.taint import Tainter
from policy.model import SHIPPED_MODEL
from policy.paired import interval
from policy.report import mean_ci95, with_ci, write_arm_cdfs, write_csv
from policy.served import Served
from policy.sim.cluster import LAB_CLUSTER
from policy.sim.config import SimConfig, build_episode
from policy.sim.episode import run_episode, scorer_from_spec
from policy.sim.events import Straggler, random_stragglers
from policy.sim.labmix import lab_workload, window_load
from policy.sim.metrics import RunResult
from policy.sim.migration import Controller
from policy.straggler import AT_S, RULES, WINDOW_S, WORK, draw_fault

log = logging.getLogger("policy.migration_eval")

BASE = dict(cluster="standard:8", workload="drs", arrival="poisson", load=0.8, work_scale=5.0,
            profile_error=0.1, checkpoint_interval=30.0, restore_cost=10.0, migration_interval=10.0)
SCENARIOS: dict[str, dict] = {
    "stragglers": dict(stragglers=dict(per_node=0.3, factor=(0.2, 0.5), duration_frac=0.5)),
    "calm": dict(),
    "specon": dict(config=dict(arrival="at-once", work_scale=10.0), n_jobs=48,
                   stragglers=dict(per_node=0.3, factor=(0.2, 0.5), duration_frac=None)),
}
LAB_STRAGGLER = "lab-straggler"
SCENARIOS[LAB_STRAGGLER] = dict()  # its jobs a seed are its design's (LabDesign, --lab-jobs), whatever --jobs says
DEFAULT_SCENARIOS = ("stragglers", "calm", "specon")
"""What a run without ``--scenarios`` evaluates (lab-straggler is asked for by name)."""
LAB_RULE = "seed-loaded"
"""The fault rule of the lab's straggler main protocol (``policy.straggler.RULES``), ``--fault-rule``'s default."""
LAB_SHAPE, LAB_VARIANT = "small", "honest"
LAB_CHECKPOINT_S = 5.0
"""The lab's jobs checkpoint every 5 s (``lab.kube``: ``--checkpoint-every=5``)."""
LAB_RESTORE_S = 8.0
"""Stop to progress on the target: the mean of the straggler pilot's six moves (5.3-10.8 s)."""
LAB_PLACEMENT = f"dqn:{SHIPPED_MODEL}"
"""lab-straggler places as the lab deploys drsched: the shipped model, served (``--lab-placement``'s default). A
protocol's prediction names its model with the flag, so that shipping another model does not move it silently."""
ARMS = ("none", "migration", "restart", "taint")
METRICS = ("mean_jct", "p95_jct", "makespan", "migrations", "migration_rollbacks", "lost_work", "restarts")


@dataclass(frozen=True)
class LabDesign:
    """One design of ``lab-straggler``: the lab's straggler scenario as a protocol names it. The defaults are the
    landed regime's (``policy.straggler``: 48 jobs within ``WINDOW_S`` at ``WORK`` times the world's work, honest
    requests, the cut at ``AT_S``). ``work`` is the lab's ``scenario.scale`` / the world's scale x ``WORK``."""

    jobs: int = 48
    """jobs a seed (the lab's ``scenario.jobs``)"""
    window_s: float = WINDOW_S
    """jobs arrive over this long (the lab's straggler regime: ``WINDOW_S`` whatever a protocol says)"""
    work: float = WORK
    """each job's work times the world's"""
    variant: str = LAB_VARIANT
    """request variant (``policy.labworld.VARIANTS``)"""
    at_s: float = AT_S
    """seconds into the run of the cut (``lab run --straggler-at-s``; a protocol's is ``AT_S``)"""
    fault_rule: str = LAB_RULE
    """the fault rule (``policy.straggler.RULES``)"""
    placement: str = LAB_PLACEMENT
    """the scorer every arm places with, served (a ``policy.evaluate --policies`` spec; the lab's is its model)"""


def scenario_config(scenario: str, seed: int, n_jobs: int, design: LabDesign = LabDesign()) -> SimConfig:
    """The episode's config: stragglers are drawn from their own generator, identical for both arms. Start
    times are uniform over the arrival window, or the median job's work when every job arrives at once."""
    sc = SCENARIOS[scenario]
    if scenario == LAB_STRAGGLER:
        return lab_straggler_config(seed, design)
    cfg = SimConfig(**{**BASE, "n_jobs": sc.get("n_jobs", n_jobs), **sc.get("config", {})})
    spec = sc.get("stragglers")
    if spec is None:
        return cfg
    _, jobs, _ = build_episode(cfg, np.random.default_rng(seed))
    if cfg.arrival == "at-once":
        horizon = float(np.median([j.work for j in jobs]))
    else:
        horizon = max(jobs[-1].submit, 1.0)
    duration = cfg.time_limit if spec["duration_frac"] is None else spec["duration_frac"] * horizon
    events = random_stragglers(8, horizon, np.random.default_rng(seed + 7919), per_node=spec["per_node"],
                               factor=spec["factor"], duration=duration)
    return replace(cfg, events=tuple(events))


def lab_straggler_config(seed: int, design: LabDesign = LabDesign()) -> SimConfig:
    """``lab-straggler`` (module docstring): the lab's straggler regime of ``design`` on its nodes, with the fault
    its rule draws for ``seed``."""
    world = WORLDS[DEFAULT_WORLD]
    cfg = SimConfig(cluster=LAB_CLUSTER, workload=lab_workload(DEFAULT_WORLD, design.variant, LAB_SHAPE),
                    n_jobs=design.jobs, work_scale=design.work, profile_error=0.0, sample_interval=10.0,
                    checkpoint_interval=LAB_CHECKPOINT_S, restore_cost=LAB_RESTORE_S,
                    migration_interval=LAB_KNOBS.interval_s)
    nodes, _, _ = build_episode(cfg, np.random.default_rng(seed))
    load = window_load(DEFAULT_WORLD, design.jobs, design.window_s, nodes.capacity.sum(axis=0),
                       scale=world.scale * design.work, shape=LAB_SHAPE)
    fault = draw_fault(design.fault_rule, seed, list(zip(nodes.types, nodes.capacity[:, 0], strict=True)),
                       at_s=design.at_s)
    lasts = cfg.time_limit if fault.restore_s is None else fault.restore_s - fault.at_s
    slow = Straggler(nodes.types.index(fault.node), fault.at_s, lasts, 1.0 / fault.cut)
    return replace(cfg, load=load, events=(slow,))


def arm_controller(scenario: str, arm: str, scorer_name: str, seed: int) -> Controller | None:
    """The arm's controller: none, the migration rule (``migration``, ``restart``) or the taint baseline."""
    if arm == "none":
        return None
    rule, budget = (LAB_KNOBS.rule(), LAB_KNOBS.budget()) if scenario == LAB_STRAGGLER else (RuleParams(), Budget())
    if arm == "taint":
        return Tainter(rule)
    return MigrationController(make_scorer(scorer_name, seed=seed), rule, budget)


def run_arm(cfg: SimConfig, seed: int, arm: str, scorer_name: str, scenario: str = "",
            lab_placement: str = LAB_PLACEMENT) -> RunResult:
    """One episode; placement by ``scorer_name`` through the shared episode loop (``lab-straggler``: by
    ``lab_placement`` served, as the lab deploys drsched), with the arm's controller; ``restart`` without
    checkpoints."""
    placement = (Served(scorer_from_spec(lab_placement)) if scenario == LAB_STRAGGLER
                 else make_scorer(scorer_name, seed=seed))
    if arm == "restart":
        cfg = replace(cfg, checkpoint_interval=None)
    return run_episode(cfg, seed, placement, controller=arm_controller(scenario, arm, scorer_name, seed))


def _task(args: tuple[str, int, int, str, str, LabDesign]) -> tuple[dict, np.ndarray]:
    scenario, seed, n_jobs, arm, scorer_name, design = args
    t0 = time.perf_counter()
    res = run_arm(scenario_config(scenario, seed, n_jobs, design), seed, arm, scorer_name, scenario, design.placement)
    row = {"scenario": scenario, "seed": seed, "arm": arm, **{m: res.summary()[m] for m in METRICS},
           "finished": res.finished, "wall_s": time.perf_counter() - t0}
    return row, res.jct


def summarise(rows: list[dict]) -> list[dict]:
    out = []
    none = {(r["scenario"], r["seed"]): r for r in rows if r["arm"] == "none"}
    for scenario in dict.fromkeys(r["scenario"] for r in rows):
        for arm in ARMS:
            rs = [r for r in rows if r["scenario"] == scenario and r["arm"] == arm]
            if not rs:
                continue
            s = {"scenario": scenario, "arm": arm, "seeds": len(rs)}
            for m in METRICS:
                s[m], s[m + "_ci"] = mean_ci95([r[m] for r in rs])
            for m in ("mean_jct", "makespan"):
                paired = [(r[m], none[(scenario, r["seed"])][m]) for r in rs if (scenario, r["seed"]) in none]
                s[m + "_ratio"], s[m + "_ratio_ci"] = mean_ci95([a / b for a, b in paired])
                # the lab's endpoint: the per-seed log ratio, paired, its mean and 95 % t-interval as ratios
                iv = interval([float(np.log(a / b)) for a, b in paired if a > 0 and b > 0])
                s.update({m + "_geo": iv.ratio, m + "_geo_low": iv.low, m + "_geo_high": iv.high,
                          m + "_log_sd": iv.sd})
            out.append(s)
    return out


def format_table(summary: list[dict]) -> str:
    lines = []
    for scenario in dict.fromkeys(s["scenario"] for s in summary):
        rows = [s for s in summary if s["scenario"] == scenario]
        lines.append(f"\n## migration scenario={scenario} ({rows[0]['seeds']} seeds; ratios are per-seed "
                     "migration/none, 95 % CI)")
        lines.append(f"{'arm':<10}{'mean JCT':>18}{'JCT ratio':>16}{'p95 JCT':>10}{'makespan':>18}"
                     f"{'makespan ratio':>16}{'migr.':>7}{'rollb.':>7}{'lost work s':>12}")
        for s in rows:
            lines.append(f"{s['arm']:<10}{with_ci(s['mean_jct'], s['mean_jct_ci'], '.1f'):>18}"
                         f"{with_ci(s['mean_jct_ratio'], s['mean_jct_ratio_ci'], '.3f'):>16}{s['p95_jct']:>10.1f}"
                         f"{with_ci(s['makespan'], s['makespan_ci'], '.0f'):>18}"
                         f"{with_ci(s['makespan_ratio'], s['makespan_ratio_ci'], '.3f'):>16}{s['migrations']:>7.1f}"
                         f"{s['migration_rollbacks']:>7.1f}{s['lost_work']:>12.0f}")
        lines.append("paired per-seed log ratio to none, as the lab's endpoint (exp of the mean, 95 % t-interval; "
                     "sd of the log ratio):")
        for s in rows:
            if s["arm"] != "none":
                lines.append(f"  {s['arm']:<10} mean JCT {s['mean_jct_geo']:.3f} ({s['mean_jct_geo_low']:.3f}-"
                             f"{s['mean_jct_geo_high']:.3f}, sd {s['mean_jct_log_sd']:.3f})  makespan "
                             f"{s['makespan_geo']:.3f} ({s['makespan_geo_low']:.3f}-{s['makespan_geo_high']:.3f}, "
                             f"sd {s['makespan_log_sd']:.3f})")
    return "\n".join(lines)


UNSET = {False: dict(seeds=8, jobs=150), True: dict(seeds=2, jobs=40)}
"""Seeds per scenario and jobs per episode where not given: a full run, and ``--quick``'s smoke run."""


def _unset(name: str) -> dict:
    return {"full": str(UNSET[False][name]), "quick": str(UNSET[True][name])}


@dataclass(kw_only=True)
class MigrationArgs:
    """What ``python -m policy.evaluate migration`` runs; each field is the command-line flag of the same name."""

    scenarios: str = option(",".join(DEFAULT_SCENARIOS), fill={"names": ", ".join(SCENARIOS)})
    """comma-separated, from {names}"""
    seeds: int | None = option(None, fill=_unset("seeds"))
    """seeds per scenario (unset: {full}; --quick: {quick})"""
    seed_base: int = 1000
    """first seed"""
    jobs: int | None = option(None, fill=_unset("jobs"))
    """jobs per episode (unset: {full}; --quick: {quick})"""
    scorer: str = "demand-aware"
    """placement and target scorer (lab-straggler: targets only; it places as the lab deploys drsched)"""
    arms: str = option("none,migration", fill={"names": ", ".join(ARMS)})
    """comma-separated, from {names} (none is every ratio's baseline)"""
    fault_rule: str = option(LabDesign.fault_rule, choices=tuple(RULES))
    """lab-straggler's fault rule (policy.straggler.RULES: seed is the straggler pilot's)"""
    lab_jobs: int = LabDesign.jobs
    """lab-straggler's jobs a seed"""
    lab_window_s: float = LabDesign.window_s
    """lab-straggler's arrival window, seconds"""
    lab_work: float = option(LabDesign.work, fill={"work": f"{WORK:g}"})
    """lab-straggler's work multiplier (the lab's scenario.scale / the world's scale x {work})"""
    lab_variant: str = option(LabDesign.variant, choices=VARIANTS)
    """lab-straggler's request variant"""
    lab_at_s: float = LabDesign.at_s
    """lab-straggler's time of the cut, seconds into the run"""
    lab_placement: str = LabDesign.placement
    """lab-straggler's placement, served: a policy.evaluate --policies spec (the lab deploys the shipped model)"""
    workers: int = 1
    """parallel processes"""
    out: Path = Path("out/evaluate")
    """output directory"""
    no_plots: bool = False
    """skip migration_jct_cdf.png"""
    quick: bool = False
    """smoke run: the unset --seeds and --jobs take --quick's values"""
    quiet: bool = option(False, flags=("-q", "--quiet"))
    """accepted for symmetry with policy.evaluate"""

    def lab_design(self) -> LabDesign:
        """lab-straggler's design as the ``--lab-*`` and ``--fault-rule`` flags give it."""
        return LabDesign(jobs=self.lab_jobs, window_s=self.lab_window_s, work=self.lab_work, variant=self.lab_variant,
                         at_s=self.lab_at_s, fault_rule=self.fault_rule, placement=self.lab_placement)

    def with_unset_filled(self) -> MigrationArgs:
        return replace(self, **{k: v for k, v in UNSET[self.quick].items() if getattr(self, k) is None})


def run(args: MigrationArgs) -> int:
    """The migration evaluation ``args`` asks for (parsed by ``policy.evaluate``, unset fields filled); the
    exit status: 2 for unknown scenarios or scorers, before any episode runs."""
    scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    unknown = [s for s in scenarios if s not in SCENARIOS]
    if unknown:
        sys.stderr.write(f"error: unknown migration scenario {unknown}; known: {', '.join(SCENARIOS)}\n")
        return 2
    try:
        make_scorer(args.scorer)
    except KeyError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if "none" not in arms or any(a not in ARMS for a in arms):
        sys.stderr.write(f"error: --arms {args.arms!r}: from {', '.join(ARMS)}, none included\n")
        return 2
    design = args.lab_design()
    tasks = [(s, args.seed_base + i, args.jobs, arm, args.scorer, design) for s in scenarios
             for i in range(args.seeds) for arm in arms]
    t0 = time.perf_counter()
    if args.workers > 1:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            results = list(pool.map(_task, tasks, chunksize=1))
    else:
        results = [_task(t) for t in tasks]
    rows = [r for r, _ in results]
    jcts = {}
    for (row, jct) in results:
        jcts.setdefault((row["scenario"], row["arm"]), []).append(jct)
    summary = summarise(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(args.out / "migration_runs.csv", rows)
    write_csv(args.out / "migration_summary.csv", summary)
    table = format_table(summary)
    (args.out / "migration_table.txt").write_text(table + "\n")
    sys.stdout.write(table + "\n")
    if not args.no_plots:
        log.info("wrote %s", write_arm_cdfs(jcts, arms, args.out / "migration_jct_cdf.png"))
    log.info("evaluated %d runs in %.1f s; results in %s", len(rows), time.perf_counter() - t0, args.out)
    return 0
