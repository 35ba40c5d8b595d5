"""The evaluation's tables: per-case summaries over seeds, the lab endpoint's JCT ratios, and their text forms.

Pure functions of ``policy.grid.run_all``'s rows (one dict per case, policy and seed): ``summarise`` gives each
metric's mean and 95 % interval over seeds and the excess-slowdown ratio to ``BASELINE``; ``jct_ratios`` the
real-node lab's primary endpoint on the same rows (``policy.paired``); the ``format_*`` functions the
plain-text and markdown tables ``policy.evaluate`` writes.
"""

from __future__ import annotations

import numpy as np

from policy.comparison import BASELINE, MIN_EXCESS
from policy.paired import interval
from policy.report import mean_ci95

METRICS = ("mean_slowdown", "excess_slowdown", "mean_jct", "p95_jct", "makespan", "imbalance", "util_cpu",
           "util_net", "util_disk", "unschedulable", "choice_share", "excess_queue", "excess_contention")

def summarise(rows: list[dict]) -> list[dict]:
    """One row per (scenario, workload, load, policy): means over seeds, ratio of excess to the baseline's."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["scenario"], r["workload"], r["load"], r["policy"]), []).append(r)
    base_excess = {(r["scenario"], r["workload"], r["load"], r["seed"]): r["excess_slowdown"]
                   for r in rows if r["policy"] == BASELINE}
    out = []
    for (scen, wl, load, pol), rs in groups.items():
        s = {"scenario": scen, "workload": wl, "load": load, "policy": pol, "seeds": len(rs)}
        for m in METRICS:
            s[m], s[m + "_ci"] = mean_ci95([r[m] for r in rs])
        # A ratio to a baseline that lost (almost) nothing is noise, not a result: such seeds are left out (the
        # noise floor is policy.comparison's; the per-seed mean here is this column's, not the README's rule).
        ratios = [r["excess_slowdown"] / base_excess[(scen, wl, load, r["seed"])] for r in rs
                  if base_excess.get((scen, wl, load, r["seed"]), 0) > MIN_EXCESS]
        s["excess_ratio"], s["excess_ratio_ci"] = mean_ci95(ratios)
        out.append(s)
    return out


def jct_ratios(rows: list[dict]) -> list[dict]:
    """One row per (scenario, workload, load, policy) other than the baseline: the paired log mean-JCT ratio to
    the baseline over seeds (module doc), ``jct_ratio`` exp(mean), ``jct_ratio_low`` / ``_high`` its 95 %
    t-interval (NaN with one seed) and ``sd_log_ratio``."""
    base = {(r["scenario"], r["workload"], r["load"], r["seed"]): r["mean_jct"] for r in rows
            if r["policy"] == BASELINE}
    logs: dict[tuple, list[float]] = {}
    for r in rows:
        b = base.get((r["scenario"], r["workload"], r["load"], r["seed"]), float("nan"))
        if r["policy"] != BASELINE and np.isfinite(b) and np.isfinite(r["mean_jct"]) and min(b, r["mean_jct"]) > 0:
            logs.setdefault((r["scenario"], r["workload"], r["load"], r["policy"]), []).append(
                float(np.log(r["mean_jct"] / b)))
    out = []
    for (scen, wl, load, pol), xs in logs.items():
        iv = interval(xs)  # the lab's own endpoint arithmetic (policy.paired), so predictions compare like for like
        out.append({"scenario": scen, "workload": wl, "load": load, "policy": pol, "seeds": iv.seeds,
                    "jct_ratio": iv.ratio, "jct_ratio_low": iv.low, "jct_ratio_high": iv.high,
                    "sd_log_ratio": iv.sd})
    return out


def format_jct_ratios(ratios: list[dict]) -> str:
    """``jct_ratios`` as a markdown table, one row per case and policy."""
    lines = [f"Mean JCT ratio to {BASELINE} (per-seed log ratio, exp of its mean; 95 % t-interval; sd of the log "
             "ratio over seeds)\n", "| scenario | load | policy | seeds | ratio | 95 % interval | sd log ratio |",
             "|---|---:|---|---:|---:|---|---:|"]
    for r in sorted(ratios, key=lambda r: (r["scenario"], r["workload"], r["load"], r["policy"])):
        lines.append(f"| {r['scenario']} | {r['load']:g} | {r['policy']} | {r['seeds']} | {r['jct_ratio']:.3f} | "
                     f"{r['jct_ratio_low']:.3f}-{r['jct_ratio_high']:.3f} | {r['sd_log_ratio']:.3f} |")
    return "\n".join(lines)


def format_table(summary: list[dict]) -> str:
    """Plain-text tables, one per scenario/workload/load, policies sorted by mean slowdown."""
    lines = []
    keys = sorted({(s["scenario"], s["workload"], s["load"]) for s in summary})
    head = (f"{'policy':<18}{'slowdown':>10}{'excess':>9}{'vs k8s (95% CI)':>20}{'mean JCT':>10}{'p95 JCT':>10}"
            f"{'makespan':>10}{'imbal.':>8}{'cpu%':>6}{'net%':>6}{'disk%':>6}")
    for key in keys:
        rows = sorted((s for s in summary if (s["scenario"], s["workload"], s["load"]) == key),
                      key=lambda s: s["mean_slowdown"])
        n = rows[0]["seeds"]
        lines.append(f"\n## scenario={key[0]} workload={key[1]} load={key[2]:g} ({n} seed{'s' * (n > 1)})")
        lines.append(head)
        for s in rows:
            ratio = "—" if not np.isfinite(s["excess_ratio"]) else (
                f"{s['excess_ratio']:.2f}" + (f" ± {s['excess_ratio_ci']:.2f}" if np.isfinite(s["excess_ratio_ci"])
                                              else ""))
            lines.append(
                f"{s['policy']:<18}{s['mean_slowdown']:>10.3f}{s['excess_slowdown']:>9.3f}{ratio:>20}"
                f"{s['mean_jct']:>10.1f}{s['p95_jct']:>10.1f}{s['makespan']:>10.0f}{s['imbalance']:>8.3f}"
                f"{100 * s['util_cpu']:>6.1f}{100 * s['util_net']:>6.1f}{100 * s['util_disk']:>6.1f}")
    return "\n".join(lines)


def format_diagnostics(summary: list[dict]) -> str:
    """Per case and policy: where placement could matter and where the excess came from."""
    rows = sorted(summary, key=lambda s: (s["scenario"], s["workload"], s["load"], s["policy"]))
    cases = [f"{s['scenario']}/{s['workload']}/{s['load']:g}" for s in rows]
    w = max(map(len, cases), default=4) + 2
    lines = ["\n## diagnostics: choice = share of decisions with >= 2 feasible nodes; excess = queue + contention",
             f"{'case':<{w}}{'policy':<18}{'choice':>8}{'queue':>9}{'contention':>12}"]
    for case, s in zip(cases, rows, strict=True):
        lines.append(f"{case:<{w}}{s['policy']:<18}{s['choice_share']:>8.2f}{round(s['excess_queue'], 3) + 0.0:>9.3f}"
                     f"{round(s['excess_contention'], 3) + 0.0:>12.3f}")
    return "\n".join(lines)


def format_pivot(summary: list[dict], metric: str = "mean_slowdown") -> str:
    """A markdown table: one row per scenario/workload/load, one column per policy, best cell in bold."""
    policies = sorted({s["policy"] for s in summary}, key=lambda p: (p != BASELINE, p))
    cases = sorted({(s["scenario"], s["workload"], s["load"]) for s in summary})
    cell = {(s["scenario"], s["workload"], s["load"], s["policy"]): s[metric] for s in summary}
    lines = ["| scenario | workload | load | " + " | ".join(policies) + " |",
             "|---|---|---|" + "---:|" * len(policies)]
    for scen, wl, load in cases:
        values = [cell.get((scen, wl, load, p), float("nan")) for p in policies]
        best = np.nanmin(values)
        shown = [f"**{v:.3f}**" if v == best else f"{v:.3f}" for v in values]
        lines.append(f"| {scen} | {wl} | {load:g} | " + " | ".join(shown) + " |")
    return "\n".join(lines)
