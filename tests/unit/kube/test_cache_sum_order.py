"""A node's requested sum depends only on its pods, not on the process's string hashing (set order).

Float addition is not associative, so summing a node's pods in set order gave a restarted extender
(another hash seed) last-bit different features for the same cluster. Each seed runs in its own process.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = """
import numpy as np
from kube.cache import ClusterCache, PodRecord
from kube.objects import NodeInfo
cache = ClusterCache(clock=lambda: 0.0)
cache.upsert_node(NodeInfo(name="n", capacity=(64.0, 256.0, 1250.0, 500.0), max_pods=110, ready=True))
for i, cpu in enumerate([0.1, 0.2, 0.3, 0.7, 1e-3, 33.3, 1e15, 0.05, 3.14159]):
    cache.upsert_pod(PodRecord(namespace="ns", name=f"p{i}", uid=f"uid-{i}-x", node="n",
                               requests=np.array([cpu, 0.0]), demand=np.zeros(4)))
print(repr(float(cache.view().requested[0, 0])))
"""


def test_requested_is_the_same_under_every_hash_seed():
    sums = set()
    for seed in range(6):
        env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
        sums.add(out.stdout.strip())
    assert len(sums) == 1, sums
