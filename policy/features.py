"""The one feature encoder: (ClusterSnapshot, PodView) -> per-node rows, pod row, cluster summary, mask.

Training (``policy.env``) and serving (the extender) both call ``encode``; nothing else builds features,
so a model never sees in production a number made differently from the ones it learned on. The layout is
versioned by ``FEATURE_VERSION``: any change to a column's meaning or order bumps it, and
``policy.model`` refuses an artifact whose version or column count differs.

Every column is a dimensionless ratio (usage over capacity, capacity over the cluster mean, ...), so one
set of weights scores a 2-core node and a 64-core node, 3 nodes or 5,000. Importing this module pulls in
numpy only.

Estimated usage (shared with the load-aware baselines through ``estimated_usage``):
    est = measured usage + assumed (expected demand of pods placed since the sample)
    A node whose sample is missing or older than ``max_usage_age`` is estimated from what kube-scheduler
    knows instead: cpu and memory from requests, net and disk from assumed pods only; its ``stale``
    column is 1 so the model (and ``/debug/explain``) can tell.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from policy.state import N_RESOURCES, RESOURCES, ClusterSnapshot, PodView

FEATURE_VERSION = 1
"""Bump on any change to the meaning or order of a column below."""

DEFAULT_MAX_USAGE_AGE = 60.0
"""Seconds after which a node's usage sample is treated as missing."""

_R = RESOURCES
NODE_FEATURES: tuple[str, ...] = (
    *(f"est_util_{r}" for r in _R),      # estimated usage / capacity, before the pod
    *(f"after_util_{r}" for r in _R),    # ... after adding the pod's expected demand
    "req_frac_cpu", "req_frac_mem",       # requested / allocatable, before the pod
    "after_req_cpu", "after_req_mem",     # ... after adding the pod's requests
    *(f"pod_share_{r}" for r in _R),     # pod demand / this node's capacity
    *(f"cap_rel_{r}" for r in _R),       # log2(capacity / cluster mean capacity)
    "pods_frac",                          # pods / max pods
    "stale",                              # 1 if usage was missing or too old
    "usage_age",                          # min(age / max_usage_age, 1)
    "after_util_max",                     # max over resources of after_util: the post-placement bottleneck
    "overload_before",                    # sum over resources of max(0, est_util - 1)
    "overload_after",                     # sum over resources of max(0, after_util - 1)
)
POD_FEATURES: tuple[str, ...] = (
    *(f"pod_demand_{r}" for r in _R),    # expected demand / mean node capacity
    "pod_req_cpu", "pod_req_mem",         # requests / mean node capacity
    "demand_known",                       # 1 if the profile came from a learned profile, annotation or the sim
)
CLUSTER_FEATURES: tuple[str, ...] = (
    *(f"mean_util_{r}" for r in _R),     # mean est_util over feasible nodes
    *(f"std_util_{r}" for r in _R),      # std of est_util over feasible nodes
    "feasible_frac",                      # feasible nodes / nodes
    "log_nodes",                          # log10(n_nodes + 1) / 4
)
N_NODE, N_POD, N_CLUSTER = len(NODE_FEATURES), len(POD_FEATURES), len(CLUSTER_FEATURES)

OBS_BOUND = 8.0
"""Every column of every row lies in [-OBS_BOUND, OBS_BOUND] (the env's observation space is this box)."""
_UTIL_CLIP = 4.0
_CAP_REL_CLIP = 6.0
_EPS = 1e-9


def columns(names: tuple[str, ...], prefix: str) -> slice:
    """The per-resource columns ``<prefix><resource>`` of ``names``, in ``RESOURCES`` order, as one slice
    (``columns(NODE_FEATURES, "est_util_")`` is cpu, mem, net, disk; ``"req_frac_"`` is cpu, mem)."""
    idx = [names.index(prefix + r) for r in _R if prefix + r in names]
    if not idx or idx != list(range(idx[0], idx[0] + len(idx))) or idx[0] != names.index(prefix + _R[0]):
        raise ValueError(f"no contiguous per-resource columns {prefix!r}<resource> starting at cpu")
    return slice(idx[0], idx[-1] + 1)


def column(names: tuple[str, ...], name: str) -> int:
    """The index of column ``name`` (``ValueError`` if there is none)."""
    return names.index(name)


