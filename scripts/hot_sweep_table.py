#!/usr/bin/env python3
"""The tables of ``results/policy/hot-sweep/`` from its committed files, and its pre-registered rule applied.

Why it exists: the folder's README fixed, before any run, the settings (hot-filter mode x cpu threshold), the
figures and the rule that recommends one setting. This script computes every figure from the committed
``runs.csv.gz`` / ``summary.csv`` / ``served.json`` of each ``<split>/<setting>/`` folder, with
``policy.comparison``'s ratio to the best heuristic and ``policy.paired``'s per-seed interval (no interval code of
its own)::

    python scripts/hot_sweep_table.py > results/policy/hot-sweep/table.md
"""

from __future__ import annotations

import argparse
import csv
import gzip
import math
from pathlib import Path

from policy.comparison import DQN, HEURISTICS, excess_by_case, ratio_to_best, read_summary, served_setting
from policy.paired import Interval, interval, log_ratios
from policy.served import HOT_THRESHOLDS, hot_thresholds_text
from policy.splits import SEED_BASE

ROOT = Path("results/policy/hot-sweep")
SHIPPED = "prefer-cool-0.65"
OFF = "off"
PICK_CONFIRMED, MEMORY_ONLY = "prefer-cool-0.95", "mem-0.95-only"
"""The confirmation block's two folders: the rule's pick and the memory-only guard."""
POLICIES = (*HEURISTICS, DQN)
METRICS = ("excess_slowdown", "excess_queue")


def settings(split: Path) -> list[str]:
    """The setting folders of ``split``: prefer-cool by threshold, off, prefer-fit by threshold, then any other."""
    names = [p.name for p in split.iterdir() if (p / "summary.csv").is_file()]

    def key(name: str) -> tuple:
        mode, _, thr = name.rpartition("-")
        order = {"prefer-cool": 0, "": 1, "prefer-fit": 2}  # "off" partitions to ("", "", "off")
        try:
            return order[mode], float(thr) if mode else 0.0, name
        except (KeyError, ValueError):
            return 3, 0.0, name

    return sorted(names, key=key)


def label(folder: Path) -> str:
    s = served_setting(folder)
    # folders written before --hot-thresholds existed ran the shipped thresholds
    thresholds = s.get("hot_thresholds", hot_thresholds_text(HOT_THRESHOLDS))
    return "off" if s["hot_filter"] == "off" else f"{s['hot_filter']} {thresholds}"


def guarded(name: str) -> bool:
    return name != OFF


