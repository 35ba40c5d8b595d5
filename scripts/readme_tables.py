#!/usr/bin/env python3
"""The docs' result tables (README.md and docs/*.md), generated from the committed results in ``results/policy/``,
``results/bench/`` and ``results/lab/``.

Why it exists: tables typed by hand drift from what the code measures. ``make evaluate`` writes each
evaluation's CSV and markdown into ``results/policy/``, and every benchmark its figures into
``results/bench/<bench>.json`` or, for those that keep every run, ``results/bench/runs/<bench>-<UTC time>.json``
(``bench/record.py``); this script derives the comparison tables the README
argues from (DQN vs default-k8s and vs the best model-based heuristic: on the test split as served, the
headline, and as a pure argmax, and on validation; each split side by side by scoring mode; migration) from
those CSVs, the Benchmarks table (``results/bench/benchmarks.md``) from those JSON files (the scheduler row from
the newest run with >= 5 interleaved rounds, else the newest run, else the legacy ``scheduler.json``; the extender
rows from the newest run, else ``extender.json``), and copies every result file into the README block that names
it::

    <!-- BEGIN generated: results/policy/test/summary.md -->
    ...
    <!-- END generated -->

    python scripts/readme_tables.py            # derive the comparison files, then rewrite every doc's blocks
    python scripts/readme_tables.py --check    # exit 1 when a block or a derived file is out of date

The README keeps the headline; the long tables live in ``docs/*.md`` (``docs``), filled the same way. The
comparison itself (a ``summary.csv`` as per-case excess, the ratio rule, the comparison table) is
``policy.comparison``'s; this script is the glue: which result files feed which derived file and doc block.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

from bench.rounds import summary as round_summary
from policy.comparison import (
    BASELINE,
    COMPARISONS,
    SummaryError,
    comparison,
    excess_by_case,
    read_summary,
    served_setting,
)
from policy.paths import BENCH_RESULTS, BENCH_RUNS, POLICY_RESULTS

ROOT = Path(__file__).resolve().parent.parent
RESULTS = POLICY_RESULTS
BLOCK = re.compile(r"(<!-- BEGIN generated: (?P<path>[^ ]+) -->\n)(?P<body>.*?)(<!-- END generated -->)", re.S)
SERVED_COLUMNS = (("", "argmax"), ("-served", "served, hot filter prefer-cool"),
                  ("-served-fit", "served, hot filter prefer-fit"), ("-served-strict", "served, hot filter strict"),
                  ("-served-nohot", "served, no hot filter"))
"""Result folder suffix -> column label of the served tables (the mapping and weight are appended)."""
SERVED_TABLES = {"served.md": "validation", "served-test.md": "test"}
"""Derived file -> the split it puts side by side by scoring mode."""


def served_scoring(folder: Path, default: str) -> str:
    """How ``folder``'s policies were scored, from its ``served.json`` (``default`` for an argmax folder)."""
    if not folder.name.endswith(tuple(suffix for suffix, _ in SERVED_COLUMNS if suffix)):
        return default
    s = served_setting(folder)
    return (f"each policy scored as served (the hot-node filter {s['hot_filter']}, then kube-scheduler's resource "
            f"scoring + the extender's 0-10 score, mapping {s['mapping']}, at weight {s['weight']:g}; default-k8s "
            "is plain kube-scheduler)")


def served_runs(results: Path, split: str) -> tuple[tuple[str, str], ...]:
    """The (result folder, column label) pairs of ``split``'s served table: the columns whose folders exist."""
    runs = []
    for suffix, label in SERVED_COLUMNS:
        folder = results / f"{split}{suffix}"
        if not (folder / "summary.csv").exists():
            continue
        s = served_setting(folder) if suffix else None
        runs.append((f"{split}{suffix}", label if s is None else f"{label}, {s['mapping']} at weight {s['weight']:g}"))
    return tuple(runs)


