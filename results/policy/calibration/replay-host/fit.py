"""The pre-registered calibration in README.md beside this file: net-check's rule S (``policy.calibrate.stay``) with
one speed factor per compute kind, fitted on some seeds of the multi-resource run and scored on others. From the
repository root:

    PYTHONPATH=. python results/policy/calibration/replay-host/fit.py --results DIR --fit-seeds 311-316 \\
        [--held-out-results DIR2] [--held-out-seeds 317-319] [--out DIR3]

reads ``jobs.csv``, ``nodes.csv``, ``isolation.json`` and ``gates.csv`` of ``--results`` (and of
``--held-out-results`` for the held-out seeds, default the same directory; only the rows of the named seeds are
used), and writes ``predictions.csv`` (each scored job: measured and predicted run, the error at v = 1 and at the
fitted v), ``summary.json`` (every figure) and ``summary.md`` into ``--out`` (default: this directory).
Deterministic: the fit is an exhaustive grid.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from policy.calibrate.labdata import LabJob, read_jobs, read_nodes
from policy.calibrate.replay import Prediction
from policy.calibrate.stay import TEMPLATE_OF, CoRunner, rate_schedule, run_time
from policy.labworld import COMPUTE_KINDS, TEMPLATES, scaled_template
from policy.sim.calibration import default_params
from policy.sim.labmix import demand as template_demand
from policy.state import DEFAULT_DISK_MBPS

HERE = Path(__file__).parent
SPEEDS = tuple(round(0.70 + 0.01 * k, 2) for k in range(41))
"""The registered grid of v, per compute kind: 0.70, 0.71, ..., 1.10."""
TARGET = (0.10, 0.25)
"""Issue #21's target for held-out compute jobs: median and p90 of the error."""
KINDS = ("cpu", "train", "net", "io")


class Job:
    """One ``jobs.csv`` row with what S needs: its typed record, its template's demand and work at rate 1, its
    requests, and (once computed) its rate schedule on its node."""

    __slots__ = ("lab", "demand", "requests", "t1", "schedule")

    def __init__(self, lab: LabJob, row: dict, scale: float) -> None:
        tpl = scaled_template(TEMPLATES[TEMPLATE_OF[(lab.kind, int(row["work"]))]], scale)
        self.lab = lab
        self.demand = template_demand(tpl)
        self.requests = (lab.cpu_request_m / 1000, lab.mem_request_mi / 1024)
        self.t1 = float(row["best_solo_s"]) if row["best_solo_s"] else math.nan
        self.schedule: list[tuple[float, float]] = []


def seeds_arg(text: str) -> list[int]:
    out: list[int] = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def speeds_arg(text: str) -> dict[str, float]:
    out = {}
    for part in filter(None, text.split(",")):
        kind, _, v = part.partition("=")
        if kind not in COMPUTE_KINDS:
            raise argparse.ArgumentTypeError(f"not a compute kind: {kind!r}")
        out[kind] = float(v)
    return out


def flagged_runs(directory: Path) -> set[tuple[int, str, str]]:
    """(seed, arm, variant) of every run a ``gates.csv`` row flags; none when there is no such file."""
    path = directory / "gates.csv"
    if not path.exists():
        return set()
    with path.open(newline="") as f:
        return {(int(r["seed"]), r["arm"], r["variant"]) for r in csv.DictReader(f)
                if r["flagged"].strip() not in ("", "0", "false", "False")}