def runs(folder: Path) -> list[dict]:
    path = folder / "runs.csv.gz"
    with gzip.open(path, "rt", newline="") if path.is_file() else (folder / "runs.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def seed_means(rows: list[dict], metric: str = "excess_slowdown") -> dict[tuple[int, str], dict[str, float]]:
    """(seed, policy) -> {metric: its mean over the seed's cases} (a seed's cases share their jobs' draws)."""
    acc: dict[tuple[int, str], list[float]] = {}
    for r in rows:
        acc.setdefault((int(r["seed"]), r["policy"]), []).append(float(r[metric]))
    return {k: {metric: sum(v) / len(v)} for k, v in acc.items()}


def paired(a: dict, b: dict, policy_a: str, policy_b: str) -> Interval:
    """Per-seed paired ratio (``policy.paired``) of ``policy_a``'s seed-mean excess in ``a`` to ``policy_b``'s in
    ``b``."""
    per_run = {(s, "a"): v for (s, p), v in a.items() if p == policy_a}
    per_run |= {(s, "b"): v for (s, p), v in b.items() if p == policy_b}
    return interval(log_ratios(per_run, "a", baseline="b", metric="excess_slowdown"))


def fmt(iv: Interval) -> str:
    return "n/a" if math.isnan(iv.ratio) else f"{iv.ratio:.3f} ({iv.low:.3f}-{iv.high:.3f})"


def best_heuristic(means: dict[str, float]) -> str:
    return min(HEURISTICS, key=lambda p: means[p])


def load_settings(split: Path, names: list[str]) -> dict:
    """Per setting folder: its runs, per-seed means, summary, and each policy's mean excess (and parts) overall."""
    data = {}
    for n in names:
        rows = runs(split / n)
        data[n] = {"rows": rows, "seeds": seed_means(rows), "summary": read_summary(split / n / "summary.csv",
                                                                                   metrics=METRICS)}
        for key, metric in (("mean", "excess_slowdown"), ("queue", "excess_queue"),
                            ("contention", "excess_contention")):  # over every case and seed
            values = {p: [float(r[metric]) for r in rows if r["policy"] == p] for p in POLICIES}
            data[n][key] = {p: sum(v) / len(v) for p, v in values.items()}
    return data


def split_tables(split: Path, *, names: list[str] | None = None, ref: dict | None = None,
                 seed_split: str | None = None) -> tuple[list[str], dict]:
    """The tables of one folder of settings; ``ref``: the settings the shipped / off ratios are taken against
    (default: this folder's own), on the same episodes."""
    names = names or settings(split)
    data = load_settings(split, names)
    ref = ref or data
    seeds = sorted({int(r["seed"]) - SEED_BASE[seed_split or split.name] for r in data[names[0]]["rows"]})
    cases = sorted({(r["scenario"], r["load"]) for r in data[names[0]]["rows"]})
    out = [f"### {split.name}: {len(cases)} cases x {len(seeds)} seeds (offsets {seeds[0]}-{seeds[-1]}) per policy "
           "and setting", "",
           "Mean excess slowdown over the cases and seeds, in brackets the share of it spent queueing (no node "
           "admitted the pod). dqn / best heuristic: `policy.comparison.ratio_to_best` (geometric mean over cases of "
           "the DQN's excess / the lowest of default-k8s, demand-aware, lookahead, each in the same setting); "
           "paired: ln(DQN seed-mean excess / that of the heuristic with the lowest mean excess in the setting), "
           "`policy.paired.interval` over seeds, 95 %.", "",
           "| setting | default-k8s | demand-aware | lookahead | dqn | dqn / best heuristic | paired (95 %), vs |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for n in names:
        d = data[n]
        cells = [f"{d['mean'][p]:.4f} ({100 * d['queue'][p] / d['mean'][p]:.0f} %)" for p in POLICIES]
        best = best_heuristic(d["mean"])
        iv = paired(d["seeds"], d["seeds"], DQN, best)
        geo = ratio_to_best(excess_by_case(d["summary"]), DQN)
        out.append(f"| {label(split / n)} | {' | '.join(cells)} | {geo:.3f} | {fmt(iv)} vs {best} |")
    out += ["", "The DQN's excess in its two parts (`excess_queue`: waiting for a node that fits by requests; "
            "`excess_contention`: running slower than alone), mean over the cases and seeds:", "",
            "| setting | dqn excess | queueing | contention |", "|---|---:|---:|---:|"]
    for n in names:
        d = data[n]
        out.append(f"| {label(split / n)} | {d['mean'][DQN]:.4f} | {d['queue'][DQN]:.4f} | "
                   f"{d['contention'][DQN]:.4f} |")
    if SHIPPED not in ref:
        return out, data
    ship, off = ref[SHIPPED]["seeds"], ref[OFF]["seeds"] if OFF in ref else None
    out += ["", "Each policy's excess in a setting as a paired ratio to its own in the shipped setting "
            "(prefer-cool 0.65,0.95) and the DQN's to its own with the filter off (per seed, "
            "`policy.paired.interval`, 95 %):", "",
            "| setting | " + " | ".join(f"{p} / shipped" for p in POLICIES) + f" | {DQN} / off |",
            "|---|" + "---:|" * (len(POLICIES) + 1)]
    for n in names:
        d = data[n]["seeds"]
        cells = [fmt(paired(d, ship, p, p)) for p in POLICIES]
        cells.append(fmt(paired(d, off, DQN, DQN)) if off else "n/a")
        out.append(f"| {label(split / n)} | {' | '.join(cells)} |")
    return out, data


def per_case(split: Path, data: dict, names: list[str]) -> list[str]:
    """The DQN's mean excess per case in ``names``' settings."""
    ex = {n: excess_by_case(data[n]["summary"]) for n in names}
    cases = sorted({(f, ld) for f, ld, _ in ex[names[0]]})
    out = ["| family | load | " + " | ".join(label(split / n) for n in names) + " |",
           "|---|---|" + "---:|" * len(names)]
    for f, ld in cases:
        out.append(f"| {f} | {ld:g} | " + " | ".join(f"{ex[n][(f, ld, DQN)]:.4f}" for n in names) + " |")
    return out


def rule(split: Path, data: dict) -> tuple[list[str], str]:
    """The README's pre-registered rule on ``data`` (the DQN's figures only)."""
    cands = [n for n in data if guarded(n)]
    b = min(cands, key=lambda n: data[n]["mean"][DQN])
    tied = {n: paired(data[n]["seeds"], data[b]["seeds"], DQN, DQN) for n in cands}
    t = [n for n, iv in tied.items() if n == b or (iv.low <= 1.0 <= iv.high)]
    thr = {n: float(n.rsplit("-", 1)[1]) for n in t}
    pick = min(t, key=lambda n: (thr[n], 0 if n.startswith("prefer-cool") else 1))
    out = [f"1. B, the guarded setting with the lowest DQN mean excess: **{label(split / b)}** "
           f"({data[b]['mean'][DQN]:.4f}).",
           "2. Each guarded setting's DQN excess / B's (per seed, 95 %); T = those whose interval contains 1:", "",
           "| setting | dqn mean excess | / B | in T |", "|---|---:|---:|---|"]
    for n in cands:
        out.append(f"| {label(split / n)} | {data[n]['mean'][DQN]:.4f} | {fmt(tied[n]) if n != b else '1 (B)'} | "
                   f"{'yes' if n in t else 'no'} |")
    out += ["", f"3. The lowest cpu threshold in T (prefer-cool on a tie): **{label(split / pick)}**."]
    return out, pick


COMMITTED_TEST = (Path("results/policy/test-served"), Path("results/policy/test-served-nohot"))
"""The committed test figures of the shipped model, with the shipped filter and without one (summaries only)."""


def summary_row(folder: Path, name: str) -> str:
    """One table row from a ``summary.csv``: each policy's excess averaged over the cases (queueing share), and the
    DQN's ``ratio_to_best``."""
    rows = read_summary(folder / "summary.csv", metrics=METRICS)
    mean = {p: [(float(r["excess_slowdown"]), float(r["excess_queue"])) for r in rows if r["policy"] == p]
            for p in POLICIES}
    cells = []
    for p in POLICIES:
        ex, qu = (sum(v[i] for v in mean[p]) / len(mean[p]) for i in (0, 1))
        cells.append(f"{ex:.4f} ({100 * qu / ex:.0f} %)")
    geo = ratio_to_best(excess_by_case(rows), DQN)
    return f"| {name} | {' | '.join(cells)} | {geo:.3f} |"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", type=Path, default=ROOT)
    args = p.parse_args()
    lines = ["<!-- generated by scripts/hot_sweep_table.py from the committed files; do not edit -->", ""]
    val, data = split_tables(args.root / "validation")
    lines += ["## Validation (the sweep)", "", *val, "", "### The rule", ""]
    rule_lines, pick = rule(args.root / "validation", data)
    lines += rule_lines
    shown = [n for n in dict.fromkeys((SHIPPED, pick, OFF)) if n in data]
    lines += ["", "### The DQN's mean excess per case (validation)", "",
              *per_case(args.root / "validation", data, shown)]
    explore = args.root / "explore"
    if explore.is_dir() and any((q / "summary.csv").is_file() for q in explore.iterdir()):
        names = sorted(q.name for q in explore.iterdir() if (q / "summary.csv").is_file())
        ex, _ = split_tables(explore, names=names, ref=data, seed_split="validation")
        lines += ["", "## Exploratory, after the rule: which of the two 0.95 thresholds costs (same validation "
                  "episodes)", "", *ex]
    confirm = args.root / "confirm"
    if (confirm / PICK_CONFIRMED / "summary.csv").is_file() and (confirm / MEMORY_ONLY / "summary.csv").is_file():
        cf, cdata = split_tables(confirm, names=[PICK_CONFIRMED, MEMORY_ONLY], seed_split="validation")
        iv = paired(cdata[MEMORY_ONLY]["seeds"], cdata[PICK_CONFIRMED]["seeds"], DQN, DQN)
        lines += ["", "## Confirmation on fresh validation episodes (registered after the exploratory runs)", "", *cf,
                  "", f"The DQN's per-seed paired ratio, {label(confirm / MEMORY_ONLY)} / "
                  f"{label(confirm / PICK_CONFIRMED)}: **{fmt(iv)}**; the registered condition (upper end below 1) is "
                  f"**{'met' if iv.high < 1 else 'not met'}**."]
    test = args.root / "test"
    if test.is_dir() and any((q / "summary.csv").is_file() for q in test.iterdir()):
        tt, tdata = split_tables(test)
        lines += ["", "## Test split (once, after the rule was applied)", "", *tt, "",
                  "### Beside the committed test figures (summaries: mean over the cases)", "",
                  "| run | default-k8s | demand-aware | lookahead | dqn | dqn / best heuristic |",
                  "|---|---:|---:|---:|---:|---:|",
                  *(summary_row(f, f"committed `{f}` ({label(f)})") for f in COMMITTED_TEST if f.is_dir()),
                  *(summary_row(test / n, f"this sweep ({label(test / n)})") for n in tdata), "",
                  "### The DQN's mean excess per case (test)", "", *per_case(test, tdata, list(tdata))]
    print("\n".join(lines))  # noqa: T201


if __name__ == "__main__":
    main()