def served(results: Path, runs_of: tuple[tuple[str, str], ...] | None = None) -> str:
    """Per policy: mean excess over one split's cases, as argmax and as served with each hot filter."""
    runs_of = served_runs(results, "validation") if runs_of is None else runs_of
    summaries = {name: read_summary(results / name / "summary.csv", metrics=("excess_slowdown", "excess_queue"))
                 for name, _ in runs_of}
    runs = [(label, excess_by_case(summaries[name]), excess_by_case(summaries[name], "excess_queue"))
            for name, label in runs_of]
    policies = sorted({p for _, ex, _ in runs for _, _, p in ex}, key=lambda p: (p != BASELINE, p))
    seeds = sorted({int(r["seeds"]) for rows in summaries.values() for r in rows})
    split = runs_of[0][0].capitalize()
    lines = [f"{split}, excess slowdown averaged over its cases ({'/'.join(map(str, seeds))} seeds); "
             "default-k8s is plain kube-scheduler in every column; in brackets the part of it spent queueing "
             "(no node admitted the pod).", "",
             "| policy | " + " | ".join(label for label, _, _ in runs) + " |", "|---|" + "---:|" * len(runs)]
    for pol in policies:
        cells = []
        for _, ex, queue in runs:
            vals = [v for (_, _, p), v in ex.items() if p == pol]
            waits = [v for (_, _, p), v in queue.items() if p == pol]
            cells.append(f"{sum(vals) / len(vals):.3f} ({sum(waits) / len(waits):.3f})" if vals else "")
        lines.append(f"| {pol} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def migration(summary: list[dict]) -> str:
    """No migration vs migration per scenario: per-seed ratios with 95 % intervals, p95 JCT, migrations."""
    lines = ["| scenario | seeds | mean JCT, migration / none | makespan, migration / none | p95 JCT none -> migration "
             "(s) | migrations per run |", "|---|---:|---:|---:|---:|---:|"]
    by = {(r["scenario"], r["arm"]): r for r in summary}
    for scen in dict.fromkeys(r["scenario"] for r in summary):
        none, mig = by[(scen, "none")], by[(scen, "migration")]
        lines.append(f"| {scen} | {mig['seeds']} | {float(mig['mean_jct_ratio']):.3f} ± "
                     f"{float(mig['mean_jct_ratio_ci']):.3f} | {float(mig['makespan_ratio']):.3f} ± "
                     f"{float(mig['makespan_ratio_ci']):.3f} | {float(none['p95_jct']):.0f} -> "
                     f"{float(mig['p95_jct']):.0f} | {float(mig['migrations']):.1f} |")
    return "\n".join(lines) + "\n"


BENCH = BENCH_RESULTS
TARGET_P99_MS = {100: 2.0, 1000: 4.0, 5000: 10.0}
"""prioritize p99 targets, names mode; 100 full nodes: ``TARGET_NODES_P99_MS``."""
TARGET_NODES_P99_MS, TARGET_ENCODE_Q_MS, TARGET_RSS_MIB = 5.0, 2.0, 142.0
TARGET_NOOP_RATIO, TARGET_RATIO = 0.85, 0.7
ROUNDS_TO_ARGUE = 5
"""Interleaved rounds a scheduler run needs before the README's row prefers it to a newer, shorter run."""
SCALE_NODES = 5000
"""A scheduler run at this many KWOK nodes or more is the scale row (issue #26's 5,000 nodes), not the main one."""


class BenchRecordError(ValueError):
    """A benchmark result file the table cannot be made from: the file and why."""


def _mark(ok: bool) -> str:
    return "✔" if ok else "✘"


def _run(rec: dict) -> str:
    return f"{rec['measured_at']}, load {rec['load_before']:g} → {rec['load_after']:g}"


def _slash(values, fmt: str = ".2f") -> str:
    return " / ".join(format(v, fmt) for v in values)


def _policy_rows(rec: dict) -> list[str]:
    fig, rows = rec["figures"], []
    inf = fig.get("inference")
    if inf:
        by = [inf["sizes"][n] for n in sorted(inf["sizes"], key=int)]
        big = inf["sizes"].get("5000")
        target = (f"≤ {TARGET_ENCODE_Q_MS:g} ms at 5,000: wall {_mark(big['dqn_p50_ms'] <= TARGET_ENCODE_Q_MS)}, "
                  f"CPU {_mark(big['dqn_cpu_p50_ms'] <= TARGET_ENCODE_Q_MS)}") if big else ""
        rows.append(f"| DQN encode + Q-values p50 wall (CPU), {_slash(sorted(map(int, inf['sizes'])), ',')} nodes, "
                    f"model {inf['model_version']} | {_slash(r['dqn_p50_ms'] for r in by)} ms "
                    f"({_slash(r['dqn_cpu_p50_ms'] for r in by)} ms); encode alone "
                    f"{_slash(r['encode_p50_ms'] for r in by)}; demand-aware heuristic "
                    f"{_slash(r['heuristic_p50_ms'] for r in by)} | {target} | {_run(rec)} |")
    train = fig.get("training")
    if train:
        rows.append(f"| DQN training, {train['steps']:,} steps | {train['train_steps_per_s']:.0f} env steps/s "
                    f"(env alone {train['env_steps_per_s']:,.0f}/s) | | {_run(rec)} |")
    return rows


def _extender_rows(rec: dict) -> list[str]:
    fig, rows = rec["figures"], []
    by = {(r["mode"], r["nodes"]): r for r in fig["rows"]}

    def cells(mode: str, sizes: list[int]) -> tuple[str, str, str]:
        pri = " / ".join(f"{by[(mode, n)]['prioritize'][0]:.2f}/{by[(mode, n)]['prioritize'][1]:.2f}" for n in sizes)
        fil = " / ".join(f"{by[(mode, n)]['filter'][0]:.2f}/{by[(mode, n)]['filter'][1]:.2f}" for n in sizes)
        cpu = " / ".join(f"{by[(mode, n)]['filter'][2]:.2f}/{by[(mode, n)]['prioritize'][2]:.2f}" for n in sizes)
        return pri, fil, cpu

    for mode, label in (("names", "names (nodeCacheCapable)"), ("nodes", "full Node objects")):
        sizes = sorted(n for m, n in by if m == mode)
        if not sizes:
            continue
        pri, fil, cpu = cells(mode, sizes)
        if mode == "names":
            target = " / ".join(f"{TARGET_P99_MS[n]:g}" for n in sizes if n in TARGET_P99_MS)
            marks = " / ".join(_mark(by[(mode, n)]["prioritize"][1] <= TARGET_P99_MS[n])
                               for n in sizes if n in TARGET_P99_MS)
            target = f"p99 ≤ {target} ms: {marks}"
        else:
            target = (f"p99 ≤ {TARGET_NODES_P99_MS:g} ms at 100: "
                      f"{_mark(by[(mode, 100)]['prioritize'][1] <= TARGET_NODES_P99_MS)}") if 100 in sizes else ""
        rows.append(f"| extender over HTTP, {label}, {' / '.join(f'{n:,}' for n in sizes)} nodes: prioritize "
                    f"p50/p99; filter p50/p99; server CPU per request filter/prioritize | {pri} ms; {fil} ms; "
                    f"{cpu} ms | {target} | {_run(rec)} |")
    enc = {n: v for n, v in (fig.get("encode_q_ms") or {}).items() if v is not None}
    if "5000" in enc:
        sizes = sorted(enc, key=int)
        rows.append(f"| DQN encode + Q-values as the extender serves it, in-process, p50 wall (CPU), "
                    f"{_slash(map(int, sizes), ',')} nodes | {_slash(enc[n][0] for n in sizes)} ms "
                    f"({_slash(enc[n][1] for n in sizes)} ms) | ≤ {TARGET_ENCODE_Q_MS:g} ms at 5,000: wall "
                    f"{_mark(enc['5000'][0] <= TARGET_ENCODE_Q_MS)}, CPU {_mark(enc['5000'][1] <= TARGET_ENCODE_Q_MS)}"
                    f" | {_run(rec)} |")
    rss = [r["rss_mib"] for r in fig["rows"] if r["nodes"] == 5000 and r["mode"] == "names"]
    if rss:
        rows.append(f"| extender RSS at 5,000 nodes (names mode) | {rss[0]:.1f} MiB | ≤ {TARGET_RSS_MIB:g} MiB "
                    f"{_mark(rss[0] <= TARGET_RSS_MIB)} | {_run(rec)} |")
    return rows


def _span(x: dict | None, fmt: str = ".2f") -> str:
    """median [min–max] of a ``bench.rounds.spread`` (the median alone over one round, "-" over none)."""
    if x is None:
        return "-"
    return f"{x['median']:{fmt}}" + (f" [{x['min']:{fmt}}–{x['max']:{fmt}}]" if x["n"] > 1 else "")


def _scheduler_rows(rec: dict) -> list[str]:
    fig = rec["figures"]
    s = round_summary(fig["arms"])
    n, ratio, none = s["n"], s["ratio_to_noop"], s["ratio_to_no_extender"]
    if not n:
        raise BenchRecordError(f"{rec['file']}: no round with both a no-op extender and a drsched arm")
    met = sum(r["ratio_to_noop"] >= TARGET_NOOP_RATIO for r in s["rounds"])
    base = s["baseline_ratio_to_noop"]
    figure = (f"{' / '.join(_span(v, '.1f') for v in s['pods_s'].values())} pods/s: ratio to no-op extender "
              f"**{_span(ratio)}**, to no extender {_span(none)}"
              + (f", baseline tree to no-op {_span(base)}" if base else "")
              + f"; extender CPU ms per pod drsched {_span(s['extender_ms'])}, no-op {_span(s['noop_extender_ms'])}; "
              f"kube-scheduler {_span(s['scheduler_ms'])}")
    target = (f"ratio to no-op ≥ {TARGET_NOOP_RATIO:g} {_mark(ratio['median'] >= TARGET_NOOP_RATIO)}"
              + (f" ({met} of {n} rounds)" if n > 1 else "")
              + (f"; to none ≥ {TARGET_RATIO:g} {_mark(none['median'] >= TARGET_RATIO)}" if none else ""))
    return [f"| stock kube-scheduler, {fig['nodes']:,} KWOK nodes × {fig['pods']:,} pods, {n} round{'s' * (n != 1)} "
            f"of the arms {' / '.join(s['pods_s'])} (no extender once, before round 1), median [min–max] over the "
            f"rounds: pods/s; drsched's ratio to the no-op extender of its round; CPU ms per scheduled pod of the "
            f"extender and of kube-scheduler (drsched's arm) | {figure} | {target} | {_run(rec)}, `{rec['file']}` |"]


def _sim_rows(rec: dict) -> list[str]:
    sizes = rec["figures"]["sizes"]
    first = sizes[0]
    core, run = _slash((m["core_per_s"] for m in sizes), ",.0f"), _slash((m["run_per_s"] for m in sizes), ",.0f")
    return [f"| simulator placements/s, {rec['figures']['policy']} policy, {_slash((m['nodes'] for m in sizes), ',')} "
            f"nodes | {core} ({run} with a `ClusterSnapshot` per decision) | ≥ 20,000 at {first['nodes']} nodes "
            f"{_mark(first['core_per_s'] >= 20_000)} | {_run(rec)} |"]


def _monitor_rows(rec: dict) -> list[str]:
    fig = rec["figures"]
    cpu = fig["agent_cpu_pct"] - fig["baseline_cpu_pct"]
    return [f"| node monitor CPU at {fig['interval_s']:g} s sampling, {fig['pods']} pods (agent minus an idle "
            f"python) | {cpu:.2f} % of one core; RSS {fig['rss_mib']:.1f} MiB | ≤ 1 % {_mark(cpu <= 1.0)} | "
            f"{_run(rec)} |"]


def benchmarks(records: dict[str, dict]) -> str:
    """The README's Benchmarks table from the result files the benchmarks write (``bench/record.py``)."""
    lines = ["| what | figure | target | run |", "|---|---|---|---|"]
    renderers = {"sim": _sim_rows, "policy": _policy_rows, "extender": _extender_rows,
                 "scheduler": _scheduler_rows, SCALE: _scheduler_rows, "monitor": _monitor_rows}
    for name, rows in renderers.items():
        if name in records:
            lines += rows(records[name])
    lines += ["", "Commands: " + "; ".join(f"`{records[n]['command']}`" for n in renderers if n in records) + "."]
    return "\n".join(lines) + "\n"


def _enough_rounds(rec: dict) -> bool:
    return round_summary(rec["figures"]["arms"])["n"] >= ROUNDS_TO_ARGUE


def _every_size(rec: dict) -> bool:
    """A run of this checkout alone with names-mode rows at each size the targets name (not a one-size look)."""
    fig = rec["figures"]
    return not fig.get("baseline_tree") and {("names", n) for n in TARGET_P99_MS} <= {
        (r["mode"], r["nodes"]) for r in fig["rows"]}


KEEP_EVERY_RUN = {"scheduler": (_enough_rounds, False), "extender": (_every_size, True)}
"""Benchmark -> (which of its run files the table prefers, whether the legacy file comes before a run it does not)."""


SCALE = "scheduler-scale"
"""The records' key of the scale row: the scheduler runs at ``SCALE_NODES`` or more, chosen as the main row is."""


def _at_scale(rec: dict) -> bool:
    return rec["figures"].get("nodes", 0) >= SCALE_NODES


def bench_record(root: Path, bench: str) -> dict | None:
    """The record ``bench``'s rows come from, with ``file`` (its path from ``root``): the newest of
    ``results/bench/runs/<bench>-*.json`` (by ``measured_at``, then name) that ``KEEP_EVERY_RUN`` prefers, else the
    newest run, else the legacy ``results/bench/<bench>.json`` (the extender: the legacy file before a run of
    fewer sizes); None when there is none. The scheduler's runs at ``SCALE_NODES`` or more are ``SCALE``'s, chosen
    among themselves the same way (no legacy file), and never the main row's."""
    scale = bench == SCALE
    bench = "scheduler" if scale else bench
    prefer, legacy_first = KEEP_EVERY_RUN[bench]
    runs = [{**json.loads(p.read_text()), "file": str(BENCH_RUNS / p.name)}
            for p in (root / BENCH_RUNS).glob(f"{bench}-*.json")]
    if bench == "scheduler":
        runs = [rec for rec in runs if _at_scale(rec) == scale]
        if scale:
            runs.sort(key=lambda rec: (rec["measured_at"], rec["file"]), reverse=True)
            return next((rec for rec in runs if prefer(rec)), runs[0] if runs else None)
    runs.sort(key=lambda rec: (rec["measured_at"], rec["file"]), reverse=True)
    path = root / BENCH / f"{bench}.json"
    legacy = [{**json.loads(path.read_text()), "file": str(BENCH / path.name)}] if path.is_file() else []
    others = [rec for rec in runs if not prefer(rec)]
    order = [rec for rec in runs if prefer(rec)] + (legacy + others if legacy_first else others + legacy)
    return order[0] if order else None


def derived(root: Path) -> dict[Path, str]:
    """Every derived result file (relative path -> content) whose inputs are present."""
    res, out = root / RESULTS, {}
    records = {p.stem: json.loads(p.read_text()) for p in sorted((root / BENCH).glob("*.json"))}
    for bench in (*KEEP_EVERY_RUN, SCALE):
        rec = bench_record(root, bench)
        if rec is not None:
            records[bench] = rec
    if records:
        out[BENCH / "benchmarks.md"] = benchmarks(records)
    for name, scoring in COMPARISONS:
        if (res / name / "summary.csv").exists():
            out[RESULTS / name / "comparison.md"] = comparison(read_summary(res / name / "summary.csv"),
                                                               served_scoring(res / name, scoring))
    for table, split in SERVED_TABLES.items():
        runs_of = served_runs(res, split)
        if {name for name, _ in runs_of} >= {split, f"{split}-served"}:  # argmax and the shipped filter at least
            out[RESULTS / table] = served(res, runs_of)
    if (res / "migration" / "migration_summary.csv").exists():
        with (res / "migration" / "migration_summary.csv").open(newline="") as f:
            out[RESULTS / "migration" / "migration.md"] = migration(list(csv.DictReader(f)))
    return out


def docs(root: Path) -> list[Path]:
    """Every file whose generated blocks this script fills: README.md, then docs/*.md."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def render(readme: str, root: Path) -> str:
    """A doc with every generated block replaced by the current content of the file it names."""
    def fill(m: re.Match) -> str:
        path = root / m["path"]
        if not path.is_file():
            raise FileNotFoundError(f"generated block names {m['path']}, which does not exist")
        return m.group(1) + path.read_text().rstrip("\n") + "\n" + m.group(4)
    return BLOCK.sub(fill, readme)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything is out of date")
    p.add_argument("--root", type=Path, default=ROOT,
                   help="the checkout whose results/policy/ to read (default: this one)")
    p.add_argument("--readme", type=Path, action="append",
                   help="a doc to fill (repeatable; default: ROOT/README.md and ROOT/docs/*.md)")
    args = p.parse_args(argv)
    root = args.root
    stale = []
    try:
        files = derived(root)
    except (SummaryError, BenchRecordError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    for rel, text in files.items():
        if not (root / rel).is_file() or (root / rel).read_text() != text:
            stale.append(str(rel))
            if not args.check:
                (root / rel).write_text(text)
    for doc in args.readme or docs(root):
        try:
            before = doc.read_text()
            after = render(before, root)
        except (OSError, FileNotFoundError) as exc:
            sys.stderr.write(f"error: {doc}: {exc}\n")
            return 2
        if after != before:
            stale.append(str(doc))
            if not args.check:
                doc.write_text(after)
    if args.check and stale:
        sys.stderr.write("out of date (run `python scripts/readme_tables.py`): " + ", ".join(stale) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
