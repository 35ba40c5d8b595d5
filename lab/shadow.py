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
created-to-finished where the lab's is submitted-to-finished. Shadow rows whose policy is not the compared
arm's (the extender was serving another arm's policy when the default arm ran) are counted and left out, and so
is every seed whose default or drsched run a gate flagged (``gates.csv``: the same runs ``lab report`` leaves out
and the next ``lab run`` reruns), so the check never reads a run the summary would not.
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
from policy.decisionlog import LogError, read_log
from policy.offline import model_based, predicted_at_binding
from policy.sim.calibration import default_params
from policy.sim.sharing import ContentionParams

DECISIONS = "decisions"


class ShadowError(LabError, ValueError):
    """A results directory ``lab shadow`` cannot read (no runs.csv, no kept log, a bad log row: says which)."""


@dataclass(frozen=True, slots=True)
class SeedCheck:
    seed: int
    variant: str
    shadowed: int               # default-arm pods with a shadow row and an outcome
    estimated: int              # of which the contention model could estimate
    agreed: int                 # of which drsched's shadow chose the node the default scheduler bound
    predicted: float | None     # mean JCT at drsched's choices / observed, default arm's pods
    predicted_lo: float | None
    predicted_hi: float | None
    measured: float | None      # drsched arm mean JCT / default arm mean JCT (jobs.csv)


def _mean_jct(rows: list[dict]) -> dict[tuple[int, str, str], float]:
    acc: dict[tuple[int, str, str], list[float]] = defaultdict(list)
    for r in rows:
        if r.get("jct_s") not in (None, ""):
            acc[(int(r["seed"]), r["arm"], r["variant"])].append(float(r["jct_s"]))
    return {k: sum(v) / len(v) for k, v in acc.items() if v}


def shadow_check(out: Path, *, arm: str = "model", baseline: str = "default", params: ContentionParams | None = None,
                 draws: int = 2000) -> dict:
    """Per seed, the shadow's predicted ratio against the measured one, and the verdict (module doc)."""
    params = default_params() if params is None else params
    policy = arms.parse(arm).policy
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
    prefixes = {r["run_id"] + "-": (int(r["seed"]), r["variant"]) for r in runs
                if r["arm"] == baseline and (int(r["seed"]), r["variant"]) not in left_flagged}
    by_seed: dict[tuple[int, str], list] = defaultdict(list)
    other_policy = 0
    for d, o in pairs:
        if d["mode"] != "shadow":
            continue
        key = next((k for p, k in prefixes.items() if d["name"].startswith(p)), None)
        if key is None:
            continue
        if d["policy"] != policy:
            other_policy += 1
            continue
        by_seed[key].append((d, o))
    seeds = []
    for (seed, variant), rows in sorted(by_seed.items()):
        e = model_based(rows, None, params=params, draws=draws, seed=seed)
        base, this = means.get((seed, baseline, variant)), means.get((seed, arm, variant))
        seeds.append(SeedCheck(seed, variant, sum(o is not None for _, o in rows), e.n, e.agreed, e.ratio, e.lo,
                               e.hi, this / base if base and this is not None else None))
    pred = [s.predicted for s in seeds if s.predicted is not None and s.measured is not None]
    meas = [s.measured for s in seeds if s.predicted is not None and s.measured is not None]
    # the protocol's primary endpoint on both sides: exp of the mean per-seed log ratio, the measured one with
    # its 95 % t-interval (lab.endpoint), so the verdict reads the interval lab report prints
    p_iv = interval([math.log(x) for x in pred if x > 0])
    m_iv = interval([math.log(x) for x in meas if x > 0])
    p_mean, m_mean = p_iv.ratio, m_iv.ratio
    inside, miss = None, None
    if pred and math.isfinite(m_iv.low):
        lo, hi = m_iv.low, m_iv.high
        inside = lo <= p_mean <= hi
        miss = 0.0 if inside else (p_mean - hi if p_mean > hi else p_mean - lo)
    kept = {r["run_id"]: r for r in runs if r["arm"] in (arm, baseline)
            and (int(r["seed"]), r["variant"]) not in left_flagged}
    return {"arm": arm, "baseline": baseline, "policy": policy, "seeds": [_as_dict(s) for s in seeds],
            "at_binding": at_binding(pairs, kept, jobs, params=params),
            "paired_seeds": len(pred), "predicted_mean": _r(p_mean), "predicted_low": _r(p_iv.low),
            "predicted_high": _r(p_iv.high), "measured_mean": _r(m_mean), "measured_low": _r(m_iv.low),
            "measured_high": _r(m_iv.high), "inside": inside, "miss": _r(miss),
            "left_out_other_policy": other_policy,
            "left_out_flagged": [{"seed": seed, "variant": variant,
                                  "why": [w for a in (baseline, arm) for w in flagged.get((seed, a, variant), [])]}
                                 for seed, variant in left_flagged]}


