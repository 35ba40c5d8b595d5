"""``lab shadow``: does shadow mode's prediction match what the drsched arm measures? (issue #23 D6)

Why it exists: shadow mode exists so a team can see what drsched would gain before it lets drsched decide. That
prediction is worth something only if it matches what happens when drsched does decide, and the lab is where
both can be had on the same schedule: in the ``default`` arm the extender shadows every binding of the
default scheduler (``lab.kube.SHADOW_ARGS``) and logs, with the pod's outcome, the node its policy would have
chosen; the ``model`` arm then runs the same jobs with drsched deciding. Here the two meet:

* **predicted**, per seed: the mean JCT of the default arm's pods had each gone where drsched's shadow chose,
  over the mean JCT they had (``policy.offline.model_based`` with the recorded choice: the calibrated
  contention model's slowdown on both nodes, anchored at the observed outcome; exact where the two agree),
  from the run's kept decision log (``decisions/``, told apart by run through ``runs.csv``);
* **measured**, per seed: the drsched arm's mean JCT over the default arm's (``jobs.csv``), and over seeds
  the protocol's endpoint: exp of the mean log ratio with its 95 % t-interval (``lab.endpoint``), the
  prediction summed up the same way.

The verdict says whether the predicted ratio falls inside the measured interval, and by how much it
misses when not. To say why it misses, ``at_binding`` sets the contention model's slowdown of each pod where it
ran (the anchor of every estimate) beside the slowdown the pod measured there, per arm and node. The model's
slowdown is against the pod's demand met in full, so where the node is smaller than that demand it holds node
speed too, which the measured run slowdown (against solo on the same node type) does not.

Why they may differ even with a right contention model: the prediction changes one decision
at a time against the default arm's placements (the drsched arm's later pods meet drsched's earlier choices,
not the default's), assumes each node's load at the binding holds for the pod's stay, and its JCT is
created-to-finished where the lab's is submitted-to-finished. Every seed whose default or drsched run a gate
flagged (``gates.csv``: the same runs ``lab report`` leaves out and the next ``lab run`` reruns) is left out, so
the check never reads a run the summary would not.

**Re-scored, not live.** With ``order: random`` the extender serves, during a default arm, whatever drsched arm
rolled out before it, so its shadow rows hold another policy's choice. Each row still holds what the offline
evaluator needs (``inputs``: the snapshot the extender scored, the pod's demand and requests), so those rows are
re-scored with the compared arm's policy (``policy.offline``: the model scores the logged encoding, bitwise what
the extender scored; the arm's hot filter, a tie kept on the bound node, as shadow mode records its choice:
on the pilots' live rows this gives the recorded choice on every row). The model must be the one the arm served:
the model's version (the shipped one, or ``--model PATH`` for a run whose arm served an earlier model) is
checked against the drsched arm's own serve rows, and rows are left out (and counted) where it differs or the
arm served none. A seed's prediction says how many of its rows were
re-scored; a live and a re-scored prediction are the same estimate of the same choice, but only a live one
shows that the running extender made it.

**Job nodes only.** Shadow mode scores every node it caches, and the pod's tolerations and selectors are
constraints only kube-scheduler knows (``extender.shadow``), so its live choice can be the lab's tainted system
node ``rn-system``, where no job can run (a third of the rows of the three runs so far). A prediction must compare
placements the pod could have had: the nodes are those of ``nodes.csv``, and a live row whose choice lies
outside them is re-scored among them like a row of another policy (counted apart). Rows written since shadow
mode honours taints never choose it, and record it as not ready, so the re-scoring avoids it by itself too.

**Jobs, not daemons.** The contention model splits a node's estimated usage among its pods; every lab node
also runs the node monitor's DaemonSet pod (``manifests/monitor/daemonset.yaml``; the lab's gate checks that no
other system pod lands on a job node), which does no job's work, so ``LAB_DAEMON_PODS`` pods per node are left
out of that split (``policy.predicted.without_daemons``; ``--daemon-pods 0`` gives the earlier, phantom-job
figures). Rows of decision log schema 3 count each node's DaemonSet pods themselves, and that count is used.

**Over which cluster** (``context``, ``policy.logged.CONTEXTS``): a re-scored row is encoded over the figures the
server logged (``logged``, the default) or over its kept job nodes alone (``kept``, as today's extender encodes a
pod over its pool; the lab's logs written before it did counted the tainted system node in every figure).
The recorded choice of a live row is what it is, whatever the context.

**Cross-fitted contention** (``crossfit``): for each seed, the contention parameters are fitted from the decision
log of the *other* seeds' runs (every arm's pods that ended: ``policy.calibrate.fromlog``, the same grid and
loss as ``policy.calibrate log``) and that seed's prediction is made with them, so no pod is both fitted and
judged.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from lab import arms, report
from lab.endpoint import interval
from lab.errors import LabError
from lab.gates import flagged_runs
from policy.baselines import UnknownScorer, make_scorer
from policy.calibrate.fit import grid
from policy.calibrate.fromlog import Split, fit_from_log, samples
from policy.decisionlog import LogError, read_log
from policy.model import SHIPPED_MODEL, ModelError, ModelScorer, Scorer, load_model
from policy.offline import estimate_of, model_estimates, predicted_at_binding
from policy.served import HOT_FILTERS
from policy.sim.calibration import default_params
from policy.sim.sharing import ContentionParams

DECISIONS = "decisions"
LAB_DAEMON_PODS = 1
"""Pods on every lab node that are no job: the node monitor's DaemonSet pod (module doc)."""