_N = NODE_FEATURES
EST_UTIL, AFTER_UTIL = columns(_N, "est_util_"), columns(_N, "after_util_")
REQ_FRAC, AFTER_REQ = columns(_N, "req_frac_"), columns(_N, "after_req_")
POD_SHARE, CAP_REL = columns(_N, "pod_share_"), columns(_N, "cap_rel_")
PODS_FRAC, STALE, USAGE_AGE = column(_N, "pods_frac"), column(_N, "stale"), column(_N, "usage_age")
AFTER_UTIL_MAX = column(_N, "after_util_max")
OVERLOAD_BEFORE, OVERLOAD_AFTER = column(_N, "overload_before"), column(_N, "overload_after")
_MEASURED = slice(0, AFTER_UTIL_MAX)  # NODE_FEATURES ends with the columns derived from these (tested)
POD_DEMAND, POD_REQ = columns(POD_FEATURES, "pod_demand_"), columns(POD_FEATURES, "pod_req_")
DEMAND_KNOWN = column(POD_FEATURES, "demand_known")
MEAN_UTIL, STD_UTIL = columns(CLUSTER_FEATURES, "mean_util_"), columns(CLUSTER_FEATURES, "std_util_")
FEASIBLE_FRAC, LOG_NODES = column(CLUSTER_FEATURES, "feasible_frac"), column(CLUSTER_FEATURES, "log_nodes")


def _node_bounds() -> tuple[np.ndarray, np.ndarray]:
    """(N_NODE, 1) lower and upper clip bounds of each node column, by name."""
    lo, hi = np.zeros((N_NODE, 1)), np.ones((N_NODE, 1))
    for i, name in enumerate(NODE_FEATURES):
        if name.startswith(("est_util_", "after_util_", "req_frac_", "after_req_", "pod_share_")):  # + after_util_max
            hi[i] = _UTIL_CLIP
        elif name.startswith("cap_rel_"):
            lo[i], hi[i] = -_CAP_REL_CLIP, _CAP_REL_CLIP
        elif name.startswith("overload_"):  # a sum over resources of up to _UTIL_CLIP - 1 each
            hi[i] = OBS_BOUND
    return lo, hi


_NODE_LO, _NODE_HI = _node_bounds()


@dataclass(frozen=True, slots=True, eq=False)
class Encoded:
    """Features of one decision. ``nodes`` rows follow the snapshot's node order."""

    nodes: np.ndarray    # (N, N_NODE) float32
    pod: np.ndarray      # (N_POD,) float32
    cluster: np.ndarray  # (N_CLUSTER,) float32
    mask: np.ndarray     # (N,) bool: the pod's requests fit and the node accepts pods
    mean_cap: np.ndarray | None = None
    """(4,) the mean capacity of the cluster the rows were encoded in (``mean_capacity``), kept for the decision
    log's inputs (``policy.decisionlog.DecisionInputs``); None where the builder did not keep it"""


