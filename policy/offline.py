"""Offline evaluation on a decision log: what a policy's mean JCT would have been, from what was logged. Pure.

Why: before a candidate replaces the served policy, its value should be estimated from what happened on
the cluster, not only in the simulator. Importance weighting makes that unbiased where the log holds the
probability of each logged choice (exploration, ``policy.explore``): a target policy's mean outcome is

    IPS    V = 1/n  sum_i  1[target(row_i) = chosen_i] / propensity_i * jct_i
    SNIPS  V = sum_i w_i jct_i / sum_i w_i      (w_i = the same weights; lower variance, slightly biased)

over the decisions with an outcome, each with a 95 % bootstrap interval (seeded, so reruns agree). The
action is the extender's top node; kube-scheduler adds its own plugins' scores, so the estimate assumes it
binds that node: the report counts the decisions whose pod ended elsewhere (``bound_elsewhere``), and the
estimate means little when they are many.

Targets are functions of a logged row. The log holds each decision's full score vector but not the
cluster's state, so the policies it can evaluate are those computable from it: ``logged`` (the choice
made, i.e. the on-policy mean) and ``greedy`` (the logged policy's best raw value, exploration removed).
Shadow rows have no propensity (another scheduler
decided), so for them the model's ``predicted_gain`` and the observed JCT split by agreement are reported,
and any other policy is evaluated by the contention model (``--policy``, below).

Shadow mode scores every node it caches, so a shadow row's kept nodes may hold one the pod could never go to
(a tainted node: the constraints only kube-scheduler knows, ``extender.shadow``); ``--nodes`` names the
nodes a policy may pick (and a recorded choice must be one of).

**Any policy, by the calibrated contention model** (``--policy SPEC``: a baseline's name or ``dqn:<model.npz>``;
``model_based``). Where no propensity covers a policy's choice (every shadow row; every serve row the policy
would decide otherwise without exploration), importance weighting has nothing to weigh, so the log's own
snapshot answers instead: ``policy.logged.encoding`` rebuilds what the extender saw at the decision (the kept
nodes' usage, requests and pod counts, the pod's demand profile), the policy picks among the kept feasible nodes
(its raw argmax; the model scores the logged encoding, bitwise what the extender scored), and the simulator's
calibrated contention model (``policy.sim.sharing.shared_rates`` under ``policy.sim.calibration``'s active
set) predicts the pod's slowdown ``s`` on the node it was bound to (``b``) and on the policy's pick (``t``). The
observed outcome is the anchor: the pod's run time is scaled by the predicted ratio and its wait kept,

    jct_hat = (jct - run) + run * s_t / s_b          (run_s: run * s_t / s_b)

so a policy that agrees with the binding gets the observed value exactly, and only the model's *relative*
error between two nodes enters (the doubly robust correction on explored serve rows is then zero: the
estimate is already exact on the logged action). Reported: the policy's mean, the observed mean over the same
pods, their ratio with a 95 % paired bootstrap interval, agreement, and why rows were left out. What it
assumes, and why it is an estimate and not a replay: the rates at the decision hold for the pod's whole
stay; the other pods' placements stay as logged (one decision changed at a time, no knock-on effects on later
pods); the policy chooses only among the row's kept nodes (``inputs.at``: the best K by drsched's score and
the chosen and actual ones); a node's jobs are equal shares of its estimated usage. The slowdowns are
``policy.predicted.predicted_slowdowns``, the function shadow mode records its live predicted gain with, so the
two agree on the same snapshot. A node's jobs are its pods less its DaemonSet pods, which run on every node
and do no job's work (the lab's monitor): as each row counted them (schema 3), or ``--daemon-pods`` per node
for rows that did not (schema 2 logs, written before the extender counted them).

The policy scores each decision encoded over ``--context`` (``policy.logged.CONTEXTS``): ``logged`` (the default),
the cluster the server encoded over, by the figures it logged; ``kept``, the row's kept nodes among ``--nodes``
alone, as today's extender encodes a pod over its pool: on a log written before it did (every cached node, a
tainted one among them, in the mean capacity and the cluster summary), what the policy would pick now.

The policy picks as the extender would serve it with ``--hot-filter MODE`` (a ``policy.served.HOT_FILTERS``
mode, the shipped thresholds): the nodes its hot filter refuses are out, and a tie with the bound node keeps
the bound node, as shadow mode records its own choice (``policy.served.served_choice``); without it, the raw
argmax among the feasible kept nodes.

    python -m policy.offline /var/lib/drsched/decisions --target greedy
    python -m policy.offline /var/lib/drsched/decisions --policy lookahead --policy dqn:policy/models/dqn.npz
    python -m policy.offline DIR --policy dqn:policy/models/default.npz --hot-filter prefer-cool --daemon-pods 1
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from policy.baselines import UnknownScorer, pick
from policy.decisionlog import LogError, Row, read_log
from policy.logged import CONTEXTS, encoding
from policy.model import ModelError, ModelScorer, Scorer
from policy.predicted import predicted_slowdowns
from policy.served import HOT_FILTERS, HOT_THRESHOLDS, hot_nodes, hot_refused, served_choice
from policy.sim import calibration
from policy.sim.calibration import default_params
from policy.sim.episode import scorer_from_spec
from policy.sim.errors import ConfigError
from policy.sim.sharing import ContentionParams

Target = Callable[[Row], str | None]


def _greedy(row: Row) -> str | None:
    raw = [(-np.inf if v is None else v) for v in row["raw"]]
    best = int(np.argmax(raw)) if raw else -1
    return row["nodes"][best] if best >= 0 and np.isfinite(raw[best]) else None


TARGETS: dict[str, Target] = {"logged": lambda r: r["chosen"], "greedy": _greedy}


@dataclass(frozen=True, slots=True)
class Estimate:
    estimator: str
    value: float | None   # mean JCT (s) the target would have had
    lo: float | None      # 95 % bootstrap interval
    hi: float | None
    n: int                # decisions with an outcome
    matched: int          # of which the target agrees with the logged choice


def _bootstrap(fn: Callable[[np.ndarray], float], n: int, *, draws: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    vals = [fn(rng.integers(0, n, n)) for _ in range(draws)]
    vals = [v for v in vals if np.isfinite(v)]
    return (float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))) if vals else (np.nan, np.nan)


def importance_weighted(pairs: list[tuple[Row, Row]], target: Target, *, reward: str = "jct_s",
                        draws: int = 1000, seed: int = 0) -> list[Estimate]:
    """IPS and SNIPS estimates of ``target``'s mean ``reward`` over (decision, outcome) pairs."""
    rows = [(d, o) for d, o in pairs
            if o is not None and o[reward] is not None and d["chosen"] is not None and d["propensity"] > 0]
    n = len(rows)
    if n == 0:
        return [Estimate(e, None, None, None, 0, 0) for e in ("ips", "snips")]
    w = np.array([float(target(d) == d["chosen"]) / d["propensity"] for d, _ in rows])
    r = np.array([float(o[reward]) for _, o in rows])

    def ips(idx: np.ndarray) -> float:
        return float((w[idx] * r[idx]).mean())

    def snips(idx: np.ndarray) -> float:
        s = w[idx].sum()
        return float((w[idx] * r[idx]).sum() / s) if s > 0 else np.nan

    out, everyone = [], np.arange(n)
    for name, fn in (("ips", ips), ("snips", snips)):
        value = fn(everyone)
        lo, hi = _bootstrap(fn, n, draws=draws, seed=seed)
        out.append(Estimate(name, _clean(value), _clean(lo), _clean(hi), n, int((w > 0).sum())))
    return out


