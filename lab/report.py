"""The lab's output directory: CSV files appended arm by arm, and ``summary.md`` + plots made from them.

Why it exists: a run of many arms takes long and other tools read its CSVs while it goes on, so every arm's
rows are appended as soon as it ends, and the summary can be rebuilt from the files alone
(``python -m lab report DIR``). Files: jobs.csv, nodes.csv, events.csv, usage.csv, host.csv (the machine's
1-min load average during each arm: how noisy the run was), order.csv and gates.csv (``policy.labworld``),
protocol.yaml (the protocol the run was started under, ``lab.protocol``), world.json (the world it ran in),
summary.md, jct-cdf.png,
usage-<arm>.png (``@`` written ``+``, ``#`` written ``_``). A run that ``gates.csv`` flags is left out of every
table and listed as "flagged, rerun"; with a protocol the summary opens with its pre-registered section
(``lab.verdict``).
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections import defaultdict
from pathlib import Path

import numpy as np

from lab import arms as arm_names
from lab import stats, verdict
from lab.errors import LabError
from lab.gates import GateError, flagged_runs, read_system_rows, system_use
from lab.protocol import Protocol, load_protocol
from lab.schedule import variant_text
from lab.tenants import TENANT_FILE
from policy.labworld import FILES, VARIANTS
from policy.report import with_ci

ARM_ORDER = tuple(arm_names.BASES)
"""Base arms in report order; ``model@prefer-fit`` and the like follow their base (``lab.arms.sort_key``)."""
PROTOCOL_FILE = "protocol.yaml"
"""The copy of its protocol a run keeps in its output directory."""
RETIRED_DIR = "flagged"
"""Where a flagged run's rows go before it is rerun (same file names): kept, out of every table."""
PROTOCOL_RUNS_FILE = "protocol-runs.txt"
"""One line per start of a protocol run: when, and the commit that registered the protocol."""
WORLD_FILE = "world.json"
"""The world the directory's arms ran in (``policy.labworld.WORLDS``), its note and its nodes' links."""
LABELS = {"mean_jct_s": "mean JCT", "p95_jct_s": "p95 JCT", "makespan_s": "makespan", "mean_slowdown": "slowdown",
          "mean_best_slowdown": "slowdown vs best node", "utilisation": "utilisation", "imbalance": "imbalance"}


class ReportError(LabError, ValueError):
    """An output directory whose files cannot be read; the message names the file and line."""


def append_rows(out: Path, name: str, rows: list[dict]) -> None:
    """Append rows to ``out/name`` (header written when the file is new); columns are the file's fixed ones."""
    path = out / name
    new = not path.exists()
    columns = FILES[name] if new else _header(path)
    with path.open("a", newline="") as fh:
        # A file an older lab began keeps its columns: the run resumes in its format.
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerows(rows)


def _header(path: Path) -> tuple[str, ...]:
    with path.open(newline="") as fh:
        header = tuple(next(csv.reader(fh), ()))
    expected = FILES.get(path.name)
    if expected is not None and header != expected[:len(header)] or not header:
        raise ReportError(f"{path}:1: header must be {','.join(expected or ())}")
    return header


def read_rows(path: Path) -> list[dict]:
    """The rows of one of the lab's CSV files; columns added since an older lab wrote it read as empty."""
    if not path.exists():
        return []
    expected = FILES.get(path.name)
    header = _header(path)
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    missing = dict.fromkeys(expected[len(header):], "") if expected else {}
    return [{**row, **missing} for row in rows]


def retire_run(out: Path, key: tuple[int, str, str]) -> int:
    """Move every row of run ``key`` (seed, arm, variant) out of ``out``'s CSV files into ``out/flagged/``, so
    the run can be rerun without mixing two attempts; returns the rows moved. Files without a variant column
    (events.csv) match on seed and arm."""
    seed, arm, variant = key
    moved = 0
    for name in FILES:
        path = out / name
        if not path.exists() or "seed" not in (header := _header(path)) or "arm" not in header:
            continue
        rows = read_rows(path)
        mine = [int(r["seed"]) == seed and r["arm"] == arm and r.get("variant", variant) == variant for r in rows]
        if not any(mine):
            continue
        (out / RETIRED_DIR).mkdir(exist_ok=True)
        append_rows(out / RETIRED_DIR, name, [r for r, m in zip(rows, mine, strict=True) if m])
        tmp = path.with_suffix(".csv.tmp")  # the file is replaced whole: a reader never sees half of it
        with tmp.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=header, lineterminator="\n", extrasaction="ignore")
            writer.writeheader()
            writer.writerows(r for r, m in zip(rows, mine, strict=True) if not m)
        os.replace(tmp, path)
        moved += sum(mine)
    return moved