def feasible_mask(snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
    """Nodes where the pod fits by requests (kube-scheduler's NodeResourcesFit), has a pod slot and is ready."""
    if snap.n_nodes == 0:
        return np.zeros(0, dtype=bool)
    req, cap = snap.requested.T, snap.capacity.T
    fits = (req[0] + pod.requests[0] <= cap[0] + 1e-9) & (req[1] + pod.requests[1] <= cap[1] + 1e-9)
    return fits & (snap.pods < snap.max_pods) & snap.ready


def usage_is_fresh(snap: ClusterSnapshot, max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> np.ndarray:
    """(N,) True where a usage sample exists and is no older than ``max_usage_age`` seconds."""
    u = snap.usage.T
    return np.isfinite(u[0] + u[1] + u[2] + u[3]) & (snap.usage_age <= max_usage_age)


def _estimated_usage_t(snap: ClusterSnapshot, fresh: np.ndarray) -> np.ndarray:
    """(4, N) estimated usage, resource-major (contiguous rows are cheaper to work on than narrow columns)."""
    assumed, usage = snap.assumed.T, snap.usage.T
    # what nan_to_num(nan=posinf=neginf=0) gives, and a masked copy rather than fancy indexing: the same values
    # in half the time (~15 us at 500 nodes; the filter and prioritize each run this once per scheduled pod)
    out = np.where(np.isfinite(usage), usage, 0.0)
    out += assumed
    if not fresh.all():
        fallback = assumed.copy()
        np.maximum(snap.requested.T, assumed[:2], out=fallback[:2])
        np.copyto(out, fallback, where=~fresh)
    return out


def estimated_usage(snap: ClusterSnapshot, max_usage_age: float = DEFAULT_MAX_USAGE_AGE, *,
                    fresh: np.ndarray | None = None) -> np.ndarray:
    """(N, 4) best estimate of each node's usage now, in absolute units (see the module docstring); ``fresh``:
    ``usage_is_fresh(snap, max_usage_age)`` when the caller has it."""
    return _estimated_usage_t(snap, usage_is_fresh(snap, max_usage_age) if fresh is None else fresh).T


def encode(snap: ClusterSnapshot, pod: PodView, *, max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> Encoded:
    """Encode one scheduling decision. Pure, deterministic, O(N) numpy.

    ``assemble(node_rows(...), feasible_mask(...), ...)`` over the whole snapshot: the per-node rows, then
    the pod row and the cluster summary from them.
    """
    mask = feasible_mask(snap, pod)
    if snap.n_nodes == 0:
        return Encoded(nodes=np.zeros((0, N_NODE), np.float32), pod=pod_row(pod, np.ones(N_RESOURCES)),
                       cluster=np.zeros(N_CLUSTER, np.float32), mask=mask)
    mean_cap = mean_capacity(snap)
    return assemble(node_rows(snap, pod, mean_cap=mean_cap, max_usage_age=max_usage_age), mask, pod, mean_cap)


def mean_capacity(snap: ClusterSnapshot) -> np.ndarray:
    """(4,) the cluster's mean node capacity: the one cluster-wide number a node's row depends on (its
    ``cap_rel_*`` columns), and the pod row's scale."""
    return np.ascontiguousarray(snap.capacity.T).mean(axis=1)


def node_rows(snap: ClusterSnapshot, pod: PodView, *, mean_cap: np.ndarray,
              max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> np.ndarray:
    """(N, N_NODE) float32 rows of ``snap``'s nodes in a cluster whose mean capacity is ``mean_cap``.

    Every column is elementwise over nodes (a node's row depends on its own state, the pod, ``mean_cap``
    and, through ``usage_age``, the snapshot's clock), so the rows of a subset of the nodes are bitwise the
    rows those nodes get in the whole snapshot (``extender.row_cache`` re-encodes only changed nodes so).
    The work is done resource-major, one contiguous row per feature column, and transposed once at the
    end: numpy is several times faster on long rows than on (N, 4) reductions along the narrow axis.
    """
    n = snap.n_nodes
    cap = np.ascontiguousarray(snap.capacity.T)  # (4, N)
    inv_cap = 1.0 / cap
    fresh = usage_is_fresh(snap, max_usage_age)
    cols = np.empty((N_NODE, n))
    est, after, share = cols[EST_UTIL], cols[AFTER_UTIL], cols[POD_SHARE]
    np.multiply(_estimated_usage_t(snap, fresh), inv_cap, out=est)
    np.multiply(pod.demand[:, None], inv_cap, out=share)
    np.add(est, share, out=after)
    requested = snap.requested.T
    np.multiply(requested, inv_cap[:2], out=cols[REQ_FRAC])
    np.multiply(requested + pod.requests[:, None], inv_cap[:2], out=cols[AFTER_REQ])
    np.log2(cap / mean_cap[:, None], out=cols[CAP_REL])
    np.divide(snap.pods, np.maximum(snap.max_pods, 1.0), out=cols[PODS_FRAC])
    np.logical_not(fresh, out=cols[STALE], casting="unsafe")
    cols[USAGE_AGE] = usage_age_column(snap.usage_age, max_usage_age)
    np.clip(cols[_MEASURED], _NODE_LO[_MEASURED], _NODE_HI[_MEASURED], out=cols[_MEASURED])
    np.max(after, axis=0, out=cols[AFTER_UTIL_MAX])  # derived from the clipped ratios
    _sum4(np.maximum(est - 1.0, 0.0), out=cols[OVERLOAD_BEFORE])
    _sum4(np.maximum(after - 1.0, 0.0), out=cols[OVERLOAD_AFTER])
    derived = slice(AFTER_UTIL_MAX, N_NODE)
    np.clip(cols[derived], _NODE_LO[derived], _NODE_HI[derived], out=cols[derived])
    return cols.T.astype(np.float32, order="C")


def _sum4(x: np.ndarray, *, out: np.ndarray) -> None:
    """Column sums of a (4, N) array, added in resource order whatever N is: ``x.sum(axis=0)`` does so for
    N >= 2, but reduces a (4, 1) array pairwise, which can differ in the last bit."""
    np.add(x[0], x[1], out=out)
    out += x[2]
    out += x[3]


def usage_age_column(usage_age: np.ndarray, max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> np.ndarray:
    """(N,) float64 ``usage_age`` column: sample age / ``max_usage_age`` in [0, 1], 1 without a sample.
    The one column that follows the request's clock."""
    age = np.where(np.isfinite(usage_age), usage_age, max_usage_age)
    out = np.multiply(age, 1.0 / max(max_usage_age, _EPS))
    return np.clip(out, _NODE_LO[USAGE_AGE, 0], _NODE_HI[USAGE_AGE, 0], out=out)


def assemble(nodes: np.ndarray, mask: np.ndarray, pod: PodView, mean_cap: np.ndarray) -> Encoded:
    """The ``Encoded`` of a whole cluster from its node rows (``node_rows``), its feasibility (``feasible_mask``)
    and its mean capacity: the pod row (``pod_row``) and the cluster summary (``cluster_row``) from them."""
    return Encoded(nodes=nodes, pod=pod_row(pod, mean_cap), cluster=cluster_row(nodes, mask), mask=mask,
                   mean_cap=mean_cap)


def cluster_row(nodes: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(N_CLUSTER,) float32 summary of a whole cluster's node rows: mean and std of ``est_util`` over the
    feasible nodes, the feasible fraction, the size. It follows the rows and the mask only, not the clock."""
    cluster = np.zeros(N_CLUSTER, dtype=np.float32)
    if mask.any():
        # The numbers ``est[:, mask].mean(axis=1)`` / ``.std(axis=1)`` gave (numpy lays that array out node-major,
        # so each resource was summed in node order, in float32, and divided in float64), computed along
        # contiguous rows: np.mean / np.std on that layout add four values per step (~3x the time at 5,000
        # nodes). Bitwise equal on 20,000 random arrays of 1 to 10,000 nodes (tests/unit/extender/test_row_cache.py).
        x = np.ascontiguousarray(nodes[:, EST_UTIL][mask].T)  # (4, feasible)
        k = x.shape[1]
        mean = (np.add.accumulate(x, axis=1)[:, -1].astype(np.float64) / k).astype(np.float32)
        dev = np.subtract(x, mean[:, None])
        np.square(dev, out=dev)
        cluster[MEAN_UTIL] = mean
        cluster[STD_UTIL] = np.sqrt((np.add.accumulate(dev, axis=1)[:, -1].astype(np.float64) / k).astype(np.float32))
    return cluster_summary(cluster, n_feasible=int(np.count_nonzero(mask)), n_nodes=nodes.shape[0])


def cluster_summary(cluster: np.ndarray, *, n_feasible: int, n_nodes: int) -> np.ndarray:
    """``cluster`` (float32, ``MEAN_UTIL`` and ``STD_UTIL`` filled) completed with the counts' columns: the
    cluster row from its figures. ``cluster_row`` computes the figures from the rows; the decision log stores
    them (``policy.decisionlog``), as a logged decision keeps only some of the cluster's nodes."""
    cluster[FEASIBLE_FRAC] = n_feasible / n_nodes  # = mask.mean(), without its Python layers
    cluster[LOG_NODES] = np.log10(n_nodes + 1) / 4.0
    return cluster


def pod_row(pod: PodView, mean_cap: np.ndarray) -> np.ndarray:
    """(N_POD,) float32 pod row: demand and requests over the cluster's mean capacity, whether demand is known."""
    row = np.empty(N_POD, dtype=np.float32)
    row[POD_DEMAND] = np.clip(pod.demand / mean_cap, 0.0, _UTIL_CLIP)
    row[POD_REQ] = np.clip(pod.requests / mean_cap[:2], 0.0, _UTIL_CLIP)
    row[DEMAND_KNOWN] = pod.demand_source != "requests"
    return row


def stack(enc: Encoded) -> np.ndarray:
    """(N, N_NODE + N_POD + N_CLUSTER) rows the per-node Q-network reads: [node, pod, cluster summary]."""
    n = enc.nodes.shape[0]
    return np.concatenate(
        [enc.nodes, np.broadcast_to(enc.pod, (n, N_POD)), np.broadcast_to(enc.cluster, (n, N_CLUSTER))], axis=1
    )
