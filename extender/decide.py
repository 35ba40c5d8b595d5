"""Filter reasons, node scores and the 0-10 rule, all on one ``ClusterSnapshot``. Pure: no I/O, no clock.

Scores (``to_extender_scores``, kept in ``policy.served`` so the simulator scores as served): kube-scheduler
wants integers 0..10 (``MaxExtenderPriority``). Among the *allowed* nodes (feasible by requests, pod slots
and readiness, and not refused with -inf by a heuristic) the raw value (Q-value or heuristic score) is
mapped by the policy's ``policy.served.ScoreMapping`` (the ``score_mapping`` setting: minmax, band:B or
linear:B; not allowed -> 0). Every mapping is monotone (a higher raw value never gets a lower score) and
keeps the best node at 10.

Features come only from ``policy.features.encode``. In nodeCacheCapable mode they are computed over the
pod's context, as in training, and the candidates' rows taken after (``score``'s ``context``): the cached nodes
the pod could ever go to, not those a taint or a cordon keeps it off (``extender.context``); when kube-scheduler
sends full Node objects the cache may not know them all, so the candidates alone are encoded.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from policy.features import Encoded, encode, usage_is_fresh
from policy.model import Model, ModelScorer, Scorer
from policy.served import (
    DEFAULT_MAPPING,
    HOT_THRESHOLDS,
    Heat,
    ScoreMapping,
    any_resource,
    heat,
    hot_refused,
    to_extender_scores,
)
from policy.state import RESOURCES, ClusterSnapshot, PodView

if TYPE_CHECKING:
    from extender.row_cache import RowCache

_UNITS = ("cores", "GiB", "MB/s", "MB/s")


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Hot-node limits on estimated usage / capacity (None = not checked), per resource."""

    cpu: float | None = HOT_THRESHOLDS[0]
    mem: float | None = HOT_THRESHOLDS[1]
    net: float | None = None
    disk: float | None = None
    mode: str = "prefer-cool"
    """A ``policy.served.HOT_FILTERS`` mode: prefer-cool, prefer-fit (usage + the pod's demand), strict, off."""

    def as_array(self) -> np.ndarray:
        return np.array([np.inf if v is None else v for v in (self.cpu, self.mem, self.net, self.disk)])


class ServedPolicy:
    """What the extender serves: one ``policy.model.Scorer`` -- the DQN's ``ModelScorer`` or a heuristic from
    ``policy.baselines`` -- and the version ``/readyz`` reports. Raw value per node: higher is better
    (-inf: refused)."""

    def __init__(self, scorer: Scorer, *, version: str, mapping: ScoreMapping = DEFAULT_MAPPING) -> None:
        self.scorer = scorer
        self.name = scorer.name
        self.version = version
        self.mapping = mapping
        """Raw values -> 0..10 (``policy.served.to_extender_scores``)."""
        self.from_features = isinstance(scorer, ModelScorer)
        """True when the raw values follow from the encoded features alone (the model), so the extender encodes
        once per request and ``extender.row_cache`` may keep them while no feature moved; a heuristic scores
        the snapshot itself."""

    def raw(self, snap: ClusterSnapshot, pod: PodView, enc: Encoded) -> np.ndarray:
        if self.from_features:
            return self.scorer.score_encoded(enc)
        return np.asarray(self.scorer.score(snap, pod), dtype=np.float64)


def model_policy(model: Model, mapping: ScoreMapping = DEFAULT_MAPPING) -> ServedPolicy:
    """The exported DQN: raw value = Q-value of placing the pod on the node."""
    return ServedPolicy(ModelScorer(model), version=model.version, mapping=mapping)


def heuristic_policy(scorer: Scorer, mapping: ScoreMapping = DEFAULT_MAPPING) -> ServedPolicy:
    """A named ``policy.baselines`` scorer."""
    return ServedPolicy(scorer, version=f"heuristic:{scorer.name}", mapping=mapping)


