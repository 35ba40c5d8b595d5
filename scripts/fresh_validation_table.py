#!/usr/bin/env python3
"""The #22 candidates on a fresh block of validation episodes (seeds 20-59) as tables, from
``results/policy/fresh-validation/``.

Why it exists: every #22 candidate was chosen and reported on the same 60 validation episodes (seeds 0-4). The
folder's README fixed, before any run, eleven candidates, a fresh block no selection used, and the figures
that say whether an old-validation lead survives it. This script computes them from the committed files::

    python scripts/fresh_validation_table.py --add shipped-setting/seeds-20-39 /tmp/fresh/shipped-20  # copy a batch
    python scripts/fresh_validation_table.py          # table.md from the committed files alone

Per setting, a batch folder ``<setting>/seeds-*`` holds ``policy.evaluate``'s ``summary.csv``, ``runs.csv`` and
``served.json``. The fresh endpoint takes each case's mean excess over every finished batch's episodes; the old
one is read from the committed ``summary.csv`` of the study that reported it.
"""

from __future__ import annotations

import argparse
import csv
import math
import shutil
import statistics
from pathlib import Path

import numpy as np

from policy.comparison import (
    HEURISTICS,
    MIN_EXCESS,
    MIN_RATIO,
    cases,
    excess_by_case,
    geometric_mean,
    ratios,
    read_summary,
)
from policy.paired import interval, t_quantile
from policy.paths import POLICY_RESULTS

FOLDER = POLICY_RESULTS / "fresh-validation"
SHIPPED = "dqn:default"
CANDIDATES = (*(f"dqn:cal-B-A-{s}" for s in range(1, 6)), "dqn:cal-B-A-150k-6", "dqn:cal-B-A-150k-7", "dqn:student",
              "dqn:ens-all7", "dqn:ens-30k5", "dqn:ens-150k2")
"""The eleven registered candidates; the shipped model is the reference, not one of them."""
COMPARISONS = 2 * len(CANDIDATES)
"""The paired comparisons the Bonferroni column corrects for: eleven candidates in two settings."""
SETTINGS = {
    "shipped-setting": dict(
        served="band:0.02 at weight 5 (the shipped setting)",
        old=POLICY_RESULTS / "shipped-setting" / "validation-served-shipped-setting",
        old_runs=(POLICY_RESULTS / "shipped-setting" / "validation-served-shipped-setting",),
        selections={"best single network (shipped-setting step)": (
            "dqn:cal-B-A-150k-7", (SHIPPED, *CANDIDATES[:8]))}),
    "minmax": dict(
        served="min-max at weight 10",
        old=POLICY_RESULTS / "distill" / "validation-served",
        old_runs=(POLICY_RESULTS / "ensemble" / "validation-served", POLICY_RESULTS / "distill" / "validation-served"),
        selections={"best registered ensemble (ensemble step)": (
            "dqn:ens-all7", ("dqn:ens-all7", "dqn:ens-30k5", "dqn:ens-150k2"))}),
}
"""Per setting: its words, the committed old-validation join (seeds 0-4) holding every candidate, the folders
whose ``runs-*.csv`` hold the old per-episode rows that were kept (not every candidate's), and the selections
made on those episodes (winner, the pool it was chosen from)."""


def read_runs(paths: list[Path]) -> dict[tuple[str, str, str, str], float]:
    """(family, load, seed, policy) -> excess slowdown, from ``policy.evaluate``'s ``runs.csv`` files."""
    out = {}
    for path in paths:
        with path.open(newline="") as f:
            for r in csv.DictReader(f):
                out[(r["scenario"], r["load"], r["seed"], r["policy"])] = float(r["excess_slowdown"])
    return out


def case_means(runs: dict[tuple[str, str, str, str], float]) -> dict[tuple[str, float, str], float]:
    """(family, load, policy) -> mean excess over the episodes of ``runs`` (what ``summary.csv`` holds per batch)."""
    acc: dict[tuple[str, float, str], list[float]] = {}
    for (fam, load, _, pol), v in runs.items():
        acc.setdefault((fam, float(load), pol), []).append(v)
    return {k: sum(vs) / len(vs) for k, vs in acc.items()}


def check_batches(batches: list[Path]) -> None:
    """Each batch's ``runs.csv`` means equal its ``summary.csv`` (the episodes counted are the ones it ran)."""
    for b in batches:
        mine = case_means(read_runs([b / "runs.csv"]))
        theirs = excess_by_case(read_summary(b / "summary.csv"))
        bad = [k for k in theirs if not math.isclose(mine.get(k, math.nan), theirs[k], rel_tol=1e-9, abs_tol=1e-12)]
        if bad or mine.keys() != theirs.keys():
            raise SystemExit(f"{b}: runs.csv and summary.csv disagree on {bad[:3] or 'their cases'}")


