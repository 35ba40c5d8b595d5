"""Shadow mode: at each binding made by another scheduler, what drsched would have chosen, and the gap.

The watch (``extender.kube_index``) calls ``ShadowRecorder.on_binding`` with the pod's event *before* applying it
to the cache, so the decision is made on the snapshot the other scheduler decided on (the pod pending, on no
node). A binding is an ADDED/MODIFIED event whose pod names a node while the cache still holds it unbound, and
whose pod the selector picks (scheduler name, namespaces, labels). The recorder scores the nodes of the pod's
context with the served policy (``extender.context``: the cached nodes its taints and cordons leave it, as
prioritize encodes over, and the actual node should it lie outside; its rows kept across bindings by the
shadow's own ``extender.row_cache.RowCache``, bitwise what encoding from scratch gives), applies drsched's filter
(``extender.decide``'s checks, as ``/debug/explain`` does), and records: the actual node, drsched's choice (the
actual node when it ties for best), the full score vector, the model version, and the pod's predicted slowdown on
both nodes from the contention model on current usage (``policy.predicted.predicted_slowdowns`` under the
calibration's active set, with each node's DaemonSet pods, counted by the cache, left out of its jobs: the one
function ``policy.offline`` re-scores a row with, so the live predicted gain and the offline one agree on the same
snapshot). When a shadowed pod ends, its JCT joins the mean of the pods where drsched agreed or differed
(``on_outcome``). It binds nothing and writes nothing to the cluster.

Once per binding with several replicas: every replica watches every pod, so each records only the pods
whose UID hashes to its own index (``crc32(uid) mod shadow_replicas == shadow_replica_index``). No lease,
no coordination: a StatefulSet's ordinals are the indexes; while a replica is down its share is missed,
never doubled (the others count it as ``not_owner``). Replica count and index are settings.

Nodes the pod could not have been bound to are never drsched's choice: those whose taints (NoSchedule,
NoExecute; a cordon) it does not tolerate (``kube.objects.tolerates``), which lie outside its context -- its pool
(``kube.pool``, which judges each taint set once) -- but for the actual node, should it be one, and those whose
labels its ``nodeSelector`` or required node affinity do not allow (``kube.affinity``: In, NotIn, Exists,
DoesNotExist; ``Gt``, ``Lt`` and ``matchFields`` are taken as met), which are in it. The row records them as
not ``ready`` (``policy.decisionlog.DecisionInputs.blocked``; their features stay as the serving path computes
them), so that a policy re-scored from the log avoids them too. Without this, in the lab, the shadow chose the tainted
system node at a third of the bindings (``results/lab/shadow-rejudged-2026-12-07``). A pod's label constraints
are judged over every node once per distinct requirement while no node or label changes (``_refused_by_labels``,
the last ``LABELS_MEMO`` requirements: the pods of a workload share one), through a ``kube.affinity.LabelIndex``
of the nodes' labels kept as long (each key's values coded once; a requirement then costs a few numpy passes and
one ``matches`` per group of nodes alike on its keys, not one per node).

Limits: drsched's choice ignores the constraints that depend on the other pods (pod affinity and
anti-affinity, topology spread) and the unsupported operators above: it may name a node the pod could not go
to. A binding made while the watch was disconnected is shadowed with the snapshot at reconnection.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

from extender.context import context_of
from extender.decide import ServedPolicy, Thresholds, passes_filter, whole
from extender.row_cache import RowCache
from extender.selection import PodSelector
from extender.telemetry import Telemetry
from kube.affinity import LabelIndex, NodeRequirement, node_requirement
from kube.cache import CacheView, ClusterCache, PodRecord
from kube.logs import kv
from kube.objects import pod_key, pod_terminated, workload_key
from policy.calibration import default_params
from policy.decisionlog import DecisionInputs, decision_row
from policy.predicted import predicted_slowdowns
from policy.served import served_choice, to_extender_scores
from policy.sharing import ContentionParams
from policy.state import PodView

log = logging.getLogger(__name__)
MAX_COMPARED = 100_000
"""Shadowed pods remembered until they end, for the observed JCT by agreement (the oldest are forgotten)."""
LABELS_MEMO = 64
"""Distinct label requirements whose refused nodes are remembered until a node or a label changes."""
PARTIAL_MIN_NODES = 0
"""The shadow's row cache re-encodes only the changed rows at any size (``RowCache.partial_min_nodes``): between two
bindings one node changed (the last bound one) and the nodes with new samples, and every shadowed binding pays for
a new cache view, where prioritize, which often sees the same view twice, keeps 2,000 (encoding alone, in-process,
bindings in turn: ~1 % less at 1,000 nodes, 10 % less at 5,000)."""


def owner(uid: str, replicas: int) -> int:
    """The replica index that records the pod with ``uid``."""
    return zlib.crc32(uid.encode()) % replicas


class ShadowRecorder:
    def __init__(self, *, cache: ClusterCache, policy: ServedPolicy, telemetry: Telemetry, selector: PodSelector,
                 thresholds: Thresholds, max_usage_age: float, replicas: int = 1, index: int = 0,
                 replica: str = "", submit: Callable[..., Any] | None = None,
                 track: Callable[[str], None] | None = None, recent: int = 50, keep: int = 0,
                 keep_inputs: int = 0, workload_of: Callable[[Mapping], str | None] = workload_key,
                 params: ContentionParams | None = None) -> None:
        self.cache, self.policy, self.telemetry, self.selector = cache, policy, telemetry, selector
        self.thresholds, self.max_usage_age = thresholds, max_usage_age
        self.replicas, self.index, self.replica = replicas, index, replica
        self.submit, self.track, self.keep, self.keep_inputs = submit, track, keep, keep_inputs
        self.workload_of = workload_of
        self.params = default_params() if params is None else params  # the contention rule's (module doc)
        # once at start: $DRSCHED_SIM_CALIBRATION may name another file, and so another set, than the shipped one
        log.info("shadow mode predicts slowdowns with these contention parameters", extra=kv(**self.params.as_dict()))
        self._lock = threading.Lock()
        self._recent: deque[dict] = deque(maxlen=recent)
        self._agree = self._differ = 0
        self._gain_sum = 0.0
        self._counts = dict.fromkeys(("recorded", "not_owner", "unknown_node", "no_node_allowed"), 0)
        self._compared: OrderedDict[str, bool] = OrderedDict()  # uid -> agreed, until the pod ends (bounded)
        self._jct = {True: [0, 0.0], False: [0, 0.0]}            # agreed -> [pods ended, sum of their JCT]
        self._labels_memo: dict[NodeRequirement, np.ndarray] = {}  # requirement -> refused nodes (watch thread)
        self._labels_of_memo: tuple = (None, None)  # the view's (labels, index) the memo's answers hold for
        self._label_index: LabelIndex | None = None  # the nodes' labels of that view, coded (watch thread)
        m = telemetry.metrics  # each labelled child looked up once, not at every binding
        self._bindings = {o: m.shadow_bindings.labels(outcome=o) for o in self._counts}
        self._agreement = {True: m.shadow_agreement.labels(result="agree"),
                           False: m.shadow_agreement.labels(result="differ")}
        # the contexts' encoded rows (watch thread); not prioritize's cache: its lock, held through the Q-network,
        # would make the event loop wait for the watch thread's shadow
        self.rows = RowCache(partial_min_nodes=PARTIAL_MIN_NODES)

    # -- the watch thread ---------------------------------------------------------------------------------
    def is_binding(self, event_type: str, pod: Mapping, prior: PodRecord | None) -> bool:
        """Whether this event is a selected pod's binding (module doc)."""
        spec = pod.get("spec")
        node = spec.get("nodeName") if isinstance(spec, Mapping) else None
        return (event_type in ("ADDED", "MODIFIED") and bool(node) and prior is not None and prior.node is None
                and not pod_terminated(pod) and self.selector.matches(pod))

    def on_binding(self, pod: Mapping, prior: PodRecord) -> dict | None:
        """Shadow one binding (the pod's object naming its node; ``prior``: its pending cache record). Returns
        the comparison recorded (None when another replica owns the pod or the node is unknown)."""
        key = pod_key(pod)
        uid = key[2] or f"{key[0]}/{key[1]}"
        if self.replicas > 1 and owner(uid, self.replicas) != self.index:
            return self._count("not_owner")
        start = time.thread_time()
        actual = str(pod["spec"]["nodeName"])
        view, now = self.cache.view(), time.time()
        row = view.index.get(actual)
        if row is None:
            return self._count("unknown_node")
        ctx = context_of(view, pod, np.array([row], dtype=np.int64), now)
        snap, row = ctx.snap, int(ctx.rows[0])
        actual = snap.names[row]  # the cache's own string: the row's lookups of it then compare identities
        view_ = PodView(requests=prior.requests, demand=prior.demand, demand_source=prior.demand_source,
                        name=key[1], workload=self.workload_of(pod))
        # the encoding and raw values alone: the 0-10 scores ``score`` maps them to are over the feasible nodes, and
        # the shadow's are over the allowed ones (below)
        if ctx.group is None:  # a context of its own (a node outside the pod's pool): nothing to keep
            enc, raw, fresh = whole(snap, view_, self.policy, max_usage_age=self.max_usage_age)
        else:
            enc, raw, fresh = self.rows.whole(snap, view_, self.policy, max_usage_age=self.max_usage_age,
                                              group=ctx.group)
        blocked = ctx.of_view(self._blocked(pod, view))  # nodes the pod could not have been bound to (module doc)
        any_blocked = bool(blocked.any())
        daemon_pods = ctx.of_view(view.daemon_pods)
        # the filter judges the nodes the pod could use (its prefer modes look for a cool one among them): the
        # encoder's mask has its readiness, slot and request checks, so only heat is judged again
        usable = enc.mask & ~blocked if any_blocked else enc.mask
        allowed = passes_filter(snap, view_, self.thresholds, self.max_usage_age, feasible=usable,
                                fresh=fresh) & np.isfinite(raw)
        final = to_extender_scores(raw, allowed, self.policy.mapping)
        chosen = served_choice(raw, allowed, row)
        spec = pod.get("spec") or {}
        result: dict[str, Any] = {"pod": f"{key[0]}/{key[1]}",
                                  "scheduler": spec.get("schedulerName") or "default-scheduler",
                                  "actual": actual, "chosen": None if chosen is None else snap.names[chosen],
                                  "at": round(now, 3)}
        slowdown, gain = None, None
        if chosen is not None:
            s_actual, s_own = predicted_slowdowns(
                snap, view_, [row, chosen], params=self.params, max_usage_age=self.max_usage_age,
                daemon_pods=0 if daemon_pods is None else daemon_pods)
            slowdown, gain = {actual: s_actual, snap.names[chosen]: s_own}, s_actual - s_own
            result.update(agree=chosen == row, slowdown=slowdown, predicted_gain=round(gain, 6))
        if self.submit is not None:
            self.submit(partial(
                decision_row, ts=now, replica=self.replica, mode="shadow", pod=(key[0], key[1], uid),
                requests=prior.requests, demand=prior.demand, demand_source=prior.demand_source,
                workload=view_.workload, policy=self.policy.name, model_version=self.policy.version,
                nodes=snap.names, scores=final,
                raw=raw, chosen=result["chosen"], actual=actual, scheduler=result["scheduler"],
                slowdown=slowdown, predicted_gain=gain, keep=self.keep, keep_inputs=self.keep_inputs,
                inputs=DecisionInputs(snap=snap, cluster=enc.cluster, max_usage_age=self.max_usage_age,
                                      blocked=blocked if any_blocked else None, daemon_pods=daemon_pods,
                                      feasible=enc.mask, mean_cap=enc.mean_cap)))
        if self.track is not None:
            self.track(uid)
        self._record(result, gain, uid)
        self.telemetry.metrics.shadow_seconds.observe(time.thread_time() - start)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("shadowed binding", extra=kv(pod=result["pod"], actual=actual, chosen=result["chosen"],
                                                   gain=result.get("predicted_gain")))
        return result

    def _blocked(self, pod: Mapping, view: CacheView) -> np.ndarray:
        """(N,) the view's nodes the pod could not have been bound to: taints it does not tolerate, labels its
        node selector or required affinity do not allow (module doc)."""
        # the taints: outside the pod's pool, which judged them once per taint set (kube.pool), not once per node
        pool = view.pool_of(pod)
        blocked = np.zeros(len(view.names), dtype=bool) if pool.position is None else pool.position < 0
        need = node_requirement(pod)
        if need is not None:
            blocked |= self._refused_by_labels(need, view)
        return blocked

    def _refused_by_labels(self, need: NodeRequirement, view: CacheView) -> np.ndarray:
        """(N,) the view's nodes whose labels ``need`` does not allow; answers are kept while the node set and
        every node's labels stay (the view's ``labels`` and ``index`` objects), for ``LABELS_MEMO`` requirements."""
        labels, index = view.labels, view.index
        if self._labels_of_memo[0] is not labels or self._labels_of_memo[1] is not index:
            self._labels_memo.clear()
            self._labels_of_memo = (labels, index)
            self._label_index = LabelIndex(view.names, labels)
        refused = self._labels_memo.get(need)
        if refused is None:
            refused = ~self._label_index.allowed(need)
            if len(self._labels_memo) >= LABELS_MEMO:
                del self._labels_memo[next(iter(self._labels_memo))]  # the oldest
            self._labels_memo[need] = refused
        return refused

    def _count(self, outcome: str) -> None:
        self._bindings[outcome].inc()
        with self._lock:
            self._counts[outcome] += 1
        return None

    def on_outcome(self, ended: Mapping[str, Any]) -> None:
        """A shadowed pod ended (``extender.outcomes``): its JCT joins the agreed or the differed mean."""
        created, finished = ended.get("created"), ended.get("finished")
        with self._lock:
            agreed = self._compared.pop(ended["pod"][2], None)
            if agreed is not None and ended.get("phase") == "Succeeded" and created is not None \
                    and finished is not None:
                self._jct[agreed][0] += 1
                self._jct[agreed][1] += finished - created

    def _record(self, result: dict, gain: float | None, uid: str) -> None:
        outcome = "recorded" if gain is not None else "no_node_allowed"
        self._bindings[outcome].inc()
        if gain is not None:
            self._agreement[bool(result["agree"])].inc()
            self.telemetry.metrics.shadow_gain.observe(gain)
        with self._lock:
            self._counts[outcome] += 1
            if gain is not None:
                self._agree += result["agree"]
                self._differ += not result["agree"]
                self._gain_sum += gain
                self._compared[uid] = result["agree"]
                while len(self._compared) > MAX_COMPARED:
                    self._compared.popitem(last=False)
            self._recent.append(result)

    # -- /debug/shadow --------------------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        with self._lock:
            compared = self._agree + self._differ
            return {
                "enabled": True, "policy": self.policy.name, "model_version": self.policy.version,
                "replica_index": self.index, "replicas": self.replicas,
                "selector": {"scheduler_names": sorted(self.selector.scheduler_names),
                             "namespaces": sorted(self.selector.namespaces), "labels": dict(self.selector.labels)},
                "bindings": dict(self._counts), "compared": compared, "agree": self._agree, "differ": self._differ,
                "agreement_rate": round(self._agree / compared, 4) if compared else None,
                "mean_predicted_gain": round(self._gain_sum / compared, 6) if compared else None,
                "observed_mean_jct_s": {  # pods that succeeded, where drsched agreed / differed (not causal)
                    k: {"pods": n, "mean": round(t / n, 3) if n else None}
                    for k, (n, t) in (("agreed", self._jct[True]), ("differed", self._jct[False]))},
                "recent": list(self._recent)[::-1],
            }
