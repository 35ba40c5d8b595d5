"""kube-scheduler's default scoring of resources: NodeResourcesFit (LeastAllocated) + BalancedAllocation.

Source: kubernetes ``pkg/scheduler/framework/plugins/noderesources`` (least_allocated.go,
balanced_allocation.go), default profile weights 1 and 1, resources cpu and memory with weight 1 each.
Both work on *requests* only, with kube-scheduler's integer arithmetic (MaxNodeScore = 100):

    requested'_r  = requested_r + pod_request_r
    least_r       = (allocatable_r - requested'_r) * 100 // allocatable_r      (0 if over)
    LeastAllocated = sum_r least_r // 2
    f_r           = min(requested'_r / allocatable_r, 1)
    BalancedAllocation = int((1 - std(f_cpu, f_mem)) * 100)      (population std)
    score         = LeastAllocated + BalancedAllocation

Departure: kube-scheduler counts a pod with no requests as 100m cpu / 200 MiB ("non-zero" defaults) in
LeastAllocated; we apply the same floor to the incoming pod only (existing pods come as summed requests).
Quantities are scaled to millicores and MiB before the integer maths, as the plugin sees them.
"""

from __future__ import annotations

import numpy as np

from policy.state import ClusterSnapshot, PodView

NON_ZERO_CPU = 0.1          # cores
NON_ZERO_MEM = 200 / 1024   # GiB
_UNITS = np.array([1000.0, 1024.0])  # cores -> millicores, GiB -> MiB


class DefaultK8s:
    name = "default-k8s"

    def score(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        req = pod.requests.copy()
        req[0] = req[0] or NON_ZERO_CPU
        req[1] = req[1] or NON_ZERO_MEM
        alloc = np.floor(snap.capacity[:, :2] * _UNITS)
        requested = np.floor((snap.requested + req) * _UNITS)
        least = np.where(requested > alloc, 0.0, np.floor((alloc - requested) * 100 / alloc))
        least_allocated = np.floor(least.sum(axis=1) / 2)
        frac = np.minimum(requested / alloc, 1.0)
        std = np.abs(frac[:, 0] - frac[:, 1]) / 2  # population std of two values
        balanced = np.floor((1.0 - std) * 100)
        return least_allocated + balanced