def sorted_arms(arms) -> list[str]:
    return sorted(arms, key=arm_names.sort_key)


def runs(jobs: list[dict], usage: list[dict], nodes: dict[str, dict]) -> dict[str, dict[tuple[int, str], dict]]:
    """variant (``under`` first) -> (seed, arm) -> that run's metrics (``stats.run_metrics``)."""
    out: dict[str, dict[tuple[int, str], dict]] = {}
    for variant in sorted({r["variant"] for r in jobs}, key=lambda v: (v != "under", v)):
        per_run = out.setdefault(variant, {})
        for seed, arm in sorted({(int(r["seed"]), r["arm"]) for r in jobs if r["variant"] == variant}):
            key = (seed, arm, variant)
            pick = [r for r in jobs if (int(r["seed"]), r["arm"], r["variant"]) == key]
            use = [r for r in usage if (int(r["seed"]), r["arm"], r["variant"]) == key]
            per_run[(seed, arm)] = stats.run_metrics(pick, use, nodes)
    return out


def _run_key(row: dict) -> tuple[int, str, str]:
    return int(row["seed"]), row["arm"], row["variant"]


def summarise(out: Path, protocol: Protocol | None = None) -> str:
    """Write summary.md and the plots from the CSV files in ``out``; returns the markdown. ``protocol``: judge
    the runs against it (default: the run's own ``protocol.yaml``, if it has one)."""
    jobs, usage, host = read_rows(out / "jobs.csv"), read_rows(out / "usage.csv"), read_rows(out / "host.csv")
    nodes = {r["node"]: r for r in read_rows(out / "nodes.csv")}
    if not jobs or not nodes:
        raise ReportError(f"{out}: no jobs.csv or nodes.csv rows yet")
    if protocol is None and (out / PROTOCOL_FILE).exists():
        protocol = load_protocol(out / PROTOCOL_FILE)
    flagged = flagged_runs(read_rows(out / "gates.csv"))
    rerun = flagged_runs(read_rows(out / RETIRED_DIR / "gates.csv"))
    jobs = [r for r in jobs if _run_key(r) not in flagged]
    usage = [r for r in usage if _run_key(r) not in flagged]
    per_variant = runs(jobs, usage, nodes)
    lines = verdict.retired_lines(rerun, RETIRED_DIR)
    if protocol is not None:
        starts = (out / PROTOCOL_RUNS_FILE).read_text().splitlines() if (out / PROTOCOL_RUNS_FILE).exists() else []
        lines += verdict.lines(protocol, per_variant.get(protocol.scenario.variant, {}), flagged, starts=starts,
                               label=LABELS.get(protocol.metric, ""))
    else:
        lines += verdict.flagged_lines(flagged)
    lines += unfinished_lines(jobs)
    for variant, per_run in per_variant.items():
        lines += _tables(variant, per_run)
    loads = [float(r["load1"]) for r in host]
    if loads:
        lines.append(f"Host 1-min load average during the arms (2 cores; the jobs and the cluster count too): mean "
                     f"{np.mean(loads):.2f}, p95 {np.percentile(loads, 95):.2f}, max {max(loads):.2f}.")
        lines.append("")
    lines += world_lines(out)
    lines += tenant_lines(out)
    lines += isolation_lines(out)
    lines += placement_lines(jobs, nodes)
    lines += controller_lines(read_rows(out / "controller.csv"), read_rows(out / "events.csv"))
    lines += cost_lines(jobs)
    text = "\n".join(lines)
    (out / "summary.md").write_text(text)
    _plots(out, jobs, usage)
    return text


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.0f} %"


