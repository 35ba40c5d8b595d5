"""The progress-information study's table (issue #22, deliverable 1): lookahead-time against lookahead.

Reads each ``results/policy/progress-info/validation-<mode>/summary.csv`` and prints, per validation case, the
excess slowdown of ``lookahead`` and ``lookahead-time`` and their ratio, and the geometric mean of
lookahead-time's excess over the best of demand-aware and lookahead (the ratio rule of ``policy.comparison``:
n/a where the best is below its floor).

    PYTHONPATH=. python scripts/progress_info_table.py [DIR ...]
"""

from __future__ import annotations

import argparse
import csv
import math
from collections import defaultdict
from pathlib import Path

from policy.comparison import MIN_EXCESS

ROOT = Path("results/policy/progress-info")


def table(summary: Path) -> str:
    excess: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    with summary.open() as fh:
        for row in csv.DictReader(fh):
            excess[(row["scenario"], row["load"])][row["policy"]] = float(row["excess_slowdown"])
    lines = ["| family | load | lookahead | lookahead-time | time / plain | time / best rule |",
             "|---|---|---:|---:|---:|---:|"]
    logs = []
    for (fam, load), e in sorted(excess.items()):
        plain, timed = e["lookahead"], e["lookahead-time"]
        best = min(e["demand-aware"], plain)
        ratio = timed / best if best >= MIN_EXCESS else math.nan
        if math.isfinite(ratio):
            logs.append(math.log(ratio))
        lines.append(f"| {fam} | {load} | {plain:.4f} | {timed:.4f} | {timed / plain:.3f} | "
                     + ("n/a" if math.isnan(ratio) else f"{ratio:.3f}") + " |")
    gm = math.exp(sum(logs) / len(logs)) if logs else math.nan
    lines.append(f"\ngeometric mean of lookahead-time / best rule over {len(logs)} cases: **{gm:.3f}**")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path,
                        default=[ROOT / "validation-oracle", ROOT / "validation-reports"])
    for d in parser.parse_args(argv).dirs:
        print(f"### {d}\n\n{table(d / 'summary.csv')}\n")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
