"""Is a rerun the same experiment? Two lab output directories compared: schedules, placements, ratios.

Why it exists: the experiment claims to be reproducible — the same seed gives the same schedule, a fixed
policy makes the same placements, and a rerun's ratios to the default scheduler fall inside the intervals
the first run reported. On real nodes that is measured, not assumed: placements depend on when earlier jobs
finished, which a busy host shifts. Pure: reads the CSV files of two ``python -m lab run`` directories.

For every (variant, arm) in both: the reference's ratio to ``default`` (mean ± 95 % over its seeds), the
rerun's, and whether the rerun's mean lies inside the reference's interval; for every (seed, arm, variant)
run in both, the share of jobs placed on the same node; for every seed's schedule file in both, whether the
two are byte-identical.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from lab import arms, report, stats
from policy.report import with_ci

CHECKED = ("mean_jct_s", "makespan_s", "imbalance")


@dataclass(frozen=True)
class RatioCheck:
    variant: str
    arm: str
    metric: str
    reference: tuple[float, float, int]  # mean, 95 % half-width, seeds
    rerun: tuple[float, float, int]

    @property
    def inside(self) -> bool:
        mean, half, _ = self.reference
        return math.isfinite(self.rerun[0]) and abs(self.rerun[0] - mean) <= half


@dataclass(frozen=True)
class Placement:
    variant: str
    arm: str
    seed: int
    same: int
    jobs: int


def _per_run(out: Path) -> dict[str, dict[tuple[int, str], dict[str, float]]]:
    """variant -> (seed, arm) -> metrics, as the summary computes them."""
    jobs, usage = report.read_rows(out / "jobs.csv"), report.read_rows(out / "usage.csv")
    nodes = {r["node"]: r for r in report.read_rows(out / "nodes.csv")}
    if not jobs or not nodes:
        raise report.ReportError(f"{out}: no jobs.csv or nodes.csv rows")
    return report.runs(jobs, usage, nodes)


def ratio_checks(reference: Path, rerun: Path) -> list[RatioCheck]:
    ref, new = _per_run(reference), _per_run(rerun)
    out = []
    for variant in sorted(set(ref) & set(new)):
        r_rel, n_rel = stats.ratios(ref[variant]), stats.ratios(new[variant])
        for arm in report.sorted_arms(set(r_rel) & set(n_rel) - {"default"}):
            for metric in CHECKED:
                if r_rel[arm][metric][2] and n_rel[arm][metric][2]:
                    out.append(RatioCheck(variant, arm, metric, r_rel[arm][metric], n_rel[arm][metric]))
    return out


def placements(reference: Path, rerun: Path) -> list[Placement]:
    def nodes_of(out: Path) -> dict[tuple[str, str, int], dict[str, str]]:
        found: dict[tuple[str, str, int], dict[str, str]] = {}
        for r in report.read_rows(out / "jobs.csv"):
            found.setdefault((r["variant"], r["arm"], int(r["seed"])), {})[r["job"]] = r["node"]
        return found

    ref, new = nodes_of(reference), nodes_of(rerun)
    out = []
    for key in sorted(set(ref) & set(new)):
        common = set(ref[key]) & set(new[key])
        same = sum(1 for job in common if ref[key][job] == new[key][job] and ref[key][job])
        out.append(Placement(*key, same=same, jobs=len(common)))
    return out


def schedules(reference: Path, rerun: Path) -> list[tuple[str, bool]]:
    """(schedule file name, identical?) for every schedule file both directories hold."""
    names = {p.name for p in reference.glob("schedule-*.csv")} & {p.name for p in rerun.glob("schedule-*.csv")}
    return [(n, (reference / n).read_bytes() == (rerun / n).read_bytes()) for n in sorted(names)]


def compare(reference: Path, rerun: Path) -> str:
    """The markdown comparison (module docstring)."""
    lines = [f"## `{rerun}` against `{reference}`", ""]
    sched = schedules(reference, rerun)
    same_sched = sum(ok for _, ok in sched)
    lines += [f"Schedules: {same_sched} of {len(sched)} schedule files byte-identical"
              + (f" (differ: {', '.join(n for n, ok in sched if not ok)})" if same_sched < len(sched) else ""), ""]
    checks = ratio_checks(reference, rerun)
    if checks:
        lines += ["Ratio to `default` (mean over seeds ± 95 %): is the rerun's mean inside the reference's interval?",
                  "", "| variant | arm | metric | reference | rerun | inside |", "|---|---|---|---:|---:|---|"]
        for c in checks:
            lines.append(f"| {c.variant} | {c.arm} | {report.LABELS[c.metric]} | "
                         f"{with_ci(*c.reference[:2], '.3f')} ({c.reference[2]} seeds) | "
                         f"{with_ci(*c.rerun[:2], '.3f')} ({c.rerun[2]} seeds) | {'yes' if c.inside else 'NO'} |")
        lines += ["", f"{sum(c.inside for c in checks)} of {len(checks)} rerun ratios inside the reference's "
                  "intervals.", ""]
    places = placements(reference, rerun)
    if places:
        lines += ["Placements: jobs of the same seed and arm placed on the same node in both runs.", "",
                  "| variant | arm | same node | jobs | share |", "|---|---|---:|---:|---:|"]
        totals: dict[tuple[str, str], list[int]] = {}
        for p in places:
            t = totals.setdefault((p.variant, p.arm), [0, 0])
            t[0], t[1] = t[0] + p.same, t[1] + p.jobs
        for (variant, arm), (same, jobs) in sorted(totals.items(), key=lambda kv: (kv[0][0], arms.sort_key(kv[0][1]))):
            lines.append(f"| {variant} | {arm} | {same} | {jobs} | {same / jobs:.2f} |" if jobs else
                         f"| {variant} | {arm} | 0 | 0 | n/a |")
        lines.append("")
    return "\n".join(lines)