def world_lines(out: Path) -> list[str]:
    """The world the run was in (``world.json``; none: a directory from before worlds, the drs world)."""
    path = out / WORLD_FILE
    if not path.exists():
        return []
    try:
        rec = json.loads(path.read_text())
        links = ", ".join(f"{node} {mbit}" for node, mbit in rec["links_mbit"].items())
        return [f"World: `{rec['world']}` ({rec['note']}); node links {links} Mbit/s.", ""]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ReportError(f"{path}: not a world record ({exc!r})") from None


def tenant_lines(out: Path) -> list[str]:
    """The long-running tenants every arm of a seed ran beside (``tenants.csv``, the ``tenants`` scenario)."""
    rows = read_rows(out / TENANT_FILE)
    if not rows:
        return []
    per_seed: dict[str, list[str]] = {}
    for r in rows:
        per_seed.setdefault(r["seed"], []).append(
            f"{r['node']} (asks {r['request_m']} m, uses {r['high_m']}/{r['low_m']} m, {r['high_s']} s of "
            f"{r['period_s']} s busy)")
    seeds = "; ".join(f"seed {seed}: {', '.join(where)}" for seed, where in per_seed.items())
    return [f"Tenants (placed before every arm's jobs, in no table below): {seeds}.", ""]


def isolation_lines(out: Path) -> list[str]:
    """How the run was isolated (``isolation.json``) and, per run, how busy the system and node CPU sets were
    and what the system cgroups used (``system.csv``)."""
    path = out / "isolation.json"
    if not path.exists():
        return []
    try:
        rec = json.loads(path.read_text())
    except ValueError as exc:
        raise ReportError(f"{path}: not JSON ({exc})") from None
    quotas = "/".join(f"{m}" for m in (rec.get("node_quotas_m") or {}).values())
    if rec.get("isolated"):
        iso = rec.get("isolation") or {}
        lines = [f"Host isolation: on. System CPUs {iso.get('system_cpus')}, node CPUs {iso.get('node_cpus')}; node "
                 f"quotas {quotas} m (the jobs scaled by {rec.get('node_scale')}, `policy.labworld.node_scale`)."]
    else:
        lines = [f"Host isolation: OFF ({rec.get('why_not')}); node quotas {quotas} m share the machine's CPUs with "
                 "the control plane."]
    by_run: dict[tuple, list[dict]] = defaultdict(list)
    for r in read_rows(out / "system.csv"):
        by_run[_run_key(r)].append(r)
    if by_run:
        lines += ["", "| seed | arm | variant | system CPUs busy | node CPUs busy | system cgroups (m) |",
                  "|---:|---|---|---:|---:|---|"]
        for (seed, arm, variant), rows in sorted(by_run.items()):
            try:
                use = system_use(read_system_rows(rows))
            except GateError as exc:
                raise ReportError(f"{out / 'system.csv'}: {exc}") from None
            groups = ", ".join(f"{g} {m:g}" for g, m in sorted(use.cgroup_m.items())) or "n/a"
            lines.append(f"| {seed} | {arm} | {variant} | {_pct(use.system_busy)} | {_pct(use.node_busy)} | {groups} |")
    return [*lines, ""]