def shadow_summary(pairs: list[tuple[Row, Row]], *, reward: str = "jct_s") -> dict:
    """Shadow rows: agreement, mean predicted gain, and the observed mean JCT where drsched agreed / differed."""
    rows = [(d, o) for d, o in pairs if d["mode"] == "shadow" and d["chosen"] is not None]
    agree = [d["chosen"] == d["actual"] for d, _ in rows]
    gains = [d["predicted_gain"] for d, _ in rows if d["predicted_gain"] is not None]

    def mean_jct(flag: bool) -> float | None:
        xs = [o[reward] for (_, o), a in zip(rows, agree, strict=True) if a is flag and o and o[reward] is not None]
        return _clean(float(np.mean(xs))) if xs else None

    return {"decisions": len(rows), "agreement_rate": _clean(float(np.mean(agree))) if rows else None,
            "mean_predicted_gain": _clean(float(np.mean(gains))) if gains else None,
            "observed_mean_jct_where_agreed": mean_jct(True), "observed_mean_jct_where_differed": mean_jct(False)}


MODEL_SKIPS = ("no_outcome", "no_inputs", "bound_unknown", "bound_not_kept", "no_pick")
"""Why a (decision, outcome) pair gives no model-based estimate: the pod has not ended (or has no run time),
the row has no ``inputs``, no bound node is known, the bound node is not among the kept nodes, or the policy
allows none of them."""