class ShadowError(LabError, ValueError):
    """A results directory ``lab shadow`` cannot read (no runs.csv, no kept log, a bad log row: says which)."""


@dataclass(frozen=True, slots=True)
class SeedCheck:
    seed: int
    variant: str
    shadowed: int               # default-arm pods with a shadow row and an outcome
    rescored: int               # of the seed's rows, those re-scored offline (another policy served, or off_nodes)
    off_nodes: int              # of which the live choice was a node no job could go to (the tainted system node)
    estimated: int              # of which the contention model could estimate
    agreed: int                 # of which drsched's shadow chose the node the default scheduler bound
    predicted: float | None     # mean JCT at drsched's choices / observed, default arm's pods
    predicted_lo: float | None
    predicted_hi: float | None
    measured: float | None      # drsched arm mean JCT / default arm mean JCT (jobs.csv)
    params: str                 # the contention parameters: a set's label, or the cross-fitted set


def _mean_jct(rows: list[dict]) -> dict[tuple[int, str, str], float]:
    acc: dict[tuple[int, str, str], list[float]] = defaultdict(list)
    for r in rows:
        if r.get("jct_s") not in (None, ""):
            acc[(int(r["seed"]), r["arm"], r["variant"])].append(float(r["jct_s"]))
    return {k: sum(v) / len(v) for k, v in acc.items() if v}


def arm_scorer(policy: str, served: set[str], *, model_path: Path = SHIPPED_MODEL) -> tuple[Scorer | None, str]:
    """The compared arm's policy as its extender served it, to re-score shadow rows with, and '' ; or None and
    why not: ``served`` holds the model versions the arm's own serve rows recorded, and the policy found here
    must be the one (the model at ``model_path`` for ``model``, by default the shipped one, so that a run whose
    arm served an earlier model can name it; a ``policy.baselines`` rule otherwise)."""
    if not served:
        return None, "the drsched arm logged no serve row, so which model it served is unknown"
    if policy == "model":
        try:
            model = load_model(model_path)
        except ModelError as exc:
            return None, f"the model does not load: {exc}"
        scorer, version = ModelScorer(model), model.version
    else:
        try:
            scorer, version = make_scorer(policy), f"heuristic:{policy}"
        except UnknownScorer:
            return None, f"no policy named {policy!r} to re-score with"
    if served != {version}:
        return None, (f"the arm served {', '.join(sorted(served))}; here it is {version}"
                      + (" (--model names the model the arm served)" if policy == "model" and version not in served
                         else ""))
    return scorer, ""


