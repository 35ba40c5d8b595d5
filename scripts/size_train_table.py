"""Each DQN's served excess over the best heuristic's (default-k8s, demand-aware, lookahead): geometric mean over
one evaluation's cases (cases whose best excess is below 0.005 left out, ratios floored at 0.1), per case when
there are few. The table of results/policy/size-train/README.md.

    python scripts/size_train_table.py results/policy/size-train/size-100-served/summary.csv
"""

from __future__ import annotations

import csv
import math
import sys
from collections import defaultdict


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)  # noqa: T201
        return 0
    excess: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    with open(argv[0]) as fh:
        for row in csv.DictReader(fh):
            excess[(row["scenario"], row["load"])][row["policy"]] = float(row["excess_slowdown"])
    policies = sorted(p for p in next(iter(excess.values())) if p.startswith("dqn"))
    for policy in policies:
        logs, per = [], []
        for (fam, load), e in sorted(excess.items()):
            best = min(e["default-k8s"], e["demand-aware"], e["lookahead"])
            if best >= 0.005:
                ratio = max(e[policy] / best, 0.1)
                logs.append(math.log(ratio))
                per.append(f"{fam} {load}: {ratio:.2f}")
        cases = "; ".join(per) if len(per) < 7 else ""
        print(f"{policy}: {math.exp(sum(logs) / len(logs)):.3f} over {len(logs)} cases  {cases}")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