def endpoint(ex: dict, policy: str) -> float:
    return geometric_mean(ratios(ex, policy, HEURISTICS).values())


def paired_logs(runs: dict, policy: str) -> list[float]:
    episodes = sorted({k[:3] for k in runs})
    return [math.log(max(runs[e + (policy,)], MIN_EXCESS) / max(runs[e + (SHIPPED,)], MIN_EXCESS))
            for e in episodes if e + (policy,) in runs and e + (SHIPPED,) in runs]


BOOTSTRAP = 4000
"""Resamples of the seed bootstrap (added after the results: not registered)."""


def endpoint_ratio_bootstrap(runs: dict, policy: str) -> tuple[float, float, float]:
    """The endpoint's ratio to the shipped model's (``endpoint(policy) / endpoint(SHIPPED)``) and its 95 %
    percentile interval over seeds resampled with replacement, each seed with all its cases (an episode's jobs
    depend on its seed only, so a seed's cases are not independent). The per-case n/a and floor rules are
    applied in every resample, as ``policy.comparison`` applies them."""
    seeds = sorted({k[2] for k in runs})
    cs = sorted({(k[0], k[1]) for k in runs})
    pols = (policy, SHIPPED, *HEURISTICS)
    arr = np.array([[[runs[(f, ld, s, p)] for s in seeds] for f, ld in cs] for p in pols])  # policy x case x seed
    rng = np.random.default_rng(0)
    idx = np.vstack([np.arange(len(seeds)), rng.integers(0, len(seeds), (BOOTSTRAP, len(seeds)))])
    means = arr[:, :, idx].mean(axis=-1)  # policy x case x resample (the first: the sample itself)
    best = means[2:].min(axis=0)
    logs = []
    for m in means[:2]:
        r = np.where(best < MIN_EXCESS, np.nan, np.maximum(m / np.maximum(best, 1e-300), MIN_RATIO))
        logs.append(np.nanmean(np.log(r), axis=0))
    ratio = np.exp(logs[0] - logs[1])
    low, high = np.percentile(ratio[1:], [2.5, 97.5])
    return float(ratio[0]), float(low), float(high)


def seed_clustered_logs(runs: dict, policy: str) -> list[float]:
    """Per seed, the mean over its cases of the per-episode log ratio to the shipped model (``paired_logs``'
    terms): one value per seed, since a seed's cases share their jobs (added after the results: not registered)."""
    by_seed: dict[str, list[float]] = {}
    for fam, load, seed in sorted({k[:3] for k in runs}):
        e = (fam, load, seed)
        if e + (policy,) in runs and e + (SHIPPED,) in runs:
            by_seed.setdefault(seed, []).append(
                math.log(max(runs[e + (policy,)], MIN_EXCESS) / max(runs[e + (SHIPPED,)], MIN_EXCESS)))
    return [sum(v) / len(v) for _, v in sorted(by_seed.items())]


def bonferroni_excludes_one(logs: list[float]) -> bool:
    iv = interval(logs)
    if iv.seeds < 2:
        return False
    h = t_quantile(1.0 - 0.05 / (2 * COMPARISONS), iv.seeds - 1) * iv.sd / math.sqrt(iv.seeds)
    m = math.log(iv.ratio)
    return m + h < 0 or m - h > 0


def verdict(logs: list[float]) -> str:
    iv = interval(logs)
    return "real" if iv.high < 1 else "reversed" if iv.low > 1 else "not shown"


def spearman(xs: list[float], ys: list[float]) -> float:
    def rank(v: list[float]) -> list[float]:
        order = sorted(range(len(v)), key=v.__getitem__)
        r = [0.0] * len(v)
        for i, j in enumerate(order):
            r[j] = float(i)
        return r
    return statistics.correlation(rank(xs), rank(ys))


def _iv(logs: list[float]) -> str:
    if not logs:
        return "n/a"
    iv = interval(logs)
    return f"{iv.ratio:.3f} ({iv.low:.3f}-{iv.high:.3f})"


