"""The speed model: how fast a job would progress on a target node, from that node's estimated free capacity.

Why it exists: the rule compares the job's observed time left with a *predicted* one elsewhere; the
prediction reads only what the scheduler reads (``ClusterSnapshot`` + the pod's expected demand profile),
so it is the same picture the extender scores on. Pure, table-tested; owns no state.

Model (mirrors the simulator's max-min contention, ``policy.sim.contention``, from the outside):

    est_r    = policy.features.estimated_usage(snapshot)[target, r]   (measured + assumed; requests if stale)
    avail_r  = max(capacity_r − est_r,  capacity_r / (pods + 1))      for the rate resources cpu, net, disk
    speed    = min(1, min over r with demand_r > 0 of avail_r / demand_r)
    speed   *= min(1, capacity_mem / (est_mem + demand_mem))           (memory over-commit thrashes)

The floor ``capacity_r / (pods + 1)`` is the share an equal split among the pods after the move would give:
max-min fairness never starves a newcomer to zero on a saturated node. The model cannot see a node that is
slow for reasons the monitor does not measure (a straggler looks *idle*); the rule guards against that by
blocklisting nodes whose jobs were observed slow (``policy.migrate.rule``).
"""

from __future__ import annotations

import numpy as np

from policy.state import CPU, DISK, MEM, NET

_RATE_RESOURCES = (CPU, NET, DISK)
_EPS = 1e-9


def predicted_speed(demand: np.ndarray, capacity: np.ndarray, est_usage: np.ndarray, pods: float) -> float:
    """Fraction of full speed (0..1] a job of ``demand`` (4,) gets on a node of ``capacity`` (4,) whose
    estimated usage is ``est_usage`` (4,) and which runs ``pods`` pods before the move."""
    speed = 1.0
    for r in _RATE_RESOURCES:
        if demand[r] > _EPS:
            avail = max(capacity[r] - est_usage[r], capacity[r] / (pods + 1.0))
            speed = min(speed, avail / demand[r])
    mem = est_usage[MEM] + demand[MEM]
    if mem > capacity[MEM]:
        speed *= capacity[MEM] / mem
    return float(speed)