def _filter_codes(snap: ClusterSnapshot, pod: PodView, thresholds: Thresholds, max_usage_age: float):
    """(N,) 0 = passes, 1 not ready, 2 full, 3 over requests, 4 hot; and what the reasons are written from."""
    over_req = snap.requested + pod.requests > snap.capacity[:, :2] + 1e-9
    limit = thresholds.as_array()
    h = heat(snap, pod, limit, mode=thresholds.mode, max_usage_age=max_usage_age)
    # np.select([not ready, full, over requests], [1, 2, 3], 0), the first true wins: the same codes written
    # last-wins in reverse order, without np.select's Python layers (~10x the time at 500 nodes)
    code = np.zeros(snap.n_nodes, dtype=np.int64)
    code[over_req.any(axis=1)] = 3
    code[snap.pods >= snap.max_pods] = 2
    code[~snap.ready] = 1
    code[hot_refused(code == 0, any_resource(h.hot), thresholds.mode)] = 4
    return code, over_req, h, limit


def passes_filter(snap: ClusterSnapshot, pod: PodView, thresholds: Thresholds, max_usage_age: float, *,
                  feasible: np.ndarray | None = None, fresh: np.ndarray | None = None) -> np.ndarray:
    """(N,) True where ``filter_reasons`` has no reason: the same checks, without writing the reasons.

    ``feasible``: the nodes that pass every check but heat, when the caller has them -- the encoder's mask
    (``policy.features.feasible_mask``: readiness, a pod slot, requests; ``Encoded.mask``), narrowed as the caller
    narrows readiness -- so that only the hot check is made here (the same answer: ``feasible_mask``'s fit is the
    negation of the request check below, on finite requests and capacities). ``fresh``: with ``feasible``, the
    snapshot's ``usage_is_fresh`` when the caller has it (``policy.served.heat``)."""
    if snap.n_nodes == 0:
        return np.zeros(0, dtype=bool)
    if feasible is None:
        return _filter_codes(snap, pod, thresholds, max_usage_age)[0] == 0
    h = heat(snap, pod, thresholds.as_array(), mode=thresholds.mode, max_usage_age=max_usage_age, fresh=fresh)
    return feasible & ~hot_refused(feasible, any_resource(h.hot), thresholds.mode)


def filter_reasons(snap: ClusterSnapshot, pod: PodView, thresholds: Thresholds,
                   max_usage_age: float) -> dict[int, str]:
    """Row -> reason for every node the pod must not go to; rows not in the dict pass.

    Checks, first failing wins: readiness, pod slots, requests vs allocatable (cpu, memory), then the
    hot-node thresholds on estimated usage (measured + assumed; with ``prefer-fit`` plus the pod's expected
    demand), judged by ``policy.served.heat`` / ``hot_refused`` so the simulator's served mode filters
    alike. A node whose usage is stale or missing is not judged hot: there is nothing fresh to judge it on
    (Koordinator's default, fail open). Except in ``strict`` mode hotness only steers: when every node that
    passes the other checks is hot, none is filtered for it (a filter that removes them all leaves the pod
    pending while it could run; in the simulator that queueing cost more than the contention it avoided).
    """
    if snap.n_nodes == 0:
        return {}
    codes = FilterCodes.of(snap, pod, thresholds, max_usage_age)
    return codes.reasons(np.flatnonzero(codes.code))