def setting_tables(name: str, spec: dict) -> list[str]:
    batches = sorted((FOLDER / name).glob("seeds-*"))
    if not batches:
        return [f"## {spec['served']}: no batch yet", ""]
    check_batches(batches)
    runs = read_runs([b / "runs.csv" for b in batches])
    ex = case_means(runs)
    old_ex = excess_by_case(read_summary(spec["old"] / "summary.csv"))
    old_runs = read_runs([p for d in spec["old_runs"] for p in sorted(d.glob("runs-*.csv"))])
    seeds = sorted({int(k[2]) for k in runs})
    n_ep = len({k[:3] for k in runs})
    lines = [f"## {spec['served']}", "",
             f"Fresh block: validation seeds {seeds[0] - 2**31}-{seeds[-1] - 2**31} ({len(seeds)} seeds, {n_ep} "
             f"episodes per policy; batches {', '.join(b.name for b in batches)}). Old: seeds 0-4 (60 episodes), "
             f"`{spec['old'].relative_to(POLICY_RESULTS.parent.parent)}`.", "",
             "Endpoint: geometric mean over the 12 cases of excess / the best heuristic's on the case. Paired: per "
             f"episode excess / the shipped model's (each floored at {MIN_EXCESS}), geometric mean and 95 % t "
             f"interval; Bonferroni: the interval at two-sided 1 - 0.05/{COMPARISONS}.", "",
             "| policy | old endpoint | fresh endpoint | fresh - old | paired / shipped, old | "
             "paired / shipped, fresh | verdict | Bonferroni excludes 1 | endpoint / shipped's, fresh, seed "
             "bootstrap (not registered) |",
             "|---|---:|---:|---:|---|---|---|---|---|"]
    for p in (SHIPPED, *CANDIDATES, *HEURISTICS):
        o, f = endpoint(old_ex, p), endpoint(ex, p)
        if p.startswith("dqn:") and p != SHIPPED:
            logs = paired_logs(runs, p)
            boot = endpoint_ratio_bootstrap(runs, p)
            paired = (f"{_iv(paired_logs(old_runs, p))} | {_iv(logs)} | {verdict(logs)} | "
                      f"{'yes' if bonferroni_excludes_one(logs) else 'no'} | "
                      f"{boot[0]:.3f} ({boot[1]:.3f}-{boot[2]:.3f})")
        else:
            paired = "| | | |"
        lines.append(f"| {p} | {o:.3f} | {f:.3f} | {f - o:+.3f} | {paired} |")
    lines += ["", "The paired ratio with one value per seed (the mean of its cases' log ratios; not registered, added "
              "after the results because a seed's cases share their jobs, so its episodes are not independent):", "",
              "| policy | paired / shipped, fresh, per seed | verdict |", "|---|---|---|"]
    for p in CANDIDATES:
        logs = seed_clustered_logs(runs, p)
        lines.append(f"| {p} | {_iv(logs)} | {verdict(logs)} |")
    olds = [endpoint(old_ex, p) for p in CANDIDATES]
    freshs = [endpoint(ex, p) for p in CANDIDATES]
    lines += ["", f"Spearman rank correlation of old and fresh endpoints over the eleven candidates: "
              f"**{spearman(olds, freshs):.2f}**.", "", "Selections made on the old episodes:", "",
              "| selection | winner | old | fresh | winner's fresh - old | pool's median fresh - old | curse "
              "(winner's - pool's median) |", "|---|---|---:|---:|---:|---:|---:|"]
    for what, (winner, pool) in spec["selections"].items():
        drops = [endpoint(ex, p) - endpoint(old_ex, p) for p in pool]
        w = endpoint(ex, winner) - endpoint(old_ex, winner)
        lines.append(f"| {what}, of {len(pool)} | {winner} | {endpoint(old_ex, winner):.3f} | "
                     f"{endpoint(ex, winner):.3f} | {w:+.3f} | {statistics.median(drops):+.3f} | "
                     f"{w - statistics.median(drops):+.3f} |")
    shown = [SHIPPED, "dqn:cal-B-A-150k-7", "dqn:ens-all7", "dqn:student", "dqn:ens-30k5"]
    per = {p: ratios(ex, p, HEURISTICS) for p in shown}
    lines += ["", "Fresh block per case, / the best heuristic on the case:", "",
              "| family | load | best heuristic (excess) | " + " | ".join(shown) + " |",
              "|---|---:|---|" + "---:|" * len(shown)]
    for fam, load in cases(ex):
        best = min(HEURISTICS, key=lambda h: ex[(fam, load, h)])
        lines.append(f"| {fam} | {load:g} | {best} ({ex[(fam, load, best)]:.4f}) | "
                     + " | ".join("n/a" if per[p][(fam, load)] is None else f"{per[p][(fam, load)]:.2f}"
                                  for p in shown) + " |")
    return [*lines, ""]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--add", nargs=2, metavar=("DEST", "SRC"),
                   help="copy SRC's summary.csv, runs.csv and served.json to results/policy/fresh-validation/DEST/")
    args = p.parse_args()
    if args.add:
        dest, src = FOLDER / args.add[0], Path(args.add[1])
        dest.mkdir(parents=True, exist_ok=True)
        for f in ("summary.csv", "runs.csv", "served.json"):
            shutil.copy(src / f, dest / f)
    out = ["# Fresh validation block: tables", "",
           "Written by `scripts/fresh_validation_table.py` from the committed files; the plan and reading are in "
           "`README.md`.", ""]
    for name, spec in SETTINGS.items():
        out += setting_tables(name, spec)
    (FOLDER / "table.md").write_text("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
