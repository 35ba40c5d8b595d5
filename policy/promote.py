"""``python -m policy.promote``: a candidate model replaces the served one only if it is better, with its interval.

Why it exists: a retrained model is not better because its training curve says so. The gate runs the
candidate and the served model on the very same validation episodes (``policy.grid``'s cases and
``run_all``: same family, load and seed, so the workload and arrivals are identical and each pair differs
only by the model), and promotes only when the whole 95 % interval says the candidate loses less.

The figure, per (family, workload, load, seed) pair: the ratio of excess slowdown (mean slowdown - 1, the
time jobs lose to waiting and contention) candidate / served, each excess floored at
``policy.comparison.MIN_EXCESS`` (0.005), every comparison's noise floor. Below it a difference is noise, not
a result, and the floor keeps a candidate that loses nothing finite (ratio floor/served, not 0 or 0/0); two
excesses both under it are a tie (ratio 1). The floor is symmetric, unlike leaving such pairs out as the
README's comparison does (``policy.comparison``): swapping the two models gives exactly the reciprocal
ratios, so the gate cannot favour either side; hence a rule of its own.

Both models are scored as served (``policy.served``: the shipped value-to-score mapping, hot filter and
extender weight, beside kube-scheduler's own resource scoring), since that is what a promoted model does on
the cluster; ``--as-served 0`` scores the raw argmax of each model's values instead. The two views can
disagree: on validation (``results/policy/promote/``), ``policy/models/original-world.npz`` against the shipped model is
0.882 (0.804-0.969) by argmax, which would promote, and 1.117 (0.967-1.290) as served, which does not.

Summary: the geometric mean of the ratios and its 95 % interval, a Student t interval on the log ratios
(``policy.report.mean_ci95``, the formula every evaluation table uses), exponentiated. Why t and not a
bootstrap: ratios of excess are close to lognormal, for which the t interval on logs is the textbook
interval of a geometric mean; it is deterministic (no resampling seed to choose); and at the 24 pairs of
``--quick`` a percentile bootstrap is too narrow, which would promote too easily. It treats pairs as
independent; pairs that share a seed across families or loads are not quite, so the interval is if
anything optimistic, which the strict rule below offsets.

Decision: promote only if the interval's upper bound is below 1 (one pair gives no interval: never
promoted), and only if the candidate leaves no more jobs unfinished than the served model (slowdowns average
the finished jobs, so a model that strands jobs could otherwise look fast). Identical models give ratio 1
everywhere, an interval of [1, 1], and are not promoted.

Only the validation split: the test split and the lab and size family sets are reported on, never chosen on
(``policy.splits``), and a promotion is a choice. ``--split test`` is refused with a line saying so.

``--log DIR`` (a decision log, ``policy.decisionlog``) adds what the log can say: the on-policy mean JCT of
the decisions ``--served``'s version served (``policy.offline``'s ``logged`` target, SNIPS, bootstrap
interval; serve rows of other versions are counted apart, with a warning: their mean is another policy's),
the model versions that wrote it, and both models on the log's own pods by the calibrated contention model
(``policy.offline.model_paired``: each logged decision rebuilt from its recorded inputs, each model's pick's
predicted slowdown anchored at the pod's observed outcome; mean JCT candidate / served with a 95 % paired
bootstrap interval). Both models pick there as they would be served (the extender's hot filter, ties kept on
the bound node) unless ``--as-served 0``; ``--nodes`` names the nodes the pods could go to (an older log's
shadow rows do not mark a tainted node, which either model could otherwise pick) and ``--daemon-pods`` the
DaemonSet pods per node for rows that did not count them, both as ``policy.offline``'s. ``--log-rows`` picks
which decisions judge the two models: ``all`` (the default), ``served`` (the serve rows of ``--served``'s
version: the cluster's own decisions by the model in question) or ``shadow`` (shadow rows: bindings by another
scheduler, re-scored from their inputs, so whoever served when they were written does not matter).
``--log-context`` says what cluster both models re-encode each decision over (``policy.logged.CONTEXTS``):
``logged`` (the default), the figures the server logged, bitwise what it scored; ``kept``, the row's kept nodes
among ``--nodes`` alone, as today's extender encodes a pod over its pool. The two differ on a log written before
the extender did (``extender.context``), whose figures counted every cached node, a tainted one among them.

That estimate rests on the model's assumptions (one decision changed at a time, the rates at the decision hold
for the pod's stay; ``policy.offline``), so it does not promote on its own; it can only stop a promotion: when
its whole interval lies above 1 (the cluster's own pods say the candidate loses), the simulator's verdict is
overruled and nothing is installed. A log with no pods both models can be estimated on (no recorded inputs, no
outcomes yet) says nothing either way.

``--apply`` (only on promote; otherwise a dry run that says what it would do) copies the served ``.npz`` and
``.json`` to ``<name>.prev.npz`` / ``.prev.json`` and replaces them with the candidate's, each through
``kube.atomic.atomic_write`` (a temp file in the same directory, fsync, ``os.replace``, fsync the directory).
The two files are replaced one after the other, metadata first: a reader in between sees the candidate's
metadata with the served weights, both valid (the extender loads its model at start). The report (JSON, to
``--report`` or stdout) holds every pair, the interval, the decision and both models' versions.

Exit status: 0 promoted (or, without ``--apply``, would be), 1 not promoted, 2 bad input (a missing or
corrupt model file or log: one line naming the file and what is wrong).

    python -m policy.promote --candidate runs/mine.npz                      # dry run on validation
    python -m policy.promote --candidate runs/mine.npz --apply --report promote.json
    python -m policy.promote --candidate runs/mine.npz --seed-base 60 --seeds 40   # on seeds no study used
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from policy.cli import command_parser, from_namespace, option
from policy.comparison import MIN_EXCESS
from policy.decisionlog import LogError, read_log
from policy.errors import ConfigError
from policy.evaluate import unset_defaults
from policy.grid import run_all, split_cases
from policy.logged import CONTEXTS
from policy.model import (
    DIGEST_KEY,
    SHIPPED_MODEL,
    Model,
    ModelError,
    ModelScorer,
    Scorer,
    check_digest,
    load_model,
    meta_bytes,
    meta_path,
    with_digest,
)
from policy.offline import TARGETS, importance_weighted, model_paired
from policy.paths import repo_relative
from policy.report import mean_ci95
from policy.served import DEFAULT_HOT_FILTER, DEFAULT_WEIGHT
from policy.sim.errors import SimError
from policy.splits import SPLITS

log = logging.getLogger("policy.promote")

SHIPPED = SHIPPED_MODEL
SPLIT = "validation"
"""The one split a promotion may look at."""
REFUSED = {
    "test": "the test split is reported on, never chosen on; a model promoted on it has no held-out result left "
            "(policy.splits). Promote on --split validation",
    "lab": "the lab families are evaluation-only, never chosen on (policy.splits). Promote on --split validation",
    "size": "the size families are evaluation-only, never chosen on (policy.splits). Promote on --split validation",
}
"""Why each other split is refused, in one line."""
_DEFAULTS = unset_defaults(SPLIT, quick=False)
_QUICK = unset_defaults(SPLIT, quick=True)


@dataclass(frozen=True, slots=True)
class Pair:
    """One episode run by both models: its case, each model's excess slowdown, mean JCT and jobs left unfinished
    (never placed or not done when the episode ended: the slowdowns average finished jobs only), their ratio."""

    scenario: str
    workload: str
    load: float
    seed: int
    candidate_excess: float
    served_excess: float
    candidate_mean_jct: float
    served_mean_jct: float
    candidate_unfinished: int
    served_unfinished: int
    ratio: float


@dataclass(frozen=True, slots=True)
class Interval:
    """The geometric mean of the ratios and its 95 % interval (NaN bounds with fewer than two pairs)."""

    geomean: float
    lo: float
    hi: float
    n: int
    method: str = "student-t on log ratios"


@dataclass(frozen=True, slots=True)
class Decision:
    promote: bool
    reason: str


def excess_ratio(candidate: float, served: float, *, floor: float = MIN_EXCESS) -> float:
    """Candidate / served excess slowdown, each floored at ``floor`` (module docstring: why a floor); NaN if
    either is (an episode that finished no job)."""
    if not (math.isfinite(candidate) and math.isfinite(served)):
        return math.nan
    return max(candidate, floor) / max(served, floor)


def pair_rows(candidate: Sequence[dict], served: Sequence[dict]) -> list[Pair]:
    """Match ``run_all`` rows of the two models by case; ``ValueError`` if the two did not run the same cases."""
    def key(r: dict) -> tuple:
        return r["scenario"], r["workload"], r["load"], r["seed"]

    by_case = {key(r): r for r in served}
    if sorted(map(key, candidate)) != sorted(by_case):
        raise ValueError("candidate and served model ran different cases; the comparison must be paired")
    return [Pair(*key(c), candidate_excess=c["excess_slowdown"], served_excess=s["excess_slowdown"],
                 candidate_mean_jct=c["mean_jct"], served_mean_jct=s["mean_jct"],
                 candidate_unfinished=c["unfinished"] + c["unschedulable"],
                 served_unfinished=s["unfinished"] + s["unschedulable"],
                 ratio=excess_ratio(c["excess_slowdown"], s["excess_slowdown"]))
            for c in sorted(candidate, key=key) for s in (by_case[key(c)],)]


def interval(ratios: Sequence[float]) -> Interval:
    """Geometric mean of ``ratios`` with the exponentiated t interval of their logs; all NaN if any ratio is not
    a positive number (a pair left out would unpair the comparison)."""
    if not ratios or not all(math.isfinite(r) and r > 0 for r in ratios):
        return Interval(math.nan, math.nan, math.nan, len(ratios))
    mean, half = mean_ci95([math.log(r) for r in ratios])
    return Interval(math.exp(mean), math.exp(mean - half), math.exp(mean + half), len(ratios))


def decide(iv: Interval, *, unfinished: tuple[int, int] = (0, 0)) -> Decision:
    """Promote only if the whole interval lies below 1 (the candidate is better, with its interval) and the
    candidate leaves no more jobs unfinished than the served model (``unfinished``: their totals over the pairs),
    which the slowdowns, averaged over finished jobs, would not show."""
    figures = f"geometric mean ratio {iv.geomean:.3f}, 95 % interval {iv.lo:.3f}-{iv.hi:.3f} over {iv.n} pairs"
    if not math.isfinite(iv.hi):
        return Decision(False, f"no interval over {iv.n} pair{'s' * (iv.n != 1)} (one pair, or an episode that "
                               "finished no job)")
    if unfinished[0] > unfinished[1]:
        return Decision(False, f"{figures}; but the candidate left {unfinished[0]} jobs unfinished, the served "
                               f"model {unfinished[1]}")
    if iv.hi < 1.0:
        return Decision(True, f"candidate loses less: {figures}")
    return Decision(False, f"{figures}; the upper bound is not below 1")


LOG_ROWS = ("all", "served", "shadow")


def log_rows(pairs: Sequence[tuple], which: str, served_version: str) -> list[tuple]:
    """The (decision, outcome) pairs ``--log-rows`` keeps (module doc)."""
    if which not in LOG_ROWS:
        raise ValueError(f"--log-rows must be one of {', '.join(LOG_ROWS)}, got {which!r}")
    if which == "served":
        return [(d, o) for d, o in pairs if d["mode"] == "serve" and d["model_version"] == served_version]
    if which == "shadow":
        return [(d, o) for d, o in pairs if d["mode"] == "shadow"]
    return list(pairs)


def log_summary(pairs: Sequence[tuple], *, served_version: str, candidate: Scorer, served: Scorer,
                rows: str = "all", hot_filter: str | None = None, nodes: frozenset[str] | None = None,
                daemon_pods: int = 0, context: str = "logged") -> dict:
    """What a decision log says beside the simulator: the on-policy mean JCT of the decisions
    ``served_version`` served, the model versions that wrote the serve rows (``other_versions``: those not
    ``served_version``'s, whose pods that mean leaves out), and ``candidate`` against ``served`` by the
    contention model (``model_paired``) on the ``rows`` slice (``log_rows``), picking with ``hot_filter``
    among ``nodes``, each decision encoded over ``context`` (``policy.logged.CONTEXTS``)."""
    serve = [(d, o) for d, o in pairs if d["mode"] == "serve"]
    mine = [(d, o) for d, o in serve if d["model_version"] == served_version]
    est = next(e for e in importance_weighted(mine, TARGETS["logged"]) if e.estimator == "snips")
    versions = Counter(d["model_version"] for d, _ in serve)
    judged = log_rows(pairs, rows, served_version)
    return {"decisions": len(pairs), "serve_decisions": len(serve), "served_version_decisions": len(mine),
            "with_outcome": est.n, "on_policy_mean_jct_s": est.value, "on_policy_mean_jct_ci95": [est.lo, est.hi],
            "model_versions": dict(sorted(versions.items())), "served_version": served_version,
            "other_versions": sorted(v for v in versions if v != served_version),
            "rows": rows, "judged_decisions": len(judged), "hot_filter": hot_filter,
            "nodes": None if nodes is None else sorted(nodes), "daemon_pods": daemon_pods, "context": context,
            "model_based": asdict(model_paired(judged, candidate, served, hot_filter=hot_filter, nodes=nodes,
                                               daemon_pods=daemon_pods, context=context))}


def log_veto(decision: Decision, log_info: dict | None) -> Decision:
    """``decision``, unless it promotes and the log's contention-model estimate says the candidate loses (its
    whole interval of mean JCT candidate / served above 1; module doc)."""
    mb = None if log_info is None else log_info["model_based"]
    if not decision.promote or mb is None or mb["lo"] is None or not mb["lo"] > 1.0:
        return decision
    return Decision(False, f"{decision.reason}; but on the log's {mb['n']} pods the contention model says the "
                           f"candidate loses: mean JCT ratio {mb['ratio']:.3f}, 95 % interval "
                           f"{mb['lo']:.3f}-{mb['hi']:.3f}")


def describe(m: Model, sha256: str) -> dict:
    """A model as the report names it: its file (from the checkout's root when under it), metadata version and
    the weights' digest."""
    return {"path": repo_relative(m.path), "version": m.version, "sha256": sha256}


def verdict(decision: Decision, *, applied: bool) -> str:
    """The outcome in words: promoted, would promote (a dry run), or not promoted."""
    return "promoted" if applied else "would promote (dry run)" if decision.promote else "not promoted"


def build_report(*, pairs: Sequence[Pair], iv: Interval, decision: Decision, models: dict, setup: dict,
                 applied: bool, log_info: dict | None) -> dict:
    """The JSON report: every pair, the interval, the decision, both models (``describe``), how they were run;
    a figure that is not a finite number is null (JSON has no NaN)."""
    return _finite({"decision": verdict(decision, applied=applied), "promote": decision.promote, "applied": applied,
            "reason": decision.reason, **models, "setup": setup,
            "ratio": f"excess slowdown candidate / served, each floored at {MIN_EXCESS}", "interval": asdict(iv),
            "pairs": [asdict(p) for p in pairs], **({"log": log_info} if log_info is not None else {})})


def _finite(x):
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def prev_path(served: Path) -> Path:
    """Where ``--apply`` keeps the model it replaces: ``<name>.prev.npz`` (metadata ``<name>.prev.json``)."""
    return served.with_name(served.stem + ".prev.npz")


def _digested(npz_path: Path) -> tuple[bytes, bytes]:
    """An artifact's (.npz bytes, .json bytes), the metadata recording the weights' digest: kept verbatim when it
    already does (``ModelError`` if it records another one), rewritten with it when saved before digests."""
    npz, raw = npz_path.read_bytes(), meta_path(npz_path).read_bytes()
    meta = json.loads(raw)
    check_digest(npz_path, meta, npz)
    return npz, raw if DIGEST_KEY in meta else meta_bytes(with_digest(meta, npz))


def install(candidate: Path, served: Path) -> Path:
    """Keep the served artifact as ``prev_path`` and replace it by the candidate's, file by file, atomically.

    Everything is read (and each pair checked against its digest) before anything is written, and every
    metadata written records its weights' sha256, so ``load_model`` can tell a half-replaced pair. The writes,
    each an ``atomic_write``, in this order, and what a crash just before each leaves:

    1. ``<name>.prev.json`` -- the served pair untouched (the old pair);
    2. ``<name>.prev.npz``  -- served: the old pair; ``.prev.*``: the old metadata beside an earlier .prev.npz,
       a pair load refuses (digest mismatch);
    3. ``<name>.json``      -- served: the old pair; ``.prev.*``: a copy of it;
    4. ``<name>.npz``       -- served: the new metadata beside the old weights, a pair load refuses (the new
       metadata's digest is the candidate's weights'): restore ``.prev.*`` or rerun ``--apply``;
    after 4: the new pair. The served pair is never half replaced unnoticed. Each metadata goes before its
    weights because the one written always carries a digest, while the one it replaces may be from before
    digests, and such metadata beside new weights would load unverified.
    """
    from kube.atomic import atomic_write  # stdlib only; the one way drsched makes a file durable

    prev = prev_path(served)
    (new_npz, new_meta), (old_npz, old_meta) = _digested(candidate), _digested(served)
    for dst, data in ((meta_path(prev), old_meta), (prev, old_npz), (meta_path(served), new_meta),
                      (served, new_npz)):
        atomic_write(dst, data)
    return prev


@dataclass(kw_only=True)
class PromoteArgs:
    """What ``python -m policy.promote`` runs; each field is the command-line flag of the same name."""

    candidate: Path = option(metavar="PATH.npz")
    """the model that may replace the served one (its .json metadata beside it)"""
    served: Path = option(SHIPPED, metavar="PATH.npz")
    """the model served now, replaced with --apply if the candidate is promoted"""
    split: str = option(SPLIT, choices=tuple(SPLITS))
    """the split both models are evaluated on; only validation is allowed (test and lab are never chosen on)"""
    seeds: int | None = option(None, fill={"full": str(_DEFAULTS["seeds"]), "quick": str(_QUICK["seeds"])})
    """seeds per family and load (unset: {full}, with --quick {quick})"""
    seed_base: int | None = option(None, fill={"full": str(_DEFAULTS["seed_base"]), "quick": str(_QUICK["seed_base"])})
    """an offset into the validation split's own seed range, as policy.evaluate --split validation --seed-base
    (unset: {full}, with --quick {quick}); e.g. a block of episodes no earlier study or selection used"""
    as_served: float = option(DEFAULT_WEIGHT, metavar="WEIGHT")
    """score both models as deployed (policy.served: the shipped value-to-score mapping and hot filter) at
    extender weight WEIGHT, since that is what a promoted model would do on the cluster; 0: the raw argmax of
    each model's values (the two can disagree: a model better by argmax may be worse as served)"""
    workers: int = 1
    """parallel processes"""
    quick: bool = False
    """a smoke run of policy.evaluate's --quick size on validation (fewer seeds, shorter episodes)"""
    log: Path | None = option(None, metavar="DIR")
    """a decision log: report its on-policy mean JCT, the model versions that wrote it and both models on its
    pods by the contention model, which stops a promotion when it says the candidate loses"""
    log_rows: str = option("all", choices=LOG_ROWS)
    """which of --log's decisions judge the two models: all, served (the serve rows of --served's version) or
    shadow (bindings by another scheduler)"""
    nodes: str | None = option(None, metavar="N1,N2")
    """with --log: the nodes its pods could go to (unset: every node a row kept; an older log's shadow rows do
    not mark a tainted node)"""
    daemon_pods: int = option(0, metavar="N")
    """with --log: DaemonSet pods per node, for rows that did not count them (schema 2 logs)"""
    log_context: str = option(CONTEXTS[0], choices=CONTEXTS)
    """with --log: the cluster both models re-encode each decision over: logged (the figures the server logged,
    what it scored) or kept (the row's kept nodes among --nodes alone, as today's extender encodes over a pod's
    pool; a log written before it did counted every cached node, a tainted one among them)"""
    apply: bool = False
    """replace the served model if the candidate is promoted (unset: a dry run)"""
    report: Path | None = None
    """write the JSON report here (unset: print it)"""


def build_parser() -> argparse.ArgumentParser:
    return command_parser("policy.promote", __doc__, PromoteArgs)


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)  # noqa: T201 -- a command's one-line answer
    return 2


