"""R of the plan (README.md): student / served model mean JCT, paired per seed, geometric mean with a 95 % t interval
over the seeds, per family of ``labsim/runs.csv`` (as ``results/policy/promote-log`` computed 0.955 for
``lab-mr-under``), and demand-aware / served model beside it. From the repository root:

    PYTHONPATH=. python results/policy/sim-daemons/ratios.py        # writes ratios.md here
"""

from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

OUT = Path(__file__).parent
PAIRS = (("dqn:student", "dqn:default"), ("demand-aware", "dqn:default"))


def main() -> int:
    jct: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    with open(OUT / "labsim" / "runs.csv") as f:
        for r in csv.DictReader(f):
            jct[(r["scenario"], r["policy"])][int(r["seed"])] = float(r["mean_jct"])
    lines = ["| family | " + " | ".join(f"{a} / {b}" for a, b in PAIRS) + " |", "|---|---|---|"]
    for fam in sorted({s for s, _ in jct}):
        cells = []
        for a, b in PAIRS:
            logs = np.log([jct[(fam, a)][s] / jct[(fam, b)][s] for s in sorted(jct[(fam, b)])])
            half = stats.t.ppf(0.975, len(logs) - 1) * logs.std(ddof=1) / np.sqrt(len(logs))
            m = logs.mean()
            cells.append(f"{np.exp(m):.3f} ({np.exp(m - half):.3f}-{np.exp(m + half):.3f})")
        lines.append(f"| {fam} | " + " | ".join(cells) + " |")
    # Not in the plan: how much the change itself moves student / served, paired by seed across the families
    # (the same seeds give the same jobs and arrivals in every frame).
    a, b = PAIRS[0]
    for fam in ("lab-mr-under-isolated", "lab-mr-under-daemons"):
        base = "lab-mr-under"
        d = np.array([np.log(jct[(fam, a)][s] / jct[(fam, b)][s]) - np.log(jct[(base, a)][s] / jct[(base, b)][s])
                      for s in sorted(jct[(base, b)])])
        half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
        lines.append(f"\n{fam} against {base}, student / served, ratio of ratios paired by seed: "
                     f"{np.exp(d.mean()):.3f} ({np.exp(d.mean() - half):.3f}-{np.exp(d.mean() + half):.3f})")
    (OUT / "ratios.md").write_text("\n".join(lines) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