def shadow_check(out: Path, *, arm: str = "model", baseline: str = "default", params: ContentionParams | None = None,
                 params_label: str = "active", draws: int = 2000, rescore: bool = True,
                 daemon_pods: int = LAB_DAEMON_PODS, crossfit: bool = False, by_kind: bool = False,
                 model: Path = SHIPPED_MODEL, context: str = "logged") -> dict:
    """Per seed, the shadow's predicted ratio against the measured one, and the verdict (module doc)."""
    params = default_params() if params is None else params
    parsed = arms.parse(arm)
    policy = parsed.policy
    if policy is None or arms.parse(baseline).policy is not None:
        raise ShadowError(f"--arm must be a drsched arm and --baseline a default-scheduler arm, got {arm!r} / "
                          f"{baseline!r}")
    runs = report.read_rows(out / "runs.csv")
    if not runs:
        raise ShadowError(f"{out}: no runs.csv (a run before shadow mode came to the lab has no kept log)")
    if not (out / DECISIONS).is_dir():
        raise ShadowError(f"{out}: no {DECISIONS}/ (the run's decision log was not kept)")
    try:
        pairs = read_log(out / DECISIONS).joined()
    except LogError as exc:
        raise ShadowError(str(exc)) from None
    flagged = flagged_runs(report.read_rows(out / "gates.csv"))
    left_flagged = sorted({(int(r["seed"]), r["variant"]) for r in runs
                           if (int(r["seed"]), r["arm"], r["variant"]) in flagged and r["arm"] in (arm, baseline)})
    jobs = report.read_rows(out / "jobs.csv")
    means = _mean_jct(jobs)
    run_of = {r["run_id"]: r for r in runs}
    job_nodes = frozenset(r["node"] for r in report.read_rows(out / "nodes.csv")) or None
    served = {d["model_version"] for d, _ in pairs if d["mode"] == "serve"
              and run_of.get(d["name"].rpartition("-")[0], {}).get("arm") == arm}
    scorer, why_not = (arm_scorer(policy, served, model_path=model) if rescore
                       else (None, "re-scoring was not asked for"))
    hot_filter = parsed.hot_filter or HOT_FILTERS[0]  # a plain arm keeps the extender's shipped filter
    prefixes = {r["run_id"] + "-": (int(r["seed"]), r["variant"]) for r in runs
                if r["arm"] == baseline and (int(r["seed"]), r["variant"]) not in left_flagged
                and (int(r["seed"]), baseline, r["variant"]) in means}  # a run stopped before its end: no jobs
    by_seed: dict[tuple[int, str], tuple[list, list]] = defaultdict(lambda: ([], []))
    other_policy = off_nodes = 0
    off: dict[tuple[int, str], int] = defaultdict(int)
    for d, o in pairs:
        if d["mode"] != "shadow":
            continue
        key = next((k for p, k in prefixes.items() if d["name"].startswith(p)), None)
        if key is None:
            continue
        live = d["policy"] == policy
        if live and (job_nodes is None or d["chosen"] is None or d["chosen"] in job_nodes):
            by_seed[key][0].append((d, o))
        elif scorer is not None:
            by_seed[key][1].append((d, o))
            off[key] += live
        elif live:
            off_nodes += 1
        else:
            other_policy += 1
    finished = {k: r for k, r in run_of.items() if (int(r["seed"]), r["arm"], r["variant"]) in means}
    fitted = _crossfit(pairs, finished, sorted({s for s, _ in by_seed}), daemon_pods=daemon_pods) if crossfit else {}
    seeds = []
    for (seed, variant), (live, other) in sorted(by_seed.items()):
        p = fitted.get(seed, params)
        label = f"cross-fitted {_label(p)}" if crossfit else params_label
        per_live, skip_live = model_estimates(live, None, params=p, daemon_pods=daemon_pods)
        try:
            per_other, skip_other = model_estimates(other, scorer, params=p, hot_filter=hot_filter, nodes=job_nodes,
                                                    daemon_pods=daemon_pods, context=context) if other else ({}, {})
        except LogError as exc:  # a row that lacks what --context kept needs
            raise ShadowError(str(exc)) from None
        e = estimate_of([*per_live.values(), *per_other.values()],
                        {k: skip_live[k] + skip_other.get(k, 0) for k in skip_live}, policy=policy,
                        params_label=label, draws=draws, seed=seed)
        base, this = means.get((seed, baseline, variant)), means.get((seed, arm, variant))
        rows = [*live, *other]
        seeds.append(SeedCheck(seed, variant, sum(o is not None for _, o in rows), len(other), off[(seed, variant)],
                               e.n, e.agreed, e.ratio, e.lo, e.hi,
                               this / base if base and this is not None else None, label))
    kept = {r["run_id"]: r for r in runs if r["arm"] in (arm, baseline)
            and (int(r["seed"]), r["variant"]) not in left_flagged}
    return {"arm": arm, "baseline": baseline, "policy": policy, "params": params_label if not crossfit else
            "cross-fitted", "daemon_pods": daemon_pods, "hot_filter": hot_filter, "context": context,
            "rescored_with": None if scorer is None else scorer.name, "not_rescored_why": why_not or None,
            "crossfit": {str(k): v.as_dict() for k, v in fitted.items()},
            "seeds": [_as_dict(s) for s in seeds], **verdict([_as_dict(s) for s in seeds]),
            "at_binding": at_binding(pairs, kept, jobs, params=params, daemon_pods=daemon_pods),
            **({"at_binding_by_kind": at_binding(pairs, kept, jobs, params=params, daemon_pods=daemon_pods,
                                                 by_kind=True)} if by_kind else {}),
            "left_out_other_policy": other_policy, "left_out_off_nodes": off_nodes,
            "job_nodes": None if job_nodes is None else sorted(job_nodes),
            "left_out_flagged": [{"seed": seed, "variant": variant,
                                  "why": [w for a in (baseline, arm) for w in flagged.get((seed, a, variant), [])]}
                                 for seed, variant in left_flagged]}