def _setup(args: PromoteArgs) -> dict:
    """The episodes both models run: the validation families at ``policy.evaluate``'s defaults for the mode."""
    d = _QUICK if args.quick else _DEFAULTS
    seeds = d["seeds"] if args.seeds is None else args.seeds
    offset = d["seed_base"] if args.seed_base is None else args.seed_base
    return {"split": args.split, "families": d["scenarios"].split(","), "seeds": seeds, "seed_offset": offset,
            "loads": [float(x) for x in d["loads"].split(",")], "jobs": d["jobs"], "as_served": args.as_served or None}


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    args: PromoteArgs = from_namespace(build_parser().parse_args(argv))
    if args.split in REFUSED:
        return _fail(f"--split {args.split}: {REFUSED[args.split]}")
    if args.seeds is not None and args.seeds < 1:
        return _fail(f"--seeds: at least 1 per family and load, got {args.seeds}")
    if args.seed_base is not None and args.seed_base < 0:
        return _fail(f"--seed-base: an offset into the split's seed range, at least 0, got {args.seed_base}")
    if not args.as_served >= 0:
        return _fail(f"--as-served: the extender weight must be >= 0 (0: raw argmax), got {args.as_served}")
    if args.daemon_pods < 0:
        return _fail(f"--daemon-pods: a count per node, at least 0, got {args.daemon_pods}")
    nodes = None if args.nodes is None else frozenset(n.strip() for n in args.nodes.split(",") if n.strip())
    if nodes is not None and not nodes:
        return _fail("--nodes: name at least one node (N1,N2,...)")
    if args.report is not None and not args.report.parent.is_dir():  # found out now, not after --apply
        return _fail(f"--report {args.report}: no such directory {args.report.parent}")
    try:
        candidate, served = load_model(args.candidate), load_model(args.served)
    except ModelError as exc:
        return _fail(str(exc))
    models = {name: describe(m, hashlib.sha256(Path(m.path).read_bytes()).hexdigest())
              for name, m in (("candidate", candidate), ("served", served))}  # before --apply may replace one
    setup = _setup(args)
    log.info("promote candidate=%s served=%s setup=%s", args.candidate, args.served, setup)
    try:
        log_info = None if args.log is None else log_summary(
            read_log(args.log).joined(), served_version=served.version,
            candidate=ModelScorer(candidate, name="candidate"), served=ModelScorer(served, name="served"),
            rows=args.log_rows, hot_filter=DEFAULT_HOT_FILTER if args.as_served else None, nodes=nodes,
            daemon_pods=args.daemon_pods, context=args.log_context)
    except (LogError, ModelError, ConfigError) as exc:
        return _fail(f"--log: {exc}")
    if log_info is not None and log_info["other_versions"]:
        log.warning("the log's serve rows were also written by model version(s) %s, not --served's %s: the "
                    "on-policy mean leaves their %d pods out", log_info["other_versions"], served.version,
                    log_info["serve_decisions"] - log_info["served_version_decisions"])
    try:
        cases = split_cases(args.split, setup["families"], setup["loads"], setup["seeds"], setup["seed_offset"])
        rows = [run_all(cases, [f"dqn:{m.path}"], setup["jobs"], args.workers, progress=False,
                        served_weight=args.as_served or None)[0] for m in (candidate, served)]
    except (ValueError, ConfigError, SimError) as exc:
        return _fail(str(exc))
    pairs = pair_rows(*rows)
    iv = interval([p.ratio for p in pairs])
    decision = log_veto(decide(iv, unfinished=(sum(p.candidate_unfinished for p in pairs),
                                               sum(p.served_unfinished for p in pairs))), log_info)
    applied = decision.promote and args.apply
    if applied:
        try:
            prev = install(Path(candidate.path), Path(served.path))
        except ModelError as exc:  # raised before any write: nothing was replaced
            return _fail(f"not installed (nothing replaced): {exc}")
        except OSError as exc:
            return _fail(f"promoted, but {served.path} may be half replaced (its previous files are "
                         f"{prev_path(Path(served.path))} / .prev.json): {exc}")
        log.info("installed served=%s version=%s previous=%s kept_as=%s", served.path, candidate.version,
                 served.version, prev)
    text = json.dumps(build_report(pairs=pairs, iv=iv, decision=decision, models=models, setup=setup,
                                   applied=applied, log_info=log_info), indent=2) + "\n"
    if args.report is not None:
        args.report.write_text(text)
    else:
        sys.stdout.write(text)
    log.info("%s: %s", verdict(decision, applied=applied), decision.reason)
    return 0 if decision.promote else 1


if __name__ == "__main__":
    sys.exit(main())
