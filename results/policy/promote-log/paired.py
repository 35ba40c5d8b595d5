"""What ``policy.promote --log`` would say if it compared the two models as served, among the lab's job nodes.

``policy.promote`` calls ``policy.offline.model_paired(pairs, candidate, served)`` with neither a hot filter,
nor the nodes a pod could go to, nor the lab's DaemonSet pod per node (it has no flags for them); this runs the
same function on the same logs both ways, so the two sets of figures differ only by those three settings.

    PYTHONPATH=. python results/policy/promote-log/paired.py /tmp/pl/model-serve /tmp/pl/default-shadow \\
        results/lab/multi-resource-2026-12-07/decisions > results/policy/promote-log/paired.json
"""

import json
import sys
from dataclasses import asdict

from policy.decisionlog import read_log
from policy.model import ModelScorer, load_model
from policy.offline import model_paired

CANDIDATE, SERVED = "results/policy/distill/models/student.npz", "policy/models/default.npz"
JOB_NODES = frozenset({"rn-small", "rn-medium", "rn-medium-mem", "rn-large"})  # the lab's nodes.csv
LAB_DAEMON_PODS = 1  # the node monitor's DaemonSet pod on every lab node (lab.shadow.LAB_DAEMON_PODS)
SETTINGS = {"as promote": {},
            "as served, job nodes, daemons out": {"hot_filter": "prefer-cool", "nodes": JOB_NODES,
                                                  "daemon_pods": LAB_DAEMON_PODS}}


def main(logs: list[str]) -> dict:
    c = ModelScorer(load_model(CANDIDATE), name="candidate")
    s = ModelScorer(load_model(SERVED), name="served")
    out = {}
    for path in logs:
        pairs = read_log(path).joined()
        out[path] = {name: asdict(model_paired(pairs, c, s, **how)) for name, how in SETTINGS.items()}
    return out


if __name__ == "__main__":
    json.dump(main(sys.argv[1:]), sys.stdout, indent=2)
    sys.stdout.write("\n")
