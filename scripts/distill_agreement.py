#!/usr/bin/env python3
"""How often a distilled student's top node is its teacher's, on the validation split's states (issue #22).

Why it exists: ``results/policy/distill/README.md`` reports, beside the served endpoint, the agreement of the
student with the teacher on validation states: episodes of the validation families and loads (seeds from
``--offset``, ``--seeds`` of them) placed by the teacher as served (``--weight``, ``--mapping``), no exploration,
collected by ``policy.distill.collect``; per decision, whether the student's top feasible node is among the
teacher's top ones (``policy.distill.agreement``). Descriptive: nothing is chosen on it. Writes JSON::

    python scripts/distill_agreement.py --teacher /tmp/ens/ens-all7.npz --student /tmp/distill/student.npz \
        --out results/policy/distill/agreement.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from policy.distill import agreement, collect
from policy.features import N_NODE
from policy.grid import split_cases
from policy.model import ModelScorer, load_model
from policy.served import ScoreMapping, Served
from policy.splits import LOADS, SPLIT_JOBS, VALIDATION


def student_values(model, rows: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``model``'s values of each decision's rows, through its own ``forward`` (the pod and cluster columns are
    one decision's shared part)."""
    return np.concatenate([model.forward(rows[a:b, :N_NODE], rows[a, N_NODE:])
                           for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--teacher", type=Path, required=True, help="the teacher model (.npz)")
    p.add_argument("--student", type=Path, required=True, help="the student model (.npz)")
    p.add_argument("--seeds", type=int, default=5, help="validation seeds per case (default: %(default)s)")
    p.add_argument("--offset", type=int, default=0, help="first validation seed (default: %(default)s)")
    p.add_argument("--weight", type=float, default=10.0, help="the teacher's served weight (default: %(default)s)")
    p.add_argument("--mapping", default="minmax", help="the teacher's served mapping (default: %(default)s)")
    p.add_argument("--out", type=Path, required=True, help="where to write the JSON")
    args = p.parse_args()
    teacher, student = load_model(args.teacher), load_model(args.student)
    served = Served(ModelScorer(teacher, name="teacher"), args.weight, mapping=ScoreMapping.parse(args.mapping))
    out = {"teacher": str(args.teacher), "student": str(args.student), "seeds": args.seeds, "offset": args.offset,
           "served": f"{args.mapping} at weight {args.weight:g}", "families": {}}
    all_hits = []
    for family in VALIDATION:
        cases = split_cases("validation", [family], LOADS, args.seeds, args.offset)
        st = collect(teacher, [(c.sim_config(SPLIT_JOBS), c.seed) for c in cases], served=served, epsilon=0.0,
                     seed=0)
        s = student_values(student, st.rows, st.offsets)
        out["families"][family] = {"decisions": len(st), "agreement": agreement(s, st.q, st.offsets)}
        all_hits.append((len(st), out["families"][family]["agreement"]))
    n = sum(k for k, _ in all_hits)
    out["decisions"] = n
    out["agreement"] = sum(k * a for k, a in all_hits) / n
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))  # noqa: T201 -- a script's answer
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
