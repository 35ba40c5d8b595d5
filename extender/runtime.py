"""Everything a request needs, built once in the lifespan: cache, policy, profiles, binder, telemetry.

Every field is set when the ``Runtime`` is built (``extender.service`` builds the serving one, tests and
benchmarks their own with the defaults): nothing is filled in later, nothing is probed for.

``Runtime`` also holds the verb logic that is not HTTP: turning ``ExtenderArgs`` into a snapshot of the
candidate nodes (from the cache when names came, from the request's nodes when full nodes came), running
filter / prioritize on it, and the short memory of recent decisions that ``/debug/explain`` and the bind
metrics read. Scoring is stateless (the decision log is only for explanation), so replicas agree.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from extender.context import Context, context_of
from extender.decide import (
    Scored,
    ServedPolicy,
    Thresholds,
    filter_reasons,
    heuristic_policy,
    model_policy,
    score,
    to_extender_scores,
)
from extender.errors import BadRequest
from extender.filter_memo import FilterMemo
from extender.node_infos import NodeInfoMemo
from extender.profile_store import InMemoryProfileStore, ProfileStore
from extender.raw_nodes import RawItems, filter_reply
from extender.recording import Recording
from extender.row_cache import RowCache
from extender.settings import Settings
from extender.telemetry import Telemetry
from extender.wire import ExtenderArgs, HostPriorities, RawJSON
from kube.affinity import node_requirement
from kube.cache import CacheView, ClusterCache, PodRecord
from kube.errors import QuantityError
from kube.logs import kv
from kube.objects import as_pod, pod_key, pod_requests
from kube.profiles import pod_view_for
from policy.baselines import make_scorer
from policy.decisionlog import DecisionInputs
from policy.model import ModelError, load_model
from policy.state import ClusterSnapshot, PodView

log = logging.getLogger(__name__)
UNKNOWN_NODE = "unknown node"


class Binder(Protocol):
    def bind(self, *, namespace: str, name: str, uid: str, node: str) -> None: ...


class RecordingBinder:
    """Static mode: nothing to POST; the bind is recorded and applied to the cache by the caller."""

    def bind(self, *, namespace: str, name: str, uid: str, node: str) -> None:
        return None


Readiness = Callable[[], tuple[bool, str]]
"""/readyz: (ready, reason); e.g. whether the watch has synced with the apiserver."""
UsageStatus = Callable[[], Mapping[str, Mapping[str, Any]]]
"""The usage provider's health per node: {node: {age_s, error, detail, ...}} (``UsagePoller.status``)."""
WatchStatus = Callable[[], Mapping[str, Mapping[str, Any]]]
"""Each apiserver watch's state: {kind: {up, for_s, failures, error}} (``WatchHealth.snapshot``)."""
PodWorkload = Callable[[str], str | None]
"""Pod UID -> workload key (the watch's pod index, or the settings' static ``pod_workloads``)."""
PodLabels = Callable[[str, str], Mapping[str, str] | None]
"""(namespace, name) -> the pod's labels; None where not known (the cache keeps none: only a static cluster's)."""


def _always_ready() -> tuple[bool, str]:
    return True, ""


def _empty_status() -> Mapping[str, Mapping[str, Any]]:
    return {}


def _no_pod_workload(uid: str) -> str | None:
    return None


def _no_pod_labels(namespace: str, name: str) -> Mapping[str, str] | None:
    return None


def thresholds_of(settings: Settings) -> Thresholds:
    """The filter's hot-node thresholds from the settings."""
    s = settings
    return Thresholds(cpu=s.hot_cpu, mem=s.hot_mem, net=s.hot_net, disk=s.hot_disk, mode=s.hot_filter)


def load_policy(settings: Settings, telemetry: Telemetry) -> tuple[ServedPolicy, str | None]:
    """The policy to serve and, when the model could not be used, why (the degraded reason)."""
    if settings.policy != "model":
        return heuristic_policy(make_scorer(settings.policy), settings.mapping), None
    try:
        return model_policy(load_model(settings.model_path), settings.mapping), None
    except ModelError as exc:
        reason = f"model unusable, serving heuristic {settings.fallback_heuristic}: {exc}"
        label = "model_missing" if "not found" in exc.problem else "model_corrupt"
        telemetry.report(label, reason, path=exc.path, heuristic=settings.fallback_heuristic)
        return heuristic_policy(make_scorer(settings.fallback_heuristic), settings.mapping), reason