def verdict(seeds: list[dict]) -> dict:
    """Over the seeds with both a prediction and a measurement: the protocol's primary endpoint on both sides
    (exp of the mean per-seed log ratio, the measured one with its 95 % t-interval, ``lab.endpoint``, so the
    verdict reads the interval ``lab report`` prints), whether the prediction falls inside it and by how much it
    misses, and ``gap``: measured / predicted per seed, the same way (above 1: the shadow was optimistic)."""
    both = [s for s in seeds if s["predicted"] and s["measured"]]
    p_iv = interval([math.log(s["predicted"]) for s in both])
    m_iv = interval([math.log(s["measured"]) for s in both])
    g_iv = interval([math.log(s["measured"] / s["predicted"]) for s in both])
    inside, miss = None, None
    if both and math.isfinite(m_iv.low):
        inside = m_iv.low <= p_iv.ratio <= m_iv.high
        miss = 0.0 if inside else p_iv.ratio - (m_iv.high if p_iv.ratio > m_iv.high else m_iv.low)
    return {"paired_seeds": len(both), "predicted_mean": _r(p_iv.ratio), "predicted_low": _r(p_iv.low),
            "predicted_high": _r(p_iv.high), "measured_mean": _r(m_iv.ratio), "measured_low": _r(m_iv.low),
            "measured_high": _r(m_iv.high), "inside": inside, "miss": _r(miss), "gap_mean": _r(g_iv.ratio),
            "gap_low": _r(g_iv.low), "gap_high": _r(g_iv.high)}


def pooled(results: list[dict]) -> dict:
    """The verdict over the seeds of several results (post hoc: each was registered on its own)."""
    return verdict([s for res in results for s in res["seeds"]])


def verdict_line(v: dict, *, what: str = "") -> str:
    """The verdict as one sentence."""
    def f(x):
        return "–" if x is None else f"{x:.3f}"

    if v["inside"] is None:
        return (f"Over {v['paired_seeds']} seed(s) with both{what}: predicted {f(v['predicted_mean'])}, measured "
                f"{f(v['measured_mean'])}; no measured interval (fewer than two seeds), so no verdict.")
    return (f"Over {v['paired_seeds']} seeds{what} (exp of the mean per-seed log ratio, the protocol's endpoint): "
            f"predicted {f(v['predicted_mean'])}, measured {f(v['measured_mean'])} (95 % interval "
            f"{f(v['measured_low'])}-{f(v['measured_high'])}): "
            + ("inside the measured interval" if v["inside"] else f"outside it, by {v['miss']:+.3f}")
            + f"; measured / predicted per seed {f(v['gap_mean'])} ({f(v['gap_low'])}-{f(v['gap_high'])}).")


def _label(p: ContentionParams) -> str:
    d = p.as_dict()
    return ", ".join(f"{k}={v}" for k, v in d.items() if v != ContentionParams().as_dict()[k]) or "original"


def _crossfit(pairs: list, run_of: dict[str, dict], seeds: list[int], *,
              daemon_pods: int) -> dict[int, ContentionParams]:
    """Per seed, the contention parameters fitted on every other seed's pods (module doc)."""
    by_seed: dict[int, list] = defaultdict(list)
    for d, o in pairs:
        run = run_of.get(d["name"].rpartition("-")[0])
        if run is not None:
            by_seed[int(run["seed"])].append((d, o))
    candidates = grid()
    out = {}
    for seed in seeds:
        items, _ = samples([p for s, rows in by_seed.items() if s != seed for p in rows], daemon_pods=daemon_pods)
        if len(items) < 2:
            raise ShadowError(f"seed {seed}: {len(items)} pods of the other seeds to fit the contention model on")
        out[seed] = fit_from_log(Split(items, [], 0), candidates).params
    return out