@dataclass(frozen=True, slots=True)
class ModelEstimate:
    policy: str
    params: str           # the contention parameters' label
    n: int                # pairs estimated
    agreed: int           # of which the policy picks the node the pod was bound to
    value: float | None   # the policy's estimated mean reward over those pods
    observed: float | None  # the observed mean reward over the same pods
    ratio: float | None   # value / observed
    lo: float | None      # 95 % paired bootstrap interval of the ratio
    hi: float | None
    skipped: dict


def bound_node(decision: Row, outcome: Row | None) -> str | None:
    """Where the pod ran: the outcome's node, else the shadow's actual node, else the serve row's choice."""
    if outcome is not None and outcome["node"] is not None:
        return outcome["node"]
    return decision["actual"] if decision["mode"] == "shadow" else decision["chosen"]


def _scores(scorer: Scorer, dec) -> np.ndarray:
    if isinstance(scorer, ModelScorer):
        return scorer.score_encoded(dec.enc)  # the logged cluster row: bitwise what the extender scored
    return scorer.score(dec.snap, dec.pod)


RECORDED = "recorded"
"""The policy spec (``--policy recorded``, ``scorer=None``) meaning drsched's own choice as the row recorded it:
the node the served policy picked with its hot filter (a shadow row's ``chosen``), not a rule re-run here."""


def _pick(scorer: Scorer | None, d: Row, dec, *, hot_filter: str | None = None, bound: int | None = None,
          nodes: frozenset[str] | None = None) -> int | None:
    if scorer is None:
        ok = d["chosen"] in dec.names and (nodes is None or d["chosen"] in nodes)
        return dec.names.index(d["chosen"]) if ok else None
    raw = np.asarray(_scores(scorer, dec), dtype=np.float64)
    mask = dec.enc.mask if nodes is None else dec.enc.mask & np.isin(dec.names, list(nodes))
    if hot_filter is None:
        return pick(raw, mask)
    hot = hot_nodes(dec.snap, HOT_THRESHOLDS, d["inputs"]["max_usage_age"], pod=dec.pod, mode=hot_filter)
    return served_choice(raw, mask & np.isfinite(raw) & ~hot_refused(mask, hot, hot_filter), bound)