@dataclass(frozen=True, slots=True, eq=False)
class FilterCodes:
    """The filter's checks on one snapshot for one pod: ``code`` (N,) 0 passes, 1 not ready, 2 full, 3 over
    requests, 4 hot; and what the reasons are written from. A failing row's reason is a function of its code,
    its own row of the snapshot (capacity, requested, pods, max pods, readiness, usage, assumed), the
    freshness of its sample, the pod and the thresholds: what ``extender.filter_memo`` keys a kept reason on."""

    snap: ClusterSnapshot
    pod: PodView
    code: np.ndarray
    over_req: np.ndarray
    heat: Heat
    limit: np.ndarray

    @classmethod
    def of(cls, snap: ClusterSnapshot, pod: PodView, thresholds: Thresholds, max_usage_age: float) -> FilterCodes:
        code, over_req, h, limit = _filter_codes(snap, pod, thresholds, max_usage_age)
        return cls(snap=snap, pod=pod, code=code, over_req=over_req, heat=h, limit=limit)

    def reasons(self, rows: np.ndarray) -> dict[int, str]:
        """Row -> reason of ``rows`` (failing rows, ascending), written from this snapshot."""
        if rows.size == 0:
            return {}
        snap, pod, h, limit = self.snap, self.pod, self.heat, self.limit
        # one numpy gather per column, then plain Python floats: no per-node numpy calls
        codes = self.code[rows].tolist()
        req_r, hot_r = self.over_req[rows].argmax(axis=1), h.hot[rows].argmax(axis=1)
        requested = snap.requested[rows, req_r].tolist()
        alloc = snap.capacity[rows, req_r].tolist()
        pct = (100 * h.util[rows, hot_r]).tolist()
        pod_pct = None if h.pod is None else (100 * h.pod[rows, hot_r]).tolist()
        npods, maxp = snap.pods[rows].tolist(), snap.max_pods[rows].tolist()
        req_r, hot_r = req_r.tolist(), hot_r.tolist()
        reasons: dict[int, str] = {}
        for j, i in enumerate(rows.tolist()):
            c = codes[j]
            if c == 1:
                reasons[i] = "node not ready or unschedulable"
            elif c == 2:
                reasons[i] = f"Too many pods: {int(npods[j])} of {int(maxp[j])}"
            elif c == 3:
                r = req_r[j]
                reasons[i] = (f"Insufficient {('cpu', 'memory')[r]}: requested {requested[j]:.3g} + pod "
                              f"{pod.requests[r]:.3g} > allocatable {alloc[j]:.3g} {_UNITS[r]}")
            else:
                r = hot_r[j]
                after = "" if pod_pct is None else f" + pod {pod_pct[j]:.0f}%"
                reasons[i] = (f"hot node: {RESOURCES[r]} usage {pct[j]:.0f}%{after} >= threshold "
                              f"{100 * limit[r]:.0f}%")
        return reasons


@dataclass(frozen=True, slots=True, eq=False)
class Scored:
    """One prioritize decision, kept for /debug/explain."""

    enc: Encoded
    raw: np.ndarray
    scores: np.ndarray
    stale: np.ndarray


def whole(snap: ClusterSnapshot, pod: PodView, policy: ServedPolicy, *,
          max_usage_age: float) -> tuple[Encoded, np.ndarray, np.ndarray]:
    """(Encoded, raw values, fresh) of every node of ``snap``, from scratch. ``extender.row_cache.RowCache.whole``
    gives bitwise the same, re-encoding only the nodes that changed since its last request."""
    enc = encode(snap, pod, max_usage_age=max_usage_age)
    raw = policy.raw(snap, pod, enc) if snap.n_nodes else np.zeros(0)
    return enc, raw, usage_is_fresh(snap, max_usage_age)


def score(snap: ClusterSnapshot | None, pod: PodView, policy: ServedPolicy, *, max_usage_age: float,
          context: ClusterSnapshot | None = None, rows: np.ndarray | None = None,
          cache: RowCache | None = None, group: Hashable = None) -> Scored:
    """Encode once, ask the policy, map to 0..10.

    With ``context`` (the pod's cluster: ``extender.context``) and ``rows`` (the candidates' rows in it, in
    ``snap``'s order), features and raw values are computed over that cluster and the candidates' rows taken
    after: that is how the policy was trained (every node in the snapshot), while kube-scheduler sends
    only the nodes that passed its filters, which would shift the cluster-relative columns (capacity vs
    the cluster mean, the cluster summary) if encoded alone. ``snap`` (the candidates alone) is then not
    read and may be None: the one snapshot of the request is ``context``. ``cache`` (an
    ``extender.row_cache.RowCache``) keeps the context's rows across requests, under ``group`` (the node set's
    name, ``extender.context.Context.group``): same answer, less work.
    """
    if context is not None and rows is not None:
        if cache is not None:
            full, raw_full, fresh_full = cache.whole(context, pod, policy, max_usage_age=max_usage_age, group=group)
        else:
            full, raw_full, fresh_full = whole(context, pod, policy, max_usage_age=max_usage_age)
        enc = Encoded(nodes=full.nodes[rows], pod=full.pod, cluster=full.cluster, mask=full.mask[rows],
                      mean_cap=full.mean_cap)
        raw = raw_full[rows]
        fresh = fresh_full[rows]
    else:
        enc = encode(snap, pod, max_usage_age=max_usage_age)
        raw = policy.raw(snap, pod, enc) if snap.n_nodes else np.zeros(0)
        fresh = usage_is_fresh(snap, max_usage_age)
    return Scored(enc=enc, raw=raw, scores=to_extender_scores(raw, enc.mask, policy.mapping), stale=~fresh)