def at_binding(pairs: list, runs: dict[str, dict], jobs: list[dict], *, params: ContentionParams,
               daemon_pods: int = LAB_DAEMON_PODS, by_kind: bool = False) -> list[dict]:
    """Per arm and node the pods ran on (and job kind, ``by_kind``): the contention model's mean predicted
    slowdown at the binding (``policy.offline.predicted_at_binding``: the number every estimate is anchored on)
    against the measured one (jobs.csv ``run_slowdown``: run time over solo time on that node's type) and the
    slowdown against the job's best node (``best_slowdown``: what node speed adds). The model's slowdown is
    against the pod's demand met in full, so it holds node speed too: ``alone`` is the model's slowdown of the
    pod on that node with nothing else there, ``sharing`` the mean of predicted / alone per pod (what sharing
    the node adds), and ``solo_vs_best`` the measured counterpart of ``alone`` (solo time on the node's type
    over the best node's), so ``sharing`` sits beside ``measured`` and ``predicted`` beside ``vs_best_node``.
    ``co_start`` and ``co_run``: the other jobs on the node when the pod started and, time-weighted, while it ran
    (jobs.csv times): where they differ the model's steady load at the binding cannot hold. Each arm's own rows
    only (the default arm's shadow rows, the drsched arm's serve rows), pods of ``runs`` (run id -> runs.csv
    row)."""
    by_job = {(r["seed"], r["arm"], r["variant"], r["job"]): r for r in jobs}
    co = co_runners(jobs)
    acc: dict[tuple[str, ...], list[tuple[float, ...]]] = defaultdict(list)
    for d, o in pairs:
        run_id, _, job = d["name"].rpartition("-")
        run = runs.get(run_id)
        if run is None or (d["mode"] == "shadow") != (arms.parse(run["arm"]).policy is None):
            continue
        j = by_job.get((run["seed"], run["arm"], run["variant"], job))
        got = predicted_at_binding(d, o, params=params, daemon_pods=daemon_pods)
        if j is None or got is None or any(j.get(c) in (None, "") for c in _MEASURED):
            continue
        alone = predicted_at_binding(_emptied(d, got[0]), o, params=params)[1]
        key = (run["arm"], j["kind"], got[0]) if by_kind else (run["arm"], got[0])
        acc[key].append((got[1], alone, got[1] / alone, float(j["run_slowdown"]), float(j["best_slowdown"]),
                         float(j["solo_s"]) / float(j["best_solo_s"]), *co.get(id(j), (math.nan, math.nan))))
    out = []
    for key, v in sorted(acc.items()):
        mean = [sum(x[i] for x in v) / len(v) for i in range(8)]  # co-runners: NaN (None) where a time is missing
        out.append({"arm": key[0], **({"kind": key[1]} if by_kind else {}), "node": key[-1], "pods": len(v),
                    "predicted": _r(mean[0]), "alone": _r(mean[1]), "sharing": _r(mean[2]), "measured": _r(mean[3]),
                    "vs_best_node": _r(mean[4]), "solo_vs_best": _r(mean[5]), "co_start": _r(mean[6]),
                    "co_run": _r(mean[7])})
    return out


def co_runners(jobs: list[dict]) -> dict[int, tuple[float, float]]:
    """Per finished job of jobs.csv (keyed by ``id`` of its row): how many other jobs of its run were on its
    node when it started, and their time-weighted number while it ran."""
    by_node: dict[tuple[str, ...], list[tuple[float, float, dict]]] = defaultdict(list)
    for r in jobs:
        if r.get("start_s") not in (None, "") and r.get("finish_s") not in (None, ""):
            by_node[(r["seed"], r["arm"], r["variant"], r["node"])].append(
                (float(r["start_s"]), float(r["finish_s"]), r))
    out = {}
    for rows in by_node.values():
        for s, f, r in rows:
            others = [(s2, f2) for s2, f2, r2 in rows if r2 is not r]
            at = sum(s2 <= s < f2 for s2, f2 in others)
            during = sum(max(0.0, min(f, f2) - max(s, s2)) for s2, f2 in others) / (f - s) if f > s else float(at)
            out[id(r)] = (float(at), during)
    return out


_MEASURED = ("run_slowdown", "best_slowdown", "solo_s", "best_solo_s")