def load(directory: Path, seeds: list[int]) -> tuple[list[Job], dict[str, tuple], dict]:
    """The jobs of ``seeds`` in ``directory`` (no other row is kept), the nodes' capacities, and the runs
    ``gates.csv`` flags (their jobs still in the list: ``complete_seeds`` counts them, then drops them)."""
    scale = json.loads((directory / "isolation.json").read_text())["node_scale"]
    caps = {n.node: (n.cpu_quota_m / 1000, n.mem_mi / 1024, n.net_mbit / 8, DEFAULT_DISK_MBPS)
            for n in read_nodes(directory / "nodes.csv").values()}
    with (directory / "jobs.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    wanted = set(seeds)
    flagged = flagged_runs(directory)
    jobs, left_out = [], sorted({f"{s} {a} {v}" for s, a, v in flagged if s in wanted})
    for lab, row in zip(read_jobs(directory / "jobs.csv"), rows, strict=True):
        if lab.seed in wanted:
            jobs.append(Job(lab, row, scale))
    keys = [(j.lab.run, j.lab.job) for j in jobs]
    if len(keys) != len(set(keys)):
        raise ValueError(f"{directory / 'jobs.csv'}: a job appears twice in one run")
    runs = defaultdict(int)
    for j in jobs:
        runs[j.lab.run] += 1
    return jobs, caps, {"flagged_runs_left_out": left_out, "flagged": flagged,
                        "jobs_per_run": {f"{s} {a} {v}": n for (s, a, v), n in sorted(runs.items())}}


def complete_seeds(jobs: list[Job], seeds: list[int], arms: set[str], flagged: set) -> tuple[list[Job], dict]:
    """Keep the seeds whose every arm in ``arms`` has rows (README: an incomplete seed is left out whole), then
    drop the ``flagged`` runs (a flagged arm is left out, its seed kept)."""
    have = defaultdict(set)
    for j in jobs:
        have[j.lab.seed].add(j.lab.arm)
    keep = [s for s in seeds if arms <= have[s]]
    return [j for j in jobs if j.lab.seed in keep and j.lab.run not in flagged], {"seeds_used": keep,
                                                      "seeds_incomplete": {s: sorted(arms - have[s]) for s in seeds
                                                                           if s not in keep}}


def schedule_all(jobs: list[Job], caps: dict[str, tuple]) -> None:
    """Each scored job's rate schedule under S, from its node's co-runners' measured windows."""
    params = default_params()
    by_node = defaultdict(list)
    for j in jobs:
        if math.isfinite(j.lab.start_s):
            by_node[(j.lab.run, j.lab.node)].append(j)
    for peers in by_node.values():
        for j in peers:
            if not j.lab.scored:
                continue
            others = [CoRunner(p.lab.start_s, p.lab.finish_s if math.isfinite(p.lab.finish_s) else math.inf,
                               p.demand, p.requests) for p in peers if p is not j]
            j.schedule = rate_schedule(j.lab.start_s, j.demand, j.requests, others, caps[j.lab.node], params)


def predict(j: Job, speed: float) -> Prediction:
    """Job ``j``'s predicted run slowdown (run time over its node's solo time, as ``jobs.csv``'s run_slowdown)."""
    return Prediction(j.lab, run_time(j.schedule, j.t1, speed=speed) / j.lab.solo_s)


def figures(preds: list[Prediction]) -> dict:
    if not preds:
        return {"n": 0}
    err = np.array([p.error for p in preds])
    ratio = np.array([p.predicted / p.job.run_slowdown for p in preds])
    ln = np.abs(np.log(ratio))
    return {"n": len(preds), "median": round(float(np.median(err)), 4), "p90": round(float(np.percentile(err, 90)), 4),
            "bias_median_ratio": round(float(np.median(ratio)), 4), "ln_median": round(float(np.median(ln)), 4),
            "ln_p90": round(float(np.percentile(ln, 90)), 4)}


def fit_speed(jobs: list[Job]) -> tuple[float, list[dict]]:
    """The registered fit for one kind: the v of ``SPEEDS`` with the least median + p90 error; ties nearest 1."""
    curve = []
    for v in SPEEDS:
        f = figures([predict(j, v) for j in jobs])
        curve.append({"v": v, "median": f["median"], "p90": f["p90"], "loss": round(f["median"] + f["p90"], 6)})
    best = min(curve, key=lambda c: (c["loss"], abs(c["v"] - 1.0)))
    return best["v"], curve


def table(jobs: list[Job], speeds: dict[str, float], by_seed: bool = False) -> dict:
    """Figures per kind (and compute pooled), at v = 1 and at the fitted v; per seed too with ``by_seed``."""
    groups: dict[str, list[Job]] = {k: [j for j in jobs if j.lab.kind == k] for k in KINDS}
    groups["compute"] = [j for j in jobs if j.lab.kind in COMPUTE_KINDS]
    if by_seed:
        for s in sorted({j.lab.seed for j in jobs}):
            for k in (*COMPUTE_KINDS, "compute"):
                groups[f"{k} seed {s}"] = [j for j in groups[k] if j.lab.seed == s]
    return {g: {"v=1": figures([predict(j, 1.0) for j in js]),
                "fitted": figures([predict(j, speeds.get(j.lab.kind, 1.0)) for j in js])}
            for g, js in groups.items()}


def intervals(jobs: list[Job], speeds: dict[str, float], draws: int = 2000) -> dict:
    """95 % percentile intervals of each compute kind's median and p90 error at the fitted v, resampling runs
    (seed x arm) with their jobs kept together, as net-check's bootstrap (seed 0). Descriptive: not registered."""
    out = {}
    for k in COMPUTE_KINDS:
        by: dict[tuple, list[float]] = defaultdict(list)
        for j in jobs:
            if j.lab.kind == k:
                by[j.lab.run].append(predict(j, speeds[k]).error)
        runs = sorted(by)
        if not runs:
            continue
        rng = np.random.default_rng(0)
        med, p90 = [], []
        for _ in range(draws):
            e = np.concatenate([by[runs[i]] for i in rng.integers(0, len(runs), len(runs))])
            med.append(np.median(e))
            p90.append(np.percentile(e, 90))
        out[k] = {"median": [round(float(x), 4) for x in np.percentile(med, [2.5, 97.5])],
                  "p90": [round(float(x), 4) for x in np.percentile(p90, [2.5, 97.5])], "runs": len(runs)}
    return out


def verdict(held: dict) -> dict:
    per = {k: {"median": held[k]["fitted"]["median"], "p90": held[k]["fitted"]["p90"],
               "met": bool(held[k]["fitted"]["n"]) and held[k]["fitted"]["median"] <= TARGET[0]
               and held[k]["fitted"]["p90"] <= TARGET[1]} for k in COMPUTE_KINDS}
    return {"per_kind": per, "met": all(v["met"] for v in per.values())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, required=True, help="results directory of the fitting seeds")
    ap.add_argument("--fit-seeds", type=seeds_arg, required=True, help="e.g. 311-316")
    ap.add_argument("--held-out-results", type=Path, help="results directory of the held-out seeds (default --results)")
    ap.add_argument("--held-out-seeds", type=seeds_arg, default=[], help="e.g. 317-319 (none: fit only)")
    ap.add_argument("--speeds", type=speeds_arg, help="e.g. cpu=0.92,train=0.83: score with these, no fit (a rerun "
                    "on data whose fitting seeds changed since the registered fit)")
    ap.add_argument("--out", type=Path, default=HERE, help="where the outputs go")
    args = ap.parse_args(argv)
    if set(args.fit_seeds) & set(args.held_out_seeds):
        ap.error("a seed cannot be both fitted on and held out")

    fit_jobs, caps, fit_info = load(args.results, args.fit_seeds)
    fit_jobs, _ = complete_seeds(fit_jobs, args.fit_seeds, set(), fit_info.pop("flagged"))
    schedule_all(fit_jobs, caps)
    scored_fit = [j for j in fit_jobs if j.lab.scored]
    speeds, curves = dict(args.speeds or {}), {}
    for k in COMPUTE_KINDS:
        if k not in speeds:
            speeds[k], curves[k] = fit_speed([j for j in scored_fit if j.lab.kind == k])
    summary = {"model": "S (policy.calibrate.stay) under policy.sim.calibration.default_params(), a speed v per "
                        "compute kind on the focal job's progress; net and io at v = 1",
               "error": "|predicted - measured| / measured run slowdown (policy.calibrate.replay.Prediction.error)",
               "params": default_params().as_dict(), "speed_grid": [SPEEDS[0], SPEEDS[-1], 0.01],
               "fit": {"results": str(args.results), "seeds": args.fit_seeds, **fit_info, "speeds": speeds,
                       "speeds_given": sorted(args.speeds or {}),
                       "curves": curves, "figures": table(scored_fit, speeds)}}
    held: list[Job] = []
    if args.held_out_seeds:
        hdir = args.held_out_results or args.results
        held, hcaps, hinfo = load(hdir, args.held_out_seeds)
        held, done = complete_seeds(held, args.held_out_seeds, {j.lab.arm for j in fit_jobs}, hinfo.pop("flagged"))
        schedule_all(held, hcaps)
        held = [j for j in held if j.lab.scored]
        figs = table(held, speeds, by_seed=True)
        summary["held_out"] = {"results": str(hdir), "seeds": args.held_out_seeds, **done, **hinfo,
                               "figures": figs, "verdict": verdict(figs),
                               "intervals_not_registered": intervals(held, speeds)}
    args.out.mkdir(parents=True, exist_ok=True)
    write_predictions(args.out / "predictions.csv", [("fit", j) for j in scored_fit] + [("held-out", j) for j in held],
                      speeds)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    text = markdown(summary)
    (args.out / "summary.md").write_text(text)
    sys.stdout.write(text)
    return 0


def write_predictions(path: Path, rows: list[tuple[str, Job]], speeds: dict[str, float]) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["set", "seed", "arm", "job", "kind", "node", "run_s", "solo_s", "measured", "predicted_v1",
                    "error_v1", "v", "predicted", "error"])
        for name, j in rows:
            a, b = predict(j, 1.0), predict(j, speeds.get(j.lab.kind, 1.0))
            w.writerow([name, j.lab.seed, j.lab.arm, j.lab.job, j.lab.kind, j.lab.node,
                        round(j.lab.finish_s - j.lab.start_s, 3), j.lab.solo_s, round(j.lab.run_slowdown, 4),
                        round(a.predicted, 4), round(a.error, 4), speeds.get(j.lab.kind, 1.0), round(b.predicted, 4),
                        round(b.error, 4)])