def placement_lines(jobs: list[dict], nodes: dict[str, dict]) -> list[str]:
    """Where each arm put the compute (cpu, train) jobs: count per node, smallest node first, and in brackets
    the share of those jobs' summed JCT spent there -- a job bigger than its node is what slows runs most."""
    order = sorted(nodes, key=lambda n: (float(nodes[n]["cpu_quota_m"]), n))
    heavy = [r for r in jobs if r["kind"] in ("cpu", "train") and r["jct_s"] not in ("", None)]
    if not heavy:
        return []
    lines = ["Compute jobs (cpu, train) per node, all seeds (in brackets: share of their summed JCT spent there):",
             "", "| variant | arm | jobs | " + " | ".join(f"{n} ({nodes[n]['cpu_quota_m']} m)" for n in order) + " |",
             "|---|---|---:|" + "---:|" * len(order)]
    for variant in sorted({r["variant"] for r in heavy}, key=lambda v: (v != "under", v)):
        for arm in sorted_arms({r["arm"] for r in heavy if r["variant"] == variant}):
            rows = [r for r in heavy if (r["variant"], r["arm"]) == (variant, arm)]
            total = sum(float(r["jct_s"]) for r in rows) or 1.0
            cells = []
            for n in order:
                on = [float(r["jct_s"]) for r in rows if r["node"] == n]
                cells.append(f"{len(on)} ({sum(on) / total:.2f})")
            lines.append(f"| {variant} | {arm} | {len(rows)} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _tables(variant: str, per_run: dict) -> list[str]:
    arms = sorted_arms({arm for _, arm in per_run})
    seeds = sorted({seed for seed, _ in per_run})
    ratio = variant_text(variant) if variant in VARIANTS else "unknown variant"
    lines = [f"### variant `{variant}` ({ratio}); seeds {', '.join(map(str, seeds))}", "",
             "| arm | runs | " + " | ".join(LABELS[m] for m in stats.METRICS) + " |",
             "|---|---:|" + "---:|" * len(stats.METRICS)]
    fmt = {"mean_jct_s": ".1f", "p95_jct_s": ".1f", "makespan_s": ".1f", "mean_slowdown": ".2f",
           "mean_best_slowdown": ".2f", "utilisation": ".3f", "imbalance": ".3f"}
    absolute = stats.means(per_run)
    for arm in arms:
        cells = [with_ci(*absolute[arm][m][:2], fmt[m]) if math.isfinite(absolute[arm][m][0]) else "n/a"
                 for m in stats.METRICS]
        lines.append(f"| {arm} | {absolute[arm]['mean_jct_s'][2]} | " + " | ".join(cells) + " |")
    lines += ["", "Times in seconds; ± is the 95 % interval over seeds.", ""]
    if "default" in arms and len(arms) > 1:
        rel = stats.ratios(per_run)
        lines += ["Ratio to `default` on the same seed (mean over seeds ± 95 %; < 1 is better except utilisation):",
                  "", "| arm | seeds | " + " | ".join(LABELS[m] for m in stats.METRICS) + " |",
                  "|---|---:|" + "---:|" * len(stats.METRICS)]
        for arm in arms:
            if arm == "default":
                continue
            cells = [with_ci(*rel[arm][m][:2], ".3f") if math.isfinite(rel[arm][m][0]) else "n/a"
                     for m in stats.METRICS]
            lines.append(f"| {arm} | {rel[arm]['mean_jct_s'][2]} | " + " | ".join(cells) + " |")
        lines.append("")
    if {"model", "migration"} <= set(arms):
        rel = stats.ratios(per_run, baseline="model")["migration"]
        cells = [with_ci(*rel[m][:2], ".3f") if math.isfinite(rel[m][0]) else "n/a" for m in stats.METRICS]
        lines += ["`migration` / `model` on the same seed: " + ", ".join(
            f"{LABELS[m]} {c}" for m, c in zip(stats.METRICS, cells, strict=True)) + f" ({rel['mean_jct_s'][2]} seeds)",
            ""]
    return lines


def controller_lines(rows: list[dict], events: list[dict]) -> list[str]:
    """What the migration controller did in each migration arm (its counters at the arm's end, from
    controller.csv) and the measured stop-to-restart gap of each move (events.csv): why jobs did or did not move.
    """
    if not rows:
        return []
    lines = ["Migration controller, per arm (its counters at the arm's end; skips count job-cycles):", "",
             "| seed | arm | started | completed | released | verdicts | skipped (reason: job-cycles) | "
             "stop-to-restart s |", "|---:|---|---:|---:|---|---|---|---|"]
    for seed, arm, variant in sorted({(int(r["seed"]), r["arm"], r["variant"]) for r in rows}):
        mine = [r for r in rows if (int(r["seed"]), r["arm"], r["variant"]) == (seed, arm, variant)]

        def total(metric: str, rows_=mine) -> str:
            return f"{sum(float(r['value']) for r in rows_ if r['metric'] == metric):g}"

        def by_label(metric: str, rows_=mine) -> str:
            parts = [(r["labels"].split("=", 1)[-1], float(r["value"])) for r in rows_ if r["metric"] == metric]
            return ", ".join(f"{k}: {v:g}" for k, v in sorted(parts, key=lambda p: -p[1]) if v) or "none"

        gaps = [r["value"] for r in events if int(r["seed"]) == seed and r["arm"] == arm
                and r["event"].startswith("migration ")]
        lines.append(f"| {seed} | {arm} | {total('started_total')} | {total('completed_total')} | "
                     f"{by_label('released_total')} | {by_label('decisions_total')} | {by_label('skipped_total')} | "
                     f"{', '.join(gaps) or '-'} |")
    return [*lines, ""]


def unfinished_lines(jobs: list[dict]) -> list[str]:
    """The runs in which some job never finished (the arm timed out first): every JCT metric counts finished jobs
    only, so there it understates the arm's (a positive control's ratio is then a lower bound)."""
    left: dict[tuple[int, str], list[str]] = {}
    for r in jobs:
        if r.get("jct_s") in (None, ""):
            left.setdefault((int(r["seed"]), r["arm"]), []).append(r["job"])
    if not left:
        return []
    runs_ = "; ".join(f"seed {seed} `{arm}`: {len(names)} ({' '.join(sorted(names)[:6])}"
                      f"{' ...' if len(names) > 6 else ''})" for (seed, arm), names in sorted(left.items()))
    return [f"**Unfinished jobs** (the arm timed out before they ended; their run's JCT metrics count only the "
            f"finished jobs, so they understate it, and a ratio above 1 there is a lower bound): {runs_}.", ""]


def cost_lines(jobs: list[dict]) -> list[str]:
    """Checkpoint and restore costs as the jobs measured them (jobs.csv), over every arm."""
    writes = [(int(r["ckpt_writes"]), float(r["ckpt_write_mean_s"])) for r in jobs
              if r.get("ckpt_write_mean_s") not in (None, "") and r.get("ckpt_writes") not in (None, "", "0")]
    restores = [float(r["restore_s"]) for r in jobs if r.get("restore_s") not in (None, "")]
    if not writes:
        return []
    n = sum(k for k, _ in writes)
    mean = sum(k * m for k, m in writes) / n
    line = (f"Checkpoints, as the jobs measured them: {n} written, mean {mean * 1000:.1f} ms each (per-job means "
            f"up to {max(m for _, m in writes) * 1000:.1f} ms)")
    if restores:
        line += f"; restores (load + apply): {len(restores)}, mean {np.mean(restores) * 1000:.1f} ms"
    return [line + ".", ""]


def _plots(out: Path, jobs: list[dict], usage: list[dict]) -> None:
    from policy.report import _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    drawn = 0
    for variant in sorted({r["variant"] for r in jobs}):
        for arm in sorted_arms({r["arm"] for r in jobs}):
            x = np.sort([float(r["jct_s"]) for r in jobs if r["arm"] == arm and r["variant"] == variant
                         and r["jct_s"] != ""])
            if len(x):
                ax.plot(x, np.arange(1, len(x) + 1) / len(x), label=f"{arm} ({variant})")
                drawn += 1
    ax.set(xlabel="job completion time (s)", ylabel="fraction of jobs", title="JCT CDF, all seeds")
    if drawn:
        ax.legend(fontsize=8)
    else:  # no job completed in any arm: say so on the plot rather than draw an empty legend
        ax.text(0.5, 0.5, "no job completed", ha="center", va="center", transform=ax.transAxes)
    fig.savefig(out / "jct-cdf.png", dpi=80)
    plt.close(fig)
    first = min((int(r["seed"]) for r in usage), default=None)
    series: dict[tuple[str, str], dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for r in usage:
        if int(r["seed"]) == first and r["variant"] == usage[0]["variant"]:
            series[r["arm"]][r["node"]].append((float(r["t_s"]), float(r["cpu_m"])))
    for arm, per_node in series.items():
        fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
        for node, points in sorted(per_node.items()):
            t, v = zip(*sorted(points), strict=True)
            ax.plot(t, v, label=node, lw=1)
        ax.set(xlabel="time (s)", ylabel="cpu used by jobs (millicores)", title=f"per-node cpu, {arm}, seed {first}")
        ax.legend(fontsize=8)
        fig.savefig(out / f"usage-{arm_names.file_part(arm)}.png", dpi=80)
        plt.close(fig)