def _emptied(d, node: str):
    """Decision row ``d`` with node ``node`` holding nothing (no usage, requests, assumed demand or pods)."""
    inputs = dict(d["inputs"])
    i = inputs["at"].index(d["nodes"].index(node))
    for name, empty in (("usage", [0.0] * 4), ("usage_age", 0.0), ("assumed", [0.0] * 4), ("requested", [0.0] * 2),
                        ("pods", 0.0)):
        inputs[name] = [empty if k == i else x for k, x in enumerate(inputs[name])]
    return type(d)(d.path, d.line, {**d.data, "inputs": inputs})


def _as_dict(s: SeedCheck) -> dict:
    return {f: getattr(s, f) for f in SeedCheck.__slots__}


def _r(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), 4)


def markdown(res: dict) -> str:
    """The check as a table and a verdict line."""
    lines = [f"# Shadow prediction vs measured: {res['arm']} / {res['baseline']} (policy {res['policy']})", "",
             f"Contention parameters: {res['params']}; {res['daemon_pods']} daemon pod(s) per node left out of "
             "the split.", "",
             "| seed | variant | shadowed pods | re-scored (live choice off the job nodes) | estimated | agreed | "
             "predicted JCT ratio (95 % bootstrap) | measured JCT ratio |", "|---|---|---|---|---|---|---|---|"]

    def f(x):
        return "–" if x is None else f"{x:.3f}"

    for s in res["seeds"]:
        lines.append(f"| {s['seed']} | {s['variant']} | {s['shadowed']} | {s['rescored']} ({s['off_nodes']}) | "
                     f"{s['estimated']} | "
                     f"{s['agreed']} | {f(s['predicted'])} ({f(s['predicted_lo'])}-{f(s['predicted_hi'])}) | "
                     f"{f(s['measured'])} |")
    lines.append("")
    if any(s["rescored"] for s in res["seeds"]):
        lines.append(f"**Re-scored, not live**: where the extender served another policy when the default arm ran, "
                     "or its live choice was a node no job could go to (in brackets: the tainted system node, "
                     "which shadow mode scores as it scores every cached node), the row's choice is "
                     f"{res['rescored_with']}'s among the job nodes, re-scored offline from the row's snapshot "
                     f"(hot filter {res['hot_filter']}, a tie kept on the bound node), not one the running "
                     "extender made.")
        lines.append("")
    if res["crossfit"]:
        lines += [f"Seed {k}: fitted on the other seeds' pods, {_label(ContentionParams(**v))}."
                  for k, v in res["crossfit"].items()]
        lines.append("")
    lines.append(verdict_line(res))
    for key, title in (("at_binding", "node"), ("at_binding_by_kind", "job kind and node")):
        if not res.get(key):
            continue
        kind = key.endswith("kind")
        lines += ["", f"The contention model at the binding, by arm and {title}, which anchors every estimate: its "
                  "predicted slowdown of each pod where it ran (against its demand met in full), the same with the "
                  "node empty (node speed alone), and the measured ones: run time over solo time on that node's "
                  "type, over solo time on the job's best node, and solo on this type over solo on the best; and the "
                  "other jobs on the node when the pod started and, time-weighted, while it ran:", "",
                  "| arm |" + (" kind |" if kind else "") + " node | pods | predicted | alone | predicted / alone | "
                  "measured | measured vs best node | solo vs best node | co-runners at start | over the run |",
                  "|---|" + ("---|" if kind else "") + "---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        lines += [f"| `{b['arm']}` |" + (f" {b['kind']} |" if kind else "") + f" {b['node']} | {b['pods']} | "
                  f"{f(b['predicted'])} | {f(b['alone'])} | {f(b['sharing'])} | {f(b['measured'])} | "
                  f"{f(b['vs_best_node'])} | {f(b['solo_vs_best'])} | {f(b['co_start'])} | {f(b['co_run'])} |"
                  for b in res[key]]
    lines.append("")
    if res["left_out_other_policy"]:
        lines.append(f"{res['left_out_other_policy']} shadow rows were left out: the extender served another policy "
                     f"when the default arm ran, and they were not re-scored ({res['not_rescored_why']}).")
    if res.get("left_out_off_nodes"):
        lines.append(f"{res['left_out_off_nodes']} shadow rows were left out: their live choice was a node no job "
                     f"could go to, and they were not re-scored ({res['not_rescored_why']}).")
    for f_ in res.get("left_out_flagged", []):
        lines.append(f"Seed {f_['seed']} ({f_['variant']}) left out: a gate flagged its run ({'; '.join(f_['why'])}); "
                     "the next `lab run` reruns it.")
    return "\n".join(lines) + "\n"
