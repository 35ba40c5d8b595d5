"""What the extender records about its decisions (issue #23), built once from the settings in the lifespan.

``Recording`` ties together the decision log writer (``extender.decision_log``), the outcome tracker
(``extender.outcomes``), shadow mode (``extender.shadow``), exploration (``policy.explore``) and the
canary selector, and gives the rest of the extender three doors:

* ``serve(...)``      the prioritize path: exploration on the 0-10 scores, one decision row queued, the
                      pod's UID remembered for its outcome (a few microseconds: nothing is encoded here);
* ``observe_pod(...)`` the watch thread, before each pod event is applied to the cache: shadow a
                      binding, write the outcome of a decided pod that ended;
* ``decides_for(pod)`` the canary: False for pods drsched answers neutrally.

It owns no cluster state; ``stop()`` flushes the log.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

from extender.decide import ServedPolicy, Thresholds
from extender.decision_log import DecisionLog
from extender.outcomes import OutcomeTracker
from extender.selection import PodSelector
from extender.settings import Settings
from extender.shadow import ShadowRecorder
from extender.telemetry import Telemetry
from kube.cache import ClusterCache, PodRecord
from kube.errors import ConfigError
from kube.logs import kv
from kube.objects import workload_key
from policy.decisionlog import DecisionInputs, decision_row, filter_row, outcome_row
from policy.explore import explore
from policy.state import PodView

log = logging.getLogger(__name__)


def _serve_row(*, names, scores, known, raw, **fields) -> dict[str, Any]:
    """The serve decision row, built on the writer thread (raw values spread over the request's nodes)."""
    if not known.all():
        full = np.full(len(names), np.nan)
        full[known] = raw
        raw = full
    return decision_row(nodes=names, scores=scores, raw=raw, **fields)


class Recording:
    def __init__(self, settings: Settings, *, cache: ClusterCache, policy: ServedPolicy, telemetry: Telemetry,
                 thresholds: Thresholds, workload_of: Callable[[Mapping], str | None] = workload_key) -> None:
        s = settings
        self.settings, self.telemetry, self.policy = settings, telemetry, policy
        self.replica = os.environ.get("HOSTNAME", "")
        self.log = DecisionLog(directory=s.decision_log_dir, telemetry=telemetry,
                               max_file_bytes=s.decision_log_max_file_bytes, max_total_bytes=s.decision_log_max_bytes,
                               flush_interval_s=s.decision_log_flush_ms / 1000, queue_size=s.decision_log_queue) \
            if s.decision_log_dir is not None else None
        self.outcomes = OutcomeTracker() if self.log is not None or s.shadow else None
        self.canary = PodSelector.of(namespaces=s.canary_namespaces, selector=s.canary_selector)
        self.shadow = ShadowRecorder(
            cache=cache, policy=policy, telemetry=telemetry, thresholds=thresholds, max_usage_age=s.max_usage_age_s,
            selector=PodSelector.of(namespaces=s.shadow_namespaces, selector=s.shadow_selector,
                                    scheduler_names=s.shadow_scheduler_names),
            replicas=s.shadow_replicas, index=s.shadow_replica_index or 0, replica=self.replica,
            submit=self.log.submit if self.log is not None else None,
            track=self.outcomes.track if self.outcomes is not None else None, keep=s.decision_log_nodes,
            keep_inputs=s.decision_log_input_nodes, workload_of=workload_of) \
            if s.shadow else None

    def start(self) -> None:
        """Start the log's writer; ``ConfigError`` when its directory cannot be written (the extender refuses to
        start rather than serve without the log it was asked to keep)."""
        if self.log is not None:
            try:
                self.log.start()
            except OSError as exc:
                raise ConfigError(None, f"decision_log_dir {self.log.directory}: cannot write: "
                                  f"{exc.strerror or exc}") from None

    async def stop(self) -> None:
        if self.log is not None:
            await asyncio.to_thread(self.log.stop)

    # -- the request path -------------------------------------------------------------------------------------
    def decides_for(self, pod: Mapping | None) -> bool:
        """Whether drsched decides for this pod (the canary; none with ``pass_through``); a request without a pod
        is refused as usual."""
        if pod is None:
            return True
        return not self.settings.pass_through and (self.canary.everything or self.canary.matches(pod))

    def serve(self, *, key: tuple[str, str, str], pod: PodView, names: list[str], scores: np.ndarray,
              known: np.ndarray, raw: np.ndarray, now: float, inputs: DecisionInputs) -> np.ndarray:
        """The 0-10 scores to answer (drawn by exploration when on); the decision queued for the log, with what
        the encoder read (``inputs``, by reference: the row is built on the writer thread)."""
        s = self.settings
        uid = key[2] or f"{key[0]}/{key[1]}"
        explored = explore(scores, names, uid=uid, margin=s.explore_margin, seed=s.explore_seed) \
            if s.explore else None
        if explored is not None:
            scores = explored.scores
            if len(explored.tied) > 1:
                self.telemetry.metrics.explored.inc()
        if self.log is not None:  # outcomes of served pods are tracked for the log only
            top = explored.chosen if explored is not None else (int(np.argmax(scores)) if scores.size else None)
            chosen = names[top] if top is not None and scores[top] > 0 else None
            self.log.submit(partial(
                _serve_row, names=names, scores=scores, known=known, raw=raw, ts=now, replica=self.replica,
                mode="serve", pod=(key[0], key[1], uid), requests=pod.requests, demand=pod.demand,
                demand_source=pod.demand_source, workload=pod.workload, policy=self.policy.name,
                model_version=self.policy.version, chosen=chosen,
                propensity=explored.propensity if explored is not None else 1.0,
                explored=[names[i] for i in explored.tied] if explored is not None else None,
                keep=s.decision_log_nodes, inputs=inputs,
                keep_inputs=s.decision_log_input_nodes))
            self.outcomes.track(uid)
        return scores

    def filtered(self, *, key: tuple[str, str, str], passed: int, total: int, now: float) -> None:
        """A filter answer: logged when it leaves the pod at most one node, the case in which kube-scheduler binds
        without asking for scores (so a reader can tell "not scored because nothing to choose" from "not scored")."""
        if self.log is not None and passed <= 1:
            self.log.submit(partial(filter_row, ts=now, replica=self.replica,
                                    pod=(key[0], key[1], key[2] or f"{key[0]}/{key[1]}"), passed=passed,
                                    nodes_total=total))

    # -- the watch thread -------------------------------------------------------------------------------------
    def observe_pod(self, event_type: str, pod: Mapping, prior: PodRecord | None) -> None:
        """Called with each pod event before the cache applies it (``prior``: the cache's record until now)."""
        try:
            if self.shadow is not None and self.shadow.is_binding(event_type, pod, prior):
                self.shadow.on_binding(pod, prior)
            if self.outcomes is not None:
                ended = self.outcomes.observe(event_type, pod)
                if ended is not None:
                    self.telemetry.metrics.outcomes.labels(phase=ended["phase"]).inc()
                    if self.shadow is not None:
                        self.shadow.on_outcome(ended)
                    if self.log is not None:
                        self.log.submit(partial(outcome_row, ts=time.time(), replica=self.replica, **ended))
        except Exception:  # a bug here must not break the watch that feeds the cache
            log.exception("recording a pod event failed", extra=kv(event=event_type))
            self.telemetry.metrics.internal_errors.labels(verb="record").inc()

    def summary(self) -> dict[str, Any]:
        """``/debug/shadow``: the shadow's agreement and recent comparisons, and where the log goes."""
        out = self.shadow.summary() if self.shadow is not None else {"enabled": False}
        out["decision_log"] = None if self.log is None else {"path": str(self.log.path),
                                                            "tracked_pods": len(self.outcomes)}
        return out