def at_binding(pairs: list, runs: dict[str, dict], jobs: list[dict], *, params: ContentionParams) -> list[dict]:
    """Per arm and node the pods ran on: the contention model's mean predicted slowdown at the binding
    (``policy.offline.predicted_at_binding``: the number every estimate is anchored on) against the measured
    one (jobs.csv ``run_slowdown``: run time over solo time on that node's type) and the slowdown against
    the job's best node (``best_slowdown``: what node speed adds). Each arm's own rows only (the default
    arm's shadow rows, the drsched arm's serve rows), pods of ``runs`` (run id -> runs.csv row)."""
    by_job = {(r["seed"], r["arm"], r["variant"], r["job"]): r for r in jobs}
    acc: dict[tuple[str, str], list[tuple[float, float, float]]] = defaultdict(list)
    for d, o in pairs:
        run_id, _, job = d["name"].rpartition("-")
        run = runs.get(run_id)
        if run is None or (d["mode"] == "shadow") != (arms.parse(run["arm"]).policy is None):
            continue
        j = by_job.get((run["seed"], run["arm"], run["variant"], job))
        got = predicted_at_binding(d, o, params=params)
        if j is None or got is None or j.get("run_slowdown") in (None, "") or j.get("best_slowdown") in (None, ""):
            continue
        acc[(run["arm"], got[0])].append((got[1], float(j["run_slowdown"]), float(j["best_slowdown"])))
    return [{"arm": a, "node": node, "pods": len(v), "predicted": _r(sum(x[0] for x in v) / len(v)),
             "measured": _r(sum(x[1] for x in v) / len(v)), "vs_best_node": _r(sum(x[2] for x in v) / len(v))}
            for (a, node), v in sorted(acc.items())]


def _as_dict(s: SeedCheck) -> dict:
    return {f: getattr(s, f) for f in SeedCheck.__slots__}


def _r(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), 4)


def markdown(res: dict) -> str:
    """The check as a table and a verdict line."""
    lines = [f"# Shadow prediction vs measured: {res['arm']} / {res['baseline']} (policy {res['policy']})", "",
             "| seed | variant | shadowed pods | estimated | agreed | predicted JCT ratio (95 % bootstrap) | "
             "measured JCT ratio |", "|---|---|---|---|---|---|---|"]

    def f(x):
        return "–" if x is None else f"{x:.3f}"

    for s in res["seeds"]:
        lines.append(f"| {s['seed']} | {s['variant']} | {s['shadowed']} | {s['estimated']} | {s['agreed']} | "
                     f"{f(s['predicted'])} ({f(s['predicted_lo'])}-{f(s['predicted_hi'])}) | {f(s['measured'])} |")
    lines.append("")
    if res["inside"] is None:
        lines.append(f"Over {res['paired_seeds']} seed(s) with both: predicted {f(res['predicted_mean'])}, measured "
                     f"{f(res['measured_mean'])}; no measured interval (fewer than two seeds), so no verdict.")
    else:
        lines.append(f"Over {res['paired_seeds']} seeds (exp of the mean per-seed log ratio, the protocol's "
                     f"endpoint): predicted {f(res['predicted_mean'])}, measured {f(res['measured_mean'])} "
                     f"(95 % interval {f(res['measured_low'])}-{f(res['measured_high'])}): "
                     + ("inside the measured interval." if res["inside"] else
                        f"outside it, by {res['miss']:+.3f}."))
    if res.get("at_binding"):
        lines += ["", "The contention model at the binding, which anchors every estimate: its predicted slowdown of "
                  "each pod where it ran against the measured one (run time over solo time on that node's type), "
                  "and what node speed adds (against the job's best node):", "",
                  "| arm | node | pods | predicted slowdown | measured | measured vs best node |",
                  "|---|---|---:|---:|---:|---:|"]
        lines += [f"| `{b['arm']}` | {b['node']} | {b['pods']} | {f(b['predicted'])} | {f(b['measured'])} | "
                  f"{f(b['vs_best_node'])} |" for b in res["at_binding"]]
        lines.append("")
    if res["left_out_other_policy"]:
        lines.append(f"{res['left_out_other_policy']} shadow rows were left out: the extender served another policy "
                     "when the default arm ran.")
    for f_ in res.get("left_out_flagged", []):
        lines.append(f"Seed {f_['seed']} ({f_['variant']}) left out: a gate flagged its run ({'; '.join(f_['why'])}); "
                     "the next `lab run` reruns it.")
    return "\n".join(lines) + "\n"