def model_estimates(pairs: list[tuple[Row, Row | None]], scorer: Scorer | None, *, params: ContentionParams,
                    reward: str = "jct_s", hot_filter: str | None = None, daemon_pods: int = 0,
                    nodes: frozenset[str] | None = None,
                    context: str = "logged") -> tuple[dict[int, tuple[float, float, bool, str]], dict]:
    """Per pair (its index in ``pairs``): ``scorer``'s estimated ``reward`` (None: of the row's recorded choice,
    ``RECORDED``), the observed one, whether it agrees with the binding, and the node it picks (module doc: the
    served pick with ``hot_filter``, the jobs on a node without its DaemonSet pods, ``daemon_pods`` per node
    where the row did not count them, among ``nodes`` only if given:
    the nodes the pod could go to, where a shadow row's kept nodes hold one it could not, e.g. a tainted one;
    each decision encoded over ``context``, ``policy.logged.encoding``'s, among ``nodes``);
    and the count of pairs left out, by ``MODEL_SKIPS`` reason."""
    skipped = dict.fromkeys(MODEL_SKIPS, 0)
    out: dict[int, tuple[float, float, bool, str]] = {}
    for k, (d, o) in enumerate(pairs):
        if o is None or o[reward] is None or o["run_s"] is None:
            skipped["no_outcome"] += 1
            continue
        if d["inputs"] is None:
            skipped["no_inputs"] += 1
            continue
        bound = bound_node(d, o)
        if bound is None:
            skipped["bound_unknown"] += 1
            continue
        dec = encoding(d, context=context, nodes=nodes)
        if bound not in dec.names:
            skipped["bound_not_kept"] += 1
            continue
        b = dec.names.index(bound)
        t = _pick(scorer, d, dec, hot_filter=hot_filter, bound=b, nodes=nodes)
        if t is None:
            skipped["no_pick"] += 1
            continue
        r, run = float(o[reward]), float(o["run_s"])
        if t == b:
            out[k] = (r, r, True, bound)
            continue
        s_t, s_b = predicted_slowdowns(dec.snap, dec.pod, [t, b], params=params, daemon_pods=dec.daemons(daemon_pods),
                                       max_usage_age=d["inputs"]["max_usage_age"])
        ratio = s_t / s_b
        out[k] = (r - run + run * ratio if reward == "jct_s" else run * ratio, r, False, dec.names[t])
    return out, skipped


def predicted_at_binding(d: Row, o: Row | None, *, params: ContentionParams,
                         daemon_pods: int = 0) -> tuple[str, float] | None:
    """The node a logged pod ran on and the contention model's slowdown for it there, from the row's own
    snapshot (what ``model_estimates`` divides by); None where the row has no inputs or its node is unknown or
    not kept. Set beside the pod's measured slowdown it says whether the model that anchors every estimate is
    right about the cluster (``lab shadow``)."""
    bound = bound_node(d, o)
    got = predicted_on(d, [bound], params=params, daemon_pods=daemon_pods) if bound is not None else None
    return None if got is None else (bound, got[0])


def predicted_on(d: Row, nodes: list[str], *, params: ContentionParams, daemon_pods: int = 0) -> list[float] | None:
    """The pod's slowdown on each of ``nodes`` from the row's own snapshot (``policy.predicted``, as shadow mode
    recorded it live: a shadow row of schema 3 under the same ``params`` gives its ``slowdown`` back); None where
    the row has no inputs or keeps not every one of ``nodes``."""
    if d["inputs"] is None:
        return None
    dec = encoding(d)
    if not all(n in dec.names for n in nodes):
        return None
    return predicted_slowdowns(dec.snap, dec.pod, [dec.names.index(n) for n in nodes], params=params,
                               daemon_pods=dec.daemons(daemon_pods), max_usage_age=d["inputs"]["max_usage_age"])


def _ratio_interval(num: np.ndarray, den: np.ndarray, *, draws: int, seed: int) -> tuple[float, float, float]:
    """mean(num) / mean(den) and its 95 % paired bootstrap interval."""
    def ratio_of(idx: np.ndarray) -> float:
        d = den[idx].mean()
        return float(num[idx].mean() / d) if d > 0 else np.nan

    lo, hi = _bootstrap(ratio_of, len(num), draws=draws, seed=seed)
    return ratio_of(np.arange(len(num))), lo, hi


