"""Per-run metrics and their ratios to the default scheduler, with 95 % intervals over seeds. Pure.

Why it exists: the lab's claims are these few numbers, so they are computed in one place with a table test.
Per (seed, arm, variant): mean and p95 JCT, makespan (last finish - first submit), mean slowdown (against the
solo time on the node the job ran on) and mean best-solo slowdown (against its fastest node type; NaN for
files written before ``best_slowdown`` existed); from the
monitor agents' usage samples taken while jobs ran, DRS's utilisation (mean over samples and nodes of each
node's CPU use / its quota) and imbalance (per sample, the sum over cpu, memory, net and io of the standard
deviation across nodes of the node's use normalised by its capacity; then the mean over samples). A ratio is
taken per seed (arm / default on the same seed), then averaged with ``policy.report.mean_ci95``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping

import numpy as np

from policy.report import mean_ci95

METRICS = ("mean_jct_s", "p95_jct_s", "makespan_s", "mean_slowdown", "mean_best_slowdown", "utilisation", "imbalance")
IO_CAPACITY_MBPS = 50.0  # what the io metric is normalised by: no node has an io quota


def _f(v) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def run_metrics(jobs: Iterable[Mapping], usage: Iterable[Mapping], nodes: Mapping[str, Mapping]) -> dict[str, float]:
    """The metrics of one run from its jobs.csv and usage.csv rows; ``nodes`` maps node -> nodes.csv row."""
    jobs = list(jobs)
    jct = [x for r in jobs if (x := _f(r["jct_s"])) is not None]
    slow = [x for r in jobs if (x := _f(r["slowdown"])) is not None]
    best = [x for r in jobs if (x := _f(r.get("best_slowdown"))) is not None]
    finish = [x for r in jobs if (x := _f(r["finish_s"])) is not None]
    submit = [x for r in jobs if (x := _f(r["submit_s"])) is not None]
    out = {
        "mean_jct_s": float(np.mean(jct)) if jct else math.nan,
        "p95_jct_s": float(np.percentile(jct, 95)) if jct else math.nan,
        "makespan_s": max(finish) - min(submit) if finish and submit else math.nan,
        "mean_slowdown": float(np.mean(slow)) if slow else math.nan,
        "mean_best_slowdown": float(np.mean(best)) if best else math.nan,
    }
    out.update(usage_metrics(usage, nodes))
    return out


def usage_metrics(usage: Iterable[Mapping], nodes: Mapping[str, Mapping]) -> dict[str, float]:
    by_t: dict[float, dict[str, Mapping]] = defaultdict(dict)
    for row in usage:
        by_t[float(row["t_s"])][row["node"]] = row
    util, imb = [], []
    for _, per_node in sorted(by_t.items()):
        if len(per_node) < len(nodes) or sum(float(r["cpu_m"]) for r in per_node.values()) <= 0:
            continue  # an incomplete sample, or none of the run's jobs running yet
        frac = np.array([[float(r["cpu_m"]) / float(nodes[n]["cpu_quota_m"]),
                          float(r["mem_mi"]) / float(nodes[n]["mem_mi"]),
                          float(r["net_mbit"]) / max(float(nodes[n]["net_mbit"]), 1e-9),
                          float(r["io_mbps"]) / IO_CAPACITY_MBPS] for n, r in sorted(per_node.items())])
        util.append(float(np.mean(frac[:, 0])))
        imb.append(float(np.sum(np.std(frac, axis=0))))
    return {"utilisation": float(np.mean(util)) if util else math.nan,
            "imbalance": float(np.mean(imb)) if imb else math.nan}


def ratios(per_run: Mapping[tuple[int, str], Mapping[str, float]], *, baseline: str = "default"
           ) -> dict[str, dict[str, tuple[float, float, int]]]:
    """arm -> metric -> (mean ratio to ``baseline`` over seeds, 95 % half-width, seeds). ``per_run`` maps
    (seed, arm) -> metrics; a seed without the baseline is left out."""
    arms = sorted({arm for _, arm in per_run})
    seeds = sorted({seed for seed, _ in per_run})
    out: dict[str, dict[str, tuple[float, float, int]]] = {}
    for arm in arms:
        out[arm] = {}
        for metric in METRICS:
            values = []
            for seed in seeds:
                base, this = per_run.get((seed, baseline)), per_run.get((seed, arm))
                if base is None or this is None:
                    continue
                b, a = base.get(metric, math.nan), this.get(metric, math.nan)
                if math.isfinite(a) and math.isfinite(b) and b != 0:
                    values.append(a / b)
            mean, ci = mean_ci95(values)
            out[arm][metric] = (mean, ci, len(values))
    return out


def means(per_run: Mapping[tuple[int, str], Mapping[str, float]]) -> dict[str, dict[str, tuple[float, float, int]]]:
    """arm -> metric -> (mean over seeds, 95 % half-width, seeds)."""
    out: dict[str, dict[str, tuple[float, float, int]]] = {}
    for arm in sorted({arm for _, arm in per_run}):
        runs = [m for (_, a), m in per_run.items() if a == arm]
        out[arm] = {}
        for metric in METRICS:
            vals = [m[metric] for m in runs if math.isfinite(m.get(metric, math.nan))]
            mean, ci = mean_ci95(vals)
            out[arm][metric] = (mean, ci, len(vals))
    return out