def markdown(s: dict) -> str:
    def cell(x: dict) -> str:
        if not x["n"]:
            return "-"
        return (f"{x['median']:.1%} / {x['p90']:.1%} ({x['bias_median_ratio']:.3f}; abs ln {x['ln_median']:.3f} / "
                f"{x['ln_p90']:.3f})")

    out = [f"fitted speeds (seeds {s['fit']['seeds'][0]}-{s['fit']['seeds'][-1]}): " +
           ", ".join(f"v_{k} = {v:.2f}" for k, v in s["fit"]["speeds"].items()), "",
           "error median / p90 (median predicted / measured; abs ln median / p90), n jobs", ""]
    for name in ("fit", "held_out"):
        if name not in s:
            continue
        part = s[name]
        out += [f"### {name.replace('_', '-')}: {part['results']}, seeds {part.get('seeds_used', part['seeds'])}",
                "", "| group | n | v = 1 | fitted v |", "|---|---:|---|---|"]
        for g, per in part["figures"].items():
            out.append(f"| {g} | {per['fitted']['n']} | {cell(per['v=1'])} | {cell(per['fitted'])} |")
        out.append("")
    if "held_out" in s:
        v = s["held_out"]["verdict"]
        out.append("target (held-out, fitted v, each compute kind: median <= 10 %, p90 <= 25 %): " +
                   ", ".join(f"{k} {x['median']:.1%} / {x['p90']:.1%} {'met' if x['met'] else 'missed'}"
                             for k, x in v["per_kind"].items()) + f" -> **{'met' if v['met'] else 'not met'}**")
        out.append("95 % run-bootstrap intervals (not registered): " + ", ".join(
            f"{k} median {x['median'][0]:.1%}-{x['median'][1]:.1%}, p90 {x['p90'][0]:.1%}-{x['p90'][1]:.1%}"
            for k, x in s["held_out"]["intervals_not_registered"].items()))
        for key in ("seeds_incomplete", "flagged_runs_left_out"):
            out.append(f"{key}: {s['held_out'][key]}")
        out.append("")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