def model_based(pairs: list[tuple[Row, Row | None]], scorer: Scorer | None, *,
                params: ContentionParams | None = None,
                params_label: str = "active", reward: str = "jct_s", draws: int = 1000,
                seed: int = 0, hot_filter: str | None = None, daemon_pods: int = 0,
                nodes: frozenset[str] | None = None, context: str = "logged") -> ModelEstimate:
    """``scorer``'s mean ``reward`` over the logged pods, by the contention model anchored at the observed
    outcome (module doc); the ratio is to the observed mean over the same pods."""
    params = default_params() if params is None else params
    per, skipped = model_estimates(pairs, scorer, params=params, reward=reward, hot_filter=hot_filter,
                                   daemon_pods=daemon_pods, nodes=nodes, context=context)
    return estimate_of(list(per.values()), skipped, policy=_name(scorer), params_label=params_label, draws=draws,
                       seed=seed)


def estimate_of(per: list[tuple[float, float, bool, str]], skipped: dict, *, policy: str, params_label: str,
                draws: int = 1000, seed: int = 0) -> ModelEstimate:
    """The ``ModelEstimate`` of per-pod ``model_estimates`` values (several calls' values may be pooled, e.g.
    rows estimated with their recorded choice and rows re-scored with a policy)."""
    if not per:
        return ModelEstimate(policy, params_label, 0, 0, None, None, None, None, None, skipped)
    e, ob = (np.array([v[j] for v in per]) for j in (0, 1))
    ratio, lo, hi = _ratio_interval(e, ob, draws=draws, seed=seed)
    return ModelEstimate(policy, params_label, len(per), sum(v[2] for v in per), _clean(e.mean()),
                         _clean(ob.mean()), _clean(ratio), _clean(lo), _clean(hi), skipped)


@dataclass(frozen=True, slots=True)
class PairedEstimate:
    candidate: str
    baseline: str
    params: str
    n: int                  # pods both policies could be estimated on
    differ: int             # of which the two pick different nodes
    candidate_value: float | None
    baseline_value: float | None
    ratio: float | None     # candidate / baseline mean reward
    lo: float | None        # 95 % paired bootstrap interval of the ratio
    hi: float | None
    skipped: dict           # the candidate's skips (the rows left out are the same for both but ``no_pick``)


def model_paired(pairs: list[tuple[Row, Row | None]], candidate: Scorer, baseline: Scorer, *,
                 params: ContentionParams | None = None, params_label: str = "active", reward: str = "jct_s",
                 draws: int = 1000, seed: int = 0, hot_filter: str | None = None, daemon_pods: int = 0,
                 nodes: frozenset[str] | None = None, context: str = "logged") -> PairedEstimate:
    """Two policies on the same logged pods by the contention model: mean ``reward`` candidate / baseline,
    paired (each pod counts for both, so the interval is of the difference the policies make, not of the
    spread of the pods). ``hot_filter``, ``daemon_pods``, ``nodes`` and ``context`` as ``model_estimates``, the same for
    both: without ``nodes`` a shadow row of schema 2, which did not mark the nodes the pod could not go to
    (a tainted one), lets either policy pick such a node (on the lab's log of 2026-12-07, a third of its
    shadow rows: ``results/policy/promote-log``)."""
    params = default_params() if params is None else params
    how = {"params": params, "reward": reward, "hot_filter": hot_filter, "daemon_pods": daemon_pods, "nodes": nodes,
           "context": context}
    c, skipped = model_estimates(pairs, candidate, **how)
    b, _ = model_estimates(pairs, baseline, **how)
    both = sorted(c.keys() & b.keys())
    if not both:
        return PairedEstimate(candidate.name, baseline.name, params_label, 0, 0, None, None, None, None, None,
                              skipped)
    ec, eb = np.array([c[k][0] for k in both]), np.array([b[k][0] for k in both])
    ratio, lo, hi = _ratio_interval(ec, eb, draws=draws, seed=seed)
    return PairedEstimate(candidate.name, baseline.name, params_label, len(both), sum(c[k][3] != b[k][3] for k in both),
                          _clean(ec.mean()), _clean(eb.mean()), _clean(ratio), _clean(lo), _clean(hi), skipped)


