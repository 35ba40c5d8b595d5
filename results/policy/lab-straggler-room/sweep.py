"""The design sweep of results/policy/lab-straggler-room (README.md): every design of the grid, arms ``none`` and
``migration`` on seeds 801-820 of ``policy.evaluate migration --scenarios lab-straggler``, judged by the selection
rule committed in README.md before the sweep ran. Writes ``sweep.csv`` (one row per design) and prints the table.

    PYTHONPATH=. python results/policy/lab-straggler-room/sweep.py --out /tmp/room-sweep

Each design's own evaluation output goes to ``--out``/<design> (not committed: it holds wall times).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import itertools
import math
import sys
from pathlib import Path

from policy.migration_eval import MigrationArgs, run
from policy.paired import paired_power

HERE = Path(__file__).parent
JOBS, WINDOWS, WORKS = (16, 24, 32, 48), (30.0, 90.0, 180.0), (2.5, 5.0)
VARIANTS, CUTS = ("honest", "under"), (20.0, 60.0)
SEEDS, SEED_BASE, LAB_SEEDS = 20, 801, 12
LAB_PER_SIM = 1.37
"""The straggler pilot's lab / simulator makespan (221 s against 161 s)."""
ARM_MAX_S = 480.0
AA_SD_48 = 0.021
"""The straggler pilot's A/A sd of the mean-JCT log ratio, at 48 jobs a seed."""


def judge(jobs: int, summary: dict[str, dict], runs: list[dict]) -> dict:
    """One design's row: the prediction and the two eligibility tests of README.md."""
    mig = summary["migration"]
    longest = max(float(r["makespan"]) for r in runs)
    ratio, sd_sim = float(mig["mean_jct_geo"]), float(mig["mean_jct_log_sd"])
    sd = math.hypot(sd_sim, AA_SD_48 * math.sqrt(48 / jobs))
    power = paired_power(LAB_SEEDS, delta=math.log(ratio), sd=sd) if ratio != 1.0 else 0.05
    return {"jct": ratio, "jct_low": float(mig["mean_jct_geo_low"]), "jct_high": float(mig["mean_jct_geo_high"]),
            "jct_sd": sd_sim, "makespan": float(mig["makespan_geo"]), "makespan_sd": float(mig["makespan_log_sd"]),
            "moves": float(mig["migrations"]), "none_makespan_s": float(summary["none"]["makespan"]),
            "longest_s": longest, "lab_arm_s": longest * LAB_PER_SIM, "power12": power,
            "eligible": longest * LAB_PER_SIM <= ARM_MAX_S and power >= 0.8}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    out = p.parse_args().out
    rows = []
    for jobs, window, work, variant, at in itertools.product(JOBS, WINDOWS, WORKS, VARIANTS, CUTS):
        name = f"j{jobs}-w{window:g}-x{work:g}-{variant}-at{at:g}"
        args = MigrationArgs(scenarios="lab-straggler", seeds=SEEDS, seed_base=SEED_BASE, arms="none,migration",
                             lab_jobs=jobs, lab_window_s=window, lab_work=work, lab_variant=variant, lab_at_s=at,
                             out=out / name, no_plots=True, jobs=jobs).with_unset_filled()
        with contextlib.redirect_stdout(io.StringIO()):
            if run(args) != 0:
                raise SystemExit(f"{name}: the evaluation refused its arguments")
        summary = {r["arm"]: r for r in csv.DictReader((out / name / "migration_summary.csv").open())}
        runs = list(csv.DictReader((out / name / "migration_runs.csv").open()))
        row = {"design": name, "jobs": jobs, "window_s": window, "work": work, "variant": variant, "at_s": at,
               **judge(jobs, summary, runs)}
        rows.append(row)
        sys.stdout.write(f"{name:<28} jct {row['jct']:.3f} makespan {row['makespan']:.3f} moves {row['moves']:.1f} "
                         f"lab arm {row['lab_arm_s']:.0f} s power12 {row['power12']:.2f}"
                         f"{' eligible' if row['eligible'] else ''}\n")
        sys.stdout.flush()
    with (HERE / "sweep.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows({k: f"{v:.4f}" if isinstance(v, float) else v for k, v in r.items()} for r in rows)
    ok = sorted((r for r in rows if r["eligible"]), key=lambda r: r["jct"])
    if ok:
        tied = [r for r in ok if r["jct"] <= ok[0]["jct"] + 0.01]
        best = min(tied, key=lambda r: (round(r["makespan"], 6), -r["jobs"]))
        sys.stdout.write(f"chosen by the rule: {best['design']} (tied within 0.01: "
                         f"{', '.join(r['design'] for r in tied)})\n")
    else:
        sys.stdout.write("no design is eligible\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
