"""Where the student and the served model pick differently on the lab's `model`-arm serve rows.

Each such pod's demand, both picks and both estimated JCTs (the contention model, as `policy.promote --log-rows
served --nodes ...` computes them), then the geometric mean of student / served by the pod's dominant resource
(its demand over the lab's largest node's capacity). From the repository root:

    PYTHONPATH=. python results/policy/promote-log/differ.py > results/policy/promote-log/differ.txt
"""

import sys
from collections import Counter

import numpy as np

from policy.calibration import default_params
from policy.decisionlog import read_log
from policy.model import ModelScorer, load_model
from policy.offline import model_estimates
from policy.promote import log_rows

LOG = "results/lab/multi-resource-2026-12-07/decisions"
STUDENT = "results/policy/distill/models/student.npz"
SERVED = "policy/models/default.npz"
JOB_NODES = frozenset({"rn-small", "rn-medium", "rn-medium-mem", "rn-large"})
SCALE = np.array([1.0, 4.0, 12.5, 100.0])  # cpu cores, GiB, MB/s, MB/s: roughly the largest job node's capacity
KINDS = ("cpu", "mem", "net", "disk")


def main() -> None:
    served = load_model(SERVED)
    rows = log_rows(read_log(LOG).joined(), "served", served.version)
    how = {"params": default_params(), "hot_filter": "prefer-cool", "nodes": JOB_NODES}
    c, _ = model_estimates(rows, ModelScorer(load_model(STUDENT), name="student"), **how)
    b, _ = model_estimates(rows, ModelScorer(served, name="served"), **how)
    moves: Counter = Counter()
    by_kind: dict[str, list[float]] = {}
    out = sys.stdout
    for k in sorted(c.keys() & b.keys()):
        if c[k][3] == b[k][3]:
            continue
        d = rows[k][0]
        kind = KINDS[int(np.argmax(np.array(d["demand"]) / SCALE))]
        moves[(b[k][3], c[k][3])] += 1
        by_kind.setdefault(kind, []).append(c[k][0] / b[k][0])
        out.write(f"{d['name']} demand {[round(x, 2) for x in d['demand']]} served -> {b[k][3]} "
                  f"student -> {c[k][3]}, estimated JCT {b[k][0]:.1f} / {c[k][0]:.1f} s\n")
    out.write(f"moves (served's pick, student's pick): {dict(moves)}\n")
    for kind, ratios in sorted(by_kind.items()):
        out.write(f"{kind}: {len(ratios)} pods, student / served {np.exp(np.mean(np.log(ratios))):.3f}\n")


if __name__ == "__main__":
    main()
