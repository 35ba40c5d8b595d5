"""A pod's predicted slowdown on a node of one snapshot: the rule shadow mode records live and ``policy.offline``
re-scores a logged decision with. Pure (numpy and the contention rule; no simulator, so the extender serves it).

Why one place: shadow mode's predicted gain (``/debug/shadow``, ``drsched_extender_shadow_predicted_gain``, a
shadow row's ``slowdown`` and ``predicted_gain``) and the offline estimate anchored on the same row are the same
number for the same snapshot only if both call the same function (``results/lab/shadow-rejudged-2026-12-07``
found the live one still on an older rule that counted the monitor's DaemonSet pod as a job).

Rule. On node ``i``, the pods that share it with the newcomer are its **jobs**: its ``pods`` less its DaemonSet
pods (``daemon_pods``, never below 0). A DaemonSet pod runs on every node it can and does none of the jobs'
work; counted as a job it would take an equal share of the node like one (the lab's monitor made every node
look one job busier). The node's estimated usage (``policy.features.estimated_usage``: measured + assumed,
requests when stale) and its requests are split into ``k`` equal shares, ``k`` = its jobs (at most
``MAX_SPLIT``; usage on a node with no jobs, a DaemonSet's or the host's, is one job), the pod joins them, and
the contention rule (``policy.sharing.shared_rates`` under ``params``: ``policy.calibration``'s active set
unless told otherwise) gives its rate ``x``. Slowdown = ``1 / x``: 1 is the pod's demand met in full, so node
speed counts (a pod wanting more than the node has is slow alone).

What it assumes (the limits of estimating from one snapshot): the load at the binding holds for the pod's
stay, and a node's jobs are equal shares of its usage (a snapshot has no per-pod usage).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from policy.features import estimated_usage
from policy.sharing import ContentionParams, shared_rates
from policy.state import ClusterSnapshot, PodView

MAX_SPLIT = 64
"""At most this many equal shares per node (the rule is O(k^2) in the jobs, a node may hold hundreds of pods)."""
_RATE_FLOOR = 1e-9


def without_daemons(snap: ClusterSnapshot, daemon_pods: float | np.ndarray) -> ClusterSnapshot:
    """``snap`` with each node's ``pods`` less its DaemonSet pods (a count for every node, or one per node),
    never below 0: the jobs the rule splits a node among (module doc)."""
    if np.all(np.asarray(daemon_pods) <= 0):
        return snap
    return replace(snap, pods=np.maximum(snap.pods - daemon_pods, 0.0))


def slowdown_on(jobs: ClusterSnapshot, pod: PodView, i: int, est: np.ndarray, params: ContentionParams) -> float:
    """Slowdown of ``pod`` on node ``i`` of ``jobs`` (a snapshot whose ``pods`` are the jobs:
    ``without_daemons``) beside them, ``est`` the nodes' estimated usage (module doc)."""
    # on Python floats: the same divisions as numpy's on these 4-vectors (one IEEE double each), without a numpy
    # call per step (~12 of the ~19 us a node took; shadow mode asks for two nodes at every binding)
    e = est[i].tolist()
    k = min(max(int(jobs.pods[i]), 1), MAX_SPLIT) if any(x > 0 for x in e) else 0  # usage without pods: one job
    demands = [[x / k for x in e]] * k + [pod.demand.tolist()] if k else [pod.demand.tolist()]
    requests = ([[x / k for x in jobs.requested[i].tolist()]] * k + [pod.requests.tolist()] if k
                else [pod.requests.tolist()])
    rates = shared_rates(demands, requests, jobs.capacity[i].tolist(), params)
    return 1.0 / max(rates[-1], _RATE_FLOOR)


def predicted_slowdowns(snap: ClusterSnapshot, pod: PodView, rows: Sequence[int], *, params: ContentionParams,
                        max_usage_age: float, daemon_pods: float | np.ndarray = 0) -> list[float]:
    """``pod``'s slowdown on each node at ``rows`` of ``snap`` whose DaemonSet pods are ``daemon_pods`` (module
    doc): shadow mode's two nodes, the offline estimate's bound node and the policy's pick."""
    # The rule reads only the nodes at ``rows``, and estimated usage and the jobs are elementwise over nodes, so
    # both are computed on those nodes alone: bitwise the same numbers as over the whole snapshot, without a pass
    # over every node (shadow mode asks for two nodes of the whole cluster at each binding).
    idx = np.asarray(rows, dtype=np.int64).reshape(-1)
    sub = ClusterSnapshot.trusted(
        names=tuple(snap.names[i] for i in idx.tolist()), capacity=snap.capacity[idx], requested=snap.requested[idx],
        usage=snap.usage[idx], usage_age=snap.usage_age[idx], assumed=snap.assumed[idx], pods=snap.pods[idx],
        max_pods=snap.max_pods[idx], ready=snap.ready[idx], now=snap.now)
    daemons = np.asarray(daemon_pods)
    est = estimated_usage(sub, max_usage_age)
    jobs = without_daemons(sub, daemons if daemons.ndim == 0 else daemons[idx])
    return [slowdown_on(jobs, pod, j, est, params) for j in range(idx.size)]