@dataclass(eq=False)
class Candidates:
    """The nodes of one request: ``names`` in request order, ``known`` rows and their snapshot."""

    names: list[str]
    known: np.ndarray            # (len(names),) bool
    snap: ClusterSnapshot | None  # the known nodes only, in request order (None: prioritize in names mode)
    items: list[dict] | None     # the request's full nodes (Nodes mode), aligned with names
    cache_rows: np.ndarray | None = None  # Nodes mode: each snapshot row's row in the cache view, -1 if uncached


def _daemon_pods(view: CacheView, context: Context | None, cache_rows: np.ndarray | None) -> np.ndarray | None:
    """Each encoded snapshot row's DaemonSet pods, as the cache counts them, for the decision log (off the scoring
    itself): names mode encodes the pod's context of the view, so the view's counts at its rows; Nodes mode takes
    its pods from the cache too, so the same count at each item's cache row (0 where uncached, as its pods are)."""
    if context is not None:
        return context.of_view(view.daemon_pods)
    if view.daemon_pods is None or cache_rows is None:
        return None
    daemon = np.zeros(len(cache_rows), dtype=np.int64)
    hit = cache_rows >= 0
    daemon[hit] = view.daemon_pods[cache_rows[hit]]
    return daemon


@dataclass(eq=False)
class Runtime:
    settings: Settings
    cache: ClusterCache
    telemetry: Telemetry
    policy: ServedPolicy
    degraded: str | None = None
    profiles: ProfileStore = field(default_factory=InMemoryProfileStore)
    binder: Binder = field(default_factory=RecordingBinder)
    ready: Readiness = _always_ready
    usage_status: UsageStatus = _empty_status
    watch_status: WatchStatus = _empty_status  # no watches (a static cluster)
    pod_workload: PodWorkload = _no_pod_workload
    pod_labels: PodLabels = _no_pod_labels  # a static cluster's pods' labels, for /debug/explain's canary
    recording: Recording | None = None  # decision log, shadow, exploration, canary (extender.recording)
    rows: RowCache = field(default_factory=RowCache)  # names mode: the cluster's encoded rows across requests
    filters: FilterMemo = field(default_factory=FilterMemo)  # filter reasons across requests, rewritten where moved
    replies: HostPriorities = field(default_factory=HostPriorities)  # prioritize replies, prefixes memoised
    decisions: OrderedDict = field(default_factory=OrderedDict)  # recent decisions, for /debug/explain and bind
    node_infos: NodeInfoMemo = field(init=False)  # Nodes mode: node_info by the item's exact JSON

    def __post_init__(self) -> None:
        s = self.settings
        self.node_infos = NodeInfoMemo(net_annotation=s.net_annotation, disk_annotation=s.disk_annotation,
                                       default_net_mbps=s.default_net_mbps, default_disk_mbps=s.default_disk_mbps)

    @property
    def thresholds(self) -> Thresholds:
        return thresholds_of(self.settings)

    # -- the pod --------------------------------------------------------------------------------------
    def pod_view(self, pod: dict[str, Any] | None) -> tuple[PodView, tuple[str, str, str]]:
        if pod is None:
            raise BadRequest("request has no Pod")
        key = pod_key(pod)
        try:
            requests = pod_requests(pod)
        except QuantityError as exc:
            raise BadRequest(f"pod {key[0]}/{key[1]}: {exc}") from None
        view, problem = pod_view_for(pod, requests=requests, annotation_key=self.settings.profile_annotation,
                                     store=self.profiles)
        if problem is not None:
            self.telemetry.report("bad_profile_annotation",
                                  f"ignored {self.settings.profile_annotation}: {problem}", pod=key)
        return view, key

    # -- the nodes ------------------------------------------------------------------------------------
    def candidates(self, args: ExtenderArgs, now: float, view: CacheView | None = None) -> Candidates:
        """The request's nodes as a snapshot of ``view`` (one consistent copy of the cache; taken if not given)."""
        view = view if view is not None else self.cache.view()
        if args.NodeNames is not None:
            names = list(args.NodeNames)
            idx = view.lookup(names)
            known = idx >= 0
            if known.all():
                snap = view.snapshot(now, idx, tuple(names))
            else:
                snap = view.snapshot(now, idx[known], tuple(n for n, k in zip(names, known, strict=True) if k))
            return Candidates(names=names, known=known, snap=snap, items=None)
        if args.Nodes is not None:
            return self._from_items(args.Nodes.items, view, now)
        raise BadRequest("request has neither NodeNames nor Nodes")

    def _from_items(self, items: list[dict] | RawItems, view, now: float) -> Candidates:
        """Nodes mode: capacity from the request's nodes; allocations and usage from the cache where known."""
        memo = self.node_infos
        read = memo.read_raw if isinstance(items, RawItems) else memo.read
        infos = []
        for i, item in enumerate(items):
            try:
                infos.append(read(item))
            except QuantityError as exc:
                raise BadRequest(f"Nodes.items[{i}]: {exc}") from None
        names = [n.name for n in infos]
        if any(not n for n in names):
            raise BadRequest("Nodes.items: every node needs metadata.name")
        n = len(infos)
        idx = view.lookup(names)
        hit = idx >= 0
        rows = idx[hit]
        requested, pods = np.zeros((n, 2)), np.zeros(n)
        usage, usage_ts, assumed = np.full((n, 4), np.nan), np.full(n, -np.inf), np.zeros((n, 4))
        requested[hit], pods[hit] = view.requested[rows], view.pods[rows]
        usage[hit], usage_ts[hit], assumed[hit] = view.usage[rows], view.usage_ts[rows], view.assumed[rows]
        snap = ClusterSnapshot(
            names=tuple(names), capacity=np.array([i.capacity for i in infos]).reshape(n, 4), requested=requested,
            usage=usage, usage_age=np.maximum(now - usage_ts, 0.0), assumed=assumed, pods=pods,
            max_pods=np.array([i.max_pods for i in infos]), ready=np.array([i.ready for i in infos], dtype=bool),
            now=now)
        return Candidates(names=names, known=np.ones(n, dtype=bool), snap=snap, items=items, cache_rows=idx)

    # -- verbs ----------------------------------------------------------------------------------------
    def filter(self, args: ExtenderArgs) -> dict[str, Any] | RawJSON:
        now = time.time()
        if self.recording is not None and not self.recording.decides_for(args.Pod):
            return self._neutral_filter(args)
        pod, key = self.pod_view(args.Pod)
        view = self.cache.view()
        every = self._every_node(args, view)
        passed: list[str] | None = None
        if every is not None:  # the usual names-mode request: every cached node once, all known
            failed, passed = self._failed_of_every_node(every, view, pod, now)
            cand = Candidates(names=every[0], known=np.ones(len(every[0]), dtype=bool), snap=None, items=None)
            unresolvable: dict[str, str] = {}
        else:
            cand = self.candidates(args, now, view)
            reasons = self.filters.reasons(cand.snap, pod, self.thresholds, self.settings.max_usage_age_s)
            known_names = cand.snap.names
            failed = {known_names[i]: r for i, r in reasons.items()}
            unresolvable = {n: UNKNOWN_NODE for n, k in zip(cand.names, cand.known.tolist(), strict=True) if not k}
        self.telemetry.metrics.decisions.labels(verb="filter", policy="filter").inc()
        if self.recording is not None:  # failed (known nodes) and unresolvable (unknown ones) are disjoint
            self.recording.filtered(key=key, passed=len(cand.names) - len(failed) - len(unresolvable),
                                    total=len(cand.names), now=now)
        if cand.items is None:
            if passed is None:
                passed = [n for n in cand.names if n not in failed and n not in unresolvable] \
                    if (failed or unresolvable) else cand.names
            return {"Nodes": None, "NodeNames": passed, "FailedNodes": failed,
                    "FailedAndUnresolvableNodes": unresolvable, "Error": ""}
        items = [it for it, n in zip(cand.items, cand.names, strict=True) if n not in failed]
        if isinstance(cand.items, RawItems):  # the request's bytes of each node: spliced back unchanged
            return RawJSON(filter_reply(items, failed, unresolvable))
        return {"Nodes": {"metadata": {}, "items": items}, "NodeNames": None, "FailedNodes": failed,
                "FailedAndUnresolvableNodes": unresolvable, "Error": ""}

    @staticmethod
    def _every_node(args: ExtenderArgs, view: CacheView) -> tuple[list[str], np.ndarray] | None:
        """(names, their rows) when ``args`` names every node of ``view`` exactly once (percentageOfNodesToScore
        100, what every shipped config sets, on a cluster whose nodes all fit by kube-scheduler's own
        plugins), else None."""
        if args.NodeNames is None or len(args.NodeNames) != len(view.names):
            return None
        names = list(args.NodeNames)
        idx = view.lookup(names)
        if not len(idx) or idx.min() < 0 or np.count_nonzero(np.bincount(idx, minlength=len(idx))) != len(idx):
            return None
        return names, idx

    def _failed_of_every_node(self, every: tuple[list[str], np.ndarray], view: CacheView, pod: PodView,
                              now: float) -> tuple[dict[str, str], list[str]]:
        """(FailedNodes, the names that passed) of a request naming every cached node once (``_every_node``), both
        in request order.

        The reasons are those of the whole cache view's snapshot, row by row: each check but one reads its node
        alone, and the one that does not (``policy.served.hot_refused``: no node is refused for heat when every
        fitting node is hot) reads the set of candidates, which is here the set of the view's nodes. So they are
        what the candidates' own snapshot gives, without gathering it (a copy of every row, ~3x the time)."""
        names, idx = every
        reasons = self.filters.reasons(view.snapshot(now), pod, self.thresholds, self.settings.max_usage_age_s)
        if not reasons:
            return {}, names
        return self.filters.in_order(reasons, names, idx)

    def prioritize(self, args: ExtenderArgs) -> RawJSON:
        now = time.time()
        if self.recording is not None and not self.recording.decides_for(args.Pod):
            return self._neutral_prioritize(args, now)
        pod, key = self.pod_view(args.Pod)
        view = self.cache.view()  # one view for the candidates and the context: rows must agree
        context = None
        if args.NodeNames is not None:
            # names mode: encode the pod's context -- the cached nodes it could ever go to, as in training
            # (extender.context) -- on its one snapshot, and take the candidates' rows; no separate snapshot of
            # the candidates is built.
            names = list(args.NodeNames)
            idx = view.lookup(names)
            known = idx >= 0
            every = bool(known.all())
            context = context_of(view, args.Pod, idx if every else idx[known], now)
            scored = score(None, pod, self.policy, max_usage_age=self.settings.max_usage_age_s,
                           context=context.snap, rows=context.rows,
                           cache=self.rows if context.group is not None else None, group=context.group)
            cand = Candidates(names=names, known=known, snap=None, items=None)
            known_names = names if every else [n for n, k in zip(names, known.tolist(), strict=True) if k]
            encoded_over = context.snap
            if every:
                rows = context.rows
            else:
                rows = np.full(len(names), -1, dtype=np.int64)
                rows[known] = context.rows
        else:
            cand = self.candidates(args, now, view)
            scored = score(cand.snap, pod, self.policy, max_usage_age=self.settings.max_usage_age_s)
            known_names = cand.snap.names
            encoded_over, rows = cand.snap, None
        metrics = self.telemetry.metrics
        metrics.decisions.labels(verb="prioritize", policy=self.policy.name).inc()
        n_stale = int(scored.stale.sum())
        if n_stale:
            metrics.stale_scored.inc(n_stale)
        if cand.known.all():
            scores = scored.scores
        else:
            scores = np.zeros(len(cand.names), dtype=np.int64)
            scores[cand.known] = scored.scores
        if self.recording is not None:  # exploration may redraw the top node; the decision is queued for the log
            scores = self.recording.serve(
                key=key, pod=pod, names=cand.names, scores=scores, known=cand.known, raw=scored.raw, now=now,
                inputs=DecisionInputs(snap=encoded_over, cluster=scored.enc.cluster,
                                      max_usage_age=self.settings.max_usage_age_s, rows=rows,
                                      daemon_pods=_daemon_pods(view, context, cand.cache_rows),
                                      mean_cap=scored.enc.mean_cap))
        out = self.replies.reply(view, cand.names, scores.tolist(),
                                 rows=idx if args.NodeNames is not None else cand.cache_rows)
        self._remember(key, pod, known_names, now, scored)
        return out

    # -- the canary: pods drsched does not decide for (extender/README.md "Canary") ---------------------------
    def _neutral_filter(self, args: ExtenderArgs) -> dict[str, Any] | RawJSON:
        """Every node passes: drsched's filter does not apply to a pod outside the canary."""
        self.telemetry.metrics.canary_neutral.labels(verb="filter").inc()
        if args.NodeNames is not None:
            return {"Nodes": None, "NodeNames": list(args.NodeNames), "FailedNodes": {},
                    "FailedAndUnresolvableNodes": {}, "Error": ""}
        if args.Nodes is None:
            raise BadRequest("request has neither NodeNames nor Nodes")
        if isinstance(args.Nodes.items, RawItems):
            return RawJSON(filter_reply(list(args.Nodes.items), {}, {}))
        return {"Nodes": {"metadata": {}, "items": list(args.Nodes.items)}, "NodeNames": None, "FailedNodes": {},
                "FailedAndUnresolvableNodes": {}, "Error": ""}

    def _neutral_prioritize(self, args: ExtenderArgs, now: float) -> RawJSON:
        """Score 0 on every node: a constant adds nothing to any node's total, so kube-scheduler decides."""
        self.telemetry.metrics.canary_neutral.labels(verb="prioritize").inc()
        view = self.cache.view()
        names = list(args.NodeNames) if args.NodeNames is not None else self.candidates(args, now, view).names
        return self.replies.reply(view, names, [0] * len(names))

    def explain(self, args: ExtenderArgs | None = None, *, pod: PodView | None = None,
                key: tuple[str, str, str] | None = None) -> dict[str, Any]:
        """Per-node features, raw values, filter reasons and 0-10 scores, for a person to read; whether the canary
        picks the pod (``canary``; null for a cached pod whose labels are not known) and, per node, whether the
        pod's node selector and required node affinity allow the node's labels (``node_selector``; null: the pod
        has none, or a Nodes-mode request), the check shadow mode makes. In names mode the features are those of
        the pod's context, as prioritize computes them (``extender.context``); ``outside_context`` names the cached
        nodes left out of it. A cached pod (no ``args``) is explained against the nodes of its pool (the cache keeps
        its tolerations), or every node where that pool is empty (or its tolerations are not known)."""
        from policy.features import CLUSTER_FEATURES, NODE_FEATURES, POD_FEATURES

        now = time.time()
        view = self.cache.view()
        need = inside = None  # inside: the view's rows encoded over (None: every row, or Nodes mode's candidates)
        if args is not None:
            pod, key = self.pod_view(args.Pod)
            cand = self.candidates(args, now, view)
            snap, unknown = cand.snap, [n for n, k in zip(cand.names, cand.known, strict=True) if not k]
            workload = self.profiles.workload_of(args.Pod)
            canary = self.recording is None or self.recording.decides_for(args.Pod)
            need = node_requirement(args.Pod) if cand.items is None else None
        else:
            rec = self.cache.pod(key[0], key[1])
            tolerations = rec.tolerations if rec is not None else None
            pool = view.pool_of(as_pod(tolerations or ()))
            if pool.rows is not None and not pool.rows.size:  # it tolerates no node's taints, or is not known to
                pool = view.pool_of(as_pod([(None, "Exists", None, None)]))  # every node: each says why not
            snap, unknown, inside = view.pool_snapshot(now, pool), [], pool.rows
            workload = self.pod_workload(key[2]) if key[2] else None
            labels = self.pod_labels(key[0], key[1])
            canary = None if labels is None else self.recording is None or self.recording.decides_for(
                {"metadata": {"namespace": key[0], "name": key[1], "labels": dict(labels)}})
        usage_status = self.usage_status()
        profile = self.profiles.describe(workload).get(workload) if workload else None
        reasons = filter_reasons(snap, pod, self.thresholds, self.settings.max_usage_age_s)
        context = rows = None
        if args is not None and cand.items is None:  # as prioritize does: the pod's context of the cache
            ctx = context_of(view, args.Pod, view.lookup(cand.names)[cand.known], now)
            context, rows, inside = ctx.snap, ctx.rows, ctx.view_rows
        outside = [] if inside is None else [view.names[i] for i in np.setdiff1d(np.arange(len(view.names)),
                                                                                 inside).tolist()]
        scored = score(snap, pod, self.policy, max_usage_age=self.settings.max_usage_age_s,
                       context=context, rows=rows)
        # What kube-scheduler ends up with: nodes our filter rejects never reach prioritize, so they get 0
        # and the 0-10 scale is spread over the nodes that pass.
        passing = np.ones(snap.n_nodes, dtype=bool)
        passing[list(reasons)] = False
        final = to_extender_scores(scored.raw, scored.enc.mask & passing, self.policy.mapping)
        nodes = []
        for i, name in enumerate(snap.names):
            nodes.append({
                "name": name,
                "filter": reasons.get(i, "passed"),
                "feasible": bool(scored.enc.mask[i]),
                "stale": bool(scored.stale[i]),
                "usage_age_s": _finite(snap.usage_age[i]),
                "usage_error": (usage_status.get(name) or {}).get("error"),
                "raw": _finite(scored.raw[i]),
                "score": int(final[i]),
                "node_selector": None if need is None else need.matches(view.labels.get(name, {})),
                "features": {f: round(float(v), 6) for f, v in zip(NODE_FEATURES, scored.enc.nodes[i], strict=True)},
            })
        nodes.sort(key=lambda n: (-n["score"], -(n["raw"] if n["raw"] is not None else -1e300)))
        return {
            "pod": {"namespace": key[0], "name": key[1], "requests": pod.requests.tolist(),
                    "demand": pod.demand.tolist(), "demand_source": pod.demand_source, "workload": workload,
                    "profile": profile},
            "policy": {"name": self.policy.name, "version": self.policy.version, "degraded": self.degraded},
            "canary": canary,
            "pod_features": {f: round(float(v), 6) for f, v in zip(POD_FEATURES, scored.enc.pod, strict=True)},
            "cluster_features": {f: round(float(v), 6) for f, v in zip(CLUSTER_FEATURES, scored.enc.cluster,
                                                                        strict=True)},
            "unknown_nodes": unknown,
            "outside_context": outside,
            "nodes": nodes,
            "last_decision": public_decision(self.decisions.get((key[0], key[1]))),
        }

    def bind(self, *, namespace: str, name: str, uid: str, node: str) -> None:
        """Bind through the binder (raises ``BindError``), then record and assume the pod on ``node``."""
        self.binder.bind(namespace=namespace, name=name, uid=uid, node=node)
        now = time.time()
        rec = self.cache.pod(namespace, name)
        last = self.decisions.get((namespace, name))
        if rec is not None:
            requests, demand, source = rec.requests, rec.demand, rec.demand_source
        elif last is not None:
            requests, demand, source = last["_requests"], last["_demand"], last["demand_source"]
        else:
            requests, demand, source = np.zeros(2), np.zeros(4), "unknown"
        self.cache.upsert_pod(PodRecord(namespace=namespace, name=name, uid=uid or (rec.uid if rec else "")
                                        or f"{namespace}/{name}", node=node, requests=requests, demand=demand,
                                        demand_source=source, bound_at=now))
        entry = self.decisions.setdefault((namespace, name), {})
        rank = None
        if entry.get("scores"):
            ranked = sorted(entry["scores"].items(), key=lambda kv_: -kv_[1])
            rank = next((i for i, (n, _) in enumerate(ranked) if n == node), None)
        entry.update({"bound_to": node, "bound_at": now, "rank_of_bound_node": rank})
        log.info("bound pod", extra=kv(pod=f"{namespace}/{name}", node=node, rank=rank, policy=self.policy.name))

    def _remember(self, key: tuple[str, str, str], pod: PodView, names, now: float, scored: Scored) -> None:
        """Keep the decision (``names``: the scored nodes, in ``scored``'s order) for /debug/explain."""
        limit = self.settings.decision_history
        if limit <= 0:
            return
        top = top_positions(scored.scores, 10)
        self.decisions[(key[0], key[1])] = {
            "at": now, "policy": self.policy.name, "demand_source": pod.demand_source,
            "candidates": len(names), "scores": {names[i]: int(scored.scores[i]) for i in top},
            "_requests": pod.requests, "_demand": pod.demand,
        }
        self.decisions.move_to_end((key[0], key[1]))
        while len(self.decisions) > limit:
            self.decisions.popitem(last=False)


def top_positions(scores: np.ndarray, k: int) -> list[int]:
    """The positions of the ``k`` highest ``scores``, highest first, ties in position order: the first ``k`` of a
    stable argsort of ``-scores``, without sorting every node (a fifth of a millisecond at 5,000 nodes, on every
    prioritize, for the ten /debug/explain shows)."""
    n = scores.size
    if n <= k:
        return np.argsort(-scores, kind="stable").tolist()
    kth = np.partition(scores, n - k)[n - k]  # the k-th highest value
    above = np.flatnonzero(scores > kth)  # fewer than k
    above = above[np.argsort(-scores[above], kind="stable")]
    return above.tolist() + np.flatnonzero(scores == kth)[: k - above.size].tolist()


def _finite(x: float) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def public_decision(entry: dict | None) -> dict | None:
    return None if entry is None else {k: v for k, v in entry.items() if not k.startswith("_")}