def _name(scorer: Scorer | None) -> str:
    return RECORDED if scorer is None else scorer.name


def _clean(x: float) -> float | None:
    return round(float(x), 6) if x is not None and np.isfinite(x) else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m policy.offline", description=__doc__.split("\n\n")[0])
    p.add_argument("log", nargs="+", help="decision log directory(ies) or segment file(s)")
    p.add_argument("--target", choices=sorted(TARGETS), default="greedy", help="policy to evaluate (module doc)")
    p.add_argument("--reward", choices=("jct_s", "run_s"), default="jct_s", help="outcome to average")
    p.add_argument("--draws", type=int, default=1000, help="bootstrap resamples for the interval")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    p.add_argument("--policy", action="append", default=[], metavar="SPEC",
                   help="also estimate this policy by the calibrated contention model (module doc): a baseline's "
                        "name, dqn:<model.npz>, or 'recorded' (drsched's choice as each row recorded it); "
                        "repeatable")
    p.add_argument("--params", default=None, metavar="SET",
                   help="contention parameter set of the calibration file for --policy (default: its active set)")
    p.add_argument("--hot-filter", choices=HOT_FILTERS, default=None,
                   help="--policy picks as served with this hot filter, ties kept on the bound node (module doc; "
                        "unset: the raw argmax)")
    p.add_argument("--nodes", default=None, metavar="N1,N2",
                   help="the nodes the pods could go to (module doc; unset: every kept node)")
    p.add_argument("--context", choices=CONTEXTS, default=CONTEXTS[0],
                   help="the cluster --policy re-encodes each decision over (module doc): logged, the figures the "
                        "server logged; kept, the row's kept nodes among --nodes alone, as today's extender encodes "
                        "over a pod's pool (default: %(default)s)")
    p.add_argument("--daemon-pods", type=int, default=0, metavar="N",
                   help="pods on every node that are no job (DaemonSets), left out of the contention model's split, "
                        "for rows that did not count them (schema 2 logs; newer rows record each node's count)")
    a = p.parse_args(argv)
    try:
        scorers = [None if spec == RECORDED else scorer_from_spec(spec, seed=a.seed) for spec in a.policy]
        params = default_params() if a.params is None else calibration.params_of(
            calibration.read(calibration.DEFAULT_PATH), a.params)
        nodes = None if a.nodes is None else frozenset(n.strip() for n in a.nodes.split(",") if n.strip())
        log = read_log(a.log)
        pairs = log.joined()
        by_model = [asdict(model_based(pairs, sc, params=params, params_label=a.params or "active",
                                       reward=a.reward, draws=a.draws, seed=a.seed, hot_filter=a.hot_filter,
                                       daemon_pods=a.daemon_pods, nodes=nodes, context=a.context))
                    for sc in scorers]
    except (LogError, ModelError, UnknownScorer, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201 -- a command's answer
        return 2
    serve = [(d, o) for d, o in pairs if d["mode"] == "serve"]
    explored = sum(1 for d, _ in serve if d["propensity"] < 1)
    elsewhere = sum(1 for d, o in serve if o is not None and o["node"] is not None and o["node"] != d["chosen"])
    report = {"decisions": len(pairs), "with_outcome": sum(o is not None for _, o in pairs),
              "torn_lines_skipped": len(log.torn), "serve": {"decisions": len(serve), "explored": explored,
                                                            "bound_elsewhere": elsewhere},
              "target": a.target, "reward": a.reward, "context": a.context,
              "estimates": [asdict(e) for e in importance_weighted(serve, TARGETS[a.target], reward=a.reward,
                                                                  draws=a.draws, seed=a.seed)],
              "shadow": shadow_summary(pairs, reward=a.reward), "model_based": by_model}
    print(json.dumps(report, indent=2))  # noqa: T201 -- a command's answer
    return 0


if __name__ == "__main__":
    sys.exit(main())
