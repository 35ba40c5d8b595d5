"""Prometheus metrics and the one helper that reports a scheduling fallback.

* Logs: the shared convention (``kube.logs``): a module logger, a constant message, ``extra=kv(...)``.
* Metrics: one ``Metrics`` object per app, on its own ``CollectorRegistry`` (so tests can build many apps).
  Names are the domain names used in the README.
* ``Telemetry.report``: every fallback (model unusable, bad profile annotation, usage fetch failed) is one
  log line, one Kubernetes Event (when there is an object to attach it to and an event sink) and one
  ``drsched_extender_fallback_total{reason}`` increment -- through this one function, never pasted. Events
  go through the shared ``kube.events.EventRecorder``: at most one per reason and pod a minute.
"""

from __future__ import annotations

import logging
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info

from kube.events import EventRecorder, EventSink
from kube.logs import kv

VERBS = ("filter", "prioritize", "bind", "preempt")
SHADOW_OUTCOMES = ("recorded", "not_owner", "unknown_node", "no_node_allowed")
GAIN_BUCKETS = (-1.0, -0.25, -0.05, -0.01, 0.0, 0.01, 0.05, 0.25, 1.0, 4.0)
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.004, 0.006, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0, 5.0)


class Metrics:
    """Every Prometheus series the extender exports."""

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.latency = Histogram("drsched_extender_request_seconds", "Handling time per extender verb",
                                 ["verb"], buckets=LATENCY_BUCKETS, registry=r)
        self.requests = Counter("drsched_extender_requests_total", "Requests per verb and outcome",
                                ["verb", "outcome"], registry=r)
        self.decisions = Counter("drsched_extender_decisions_total", "Filter/prioritize decisions per policy",
                                 ["verb", "policy"], registry=r)
        self.fallbacks = Counter("drsched_extender_fallback_total", "Scheduling fallbacks by reason",
                                 ["reason"], registry=r)
        self.stale_scored = Counter("drsched_extender_stale_nodes_scored_total",
                                    "Candidate nodes scored from requests because usage was stale or missing",
                                    registry=r)
        self.stale_nodes = Gauge("drsched_extender_stale_nodes", "Nodes whose usage is stale or missing",
                                 registry=r)
        self.node_stale = Gauge("drsched_extender_node_usage_stale",
                                "1 while this node's usage is stale or missing (scored from requests), else 0",
                                ["node"], registry=r)
        self.cache_age = Gauge("drsched_extender_cache_age_seconds", "Seconds since the cluster cache last changed",
                               registry=r)
        self.nodes = Gauge("drsched_extender_nodes", "Nodes in the cluster cache", registry=r)
        self.pods = Gauge("drsched_extender_pods", "Pods in the cluster cache", registry=r)
        self.usage_fetch = Counter("drsched_extender_usage_fetch_total", "Usage provider fetches by outcome",
                                   ["provider", "outcome"], registry=r)
        self.internal_errors = Counter("drsched_extender_internal_errors_total",
                                       "Requests that hit an unexpected exception (a bug), answered with Error",
                                       ["verb"], registry=r)
        for verb in VERBS:  # shown as 0 from the start: an alert can require it to stay 0
            self.internal_errors.labels(verb=verb)
        self.binds = Counter("drsched_extender_binds_total", "Bind requests by outcome", ["outcome"], registry=r)
        self.model = Info("drsched_extender_model", "The policy being served", registry=r)
        # -- the decision log, shadow mode, exploration, canary (issue #23; extender/README.md "Shadow mode")
        self.decision_log_rows = Counter("drsched_extender_decision_log_rows_total",
                                         "Rows written to the decision log", registry=r)
        self.decision_log_dropped = Counter("drsched_extender_decision_log_dropped_total",
                                            "Decision log rows dropped because the writer's queue was full",
                                            registry=r)
        self.decision_log_bytes = Gauge("drsched_extender_decision_log_bytes",
                                        "Bytes of the decision log's segments on disk", registry=r)
        self.shadow_bindings = Counter("drsched_extender_shadow_bindings_total",
                                       "Bindings by other schedulers seen in shadow mode, by what was done",
                                       ["outcome"], registry=r)
        for outcome in SHADOW_OUTCOMES:
            self.shadow_bindings.labels(outcome=outcome)
        self.shadow_agreement = Counter("drsched_extender_shadow_decisions_total",
                                        "Shadow decisions: agree = drsched would have chosen the actual node",
                                        ["result"], registry=r)
        for result in ("agree", "differ"):
            self.shadow_agreement.labels(result=result)
        self.shadow_gain = Histogram("drsched_extender_shadow_predicted_gain",
                                     "Predicted slowdown of the pod on the actual node minus on drsched's choice",
                                     buckets=GAIN_BUCKETS, registry=r)
        self.shadow_seconds = Histogram("drsched_extender_shadow_seconds", "CPU-bound time of one shadow decision",
                                        buckets=LATENCY_BUCKETS, registry=r)
        self.outcomes = Counter("drsched_extender_decision_outcomes_total",
                                "Pods that ended after a logged decision, by phase", ["phase"], registry=r)
        self.explored = Counter("drsched_extender_explored_total",
                                "Prioritize decisions whose top node was drawn among near-tied nodes", registry=r)
        self.canary_neutral = Counter("drsched_extender_canary_neutral_total",
                                      "Requests answered neutrally: the pod is outside the canary selector, or "
                                      "pass_through is on",
                                      ["verb"], registry=r)


class Telemetry:
    """Metrics + Event recorder + the fallback reporter, shared by the routes and the background loops.

    ``events`` is the sink Events go to (none: dropped); the extender's lifespan sets ``events.sink`` once it
    has a cluster."""

    def __init__(self, metrics: Metrics | None = None, events: EventSink | None = None,
                 log: logging.Logger | None = None) -> None:
        self.metrics = metrics or Metrics()
        self.events = EventRecorder(events, interval_s=60.0)
        self.log = log or logging.getLogger(__name__)

    def report(self, reason: str, message: str, *, pod: tuple[str, str, str] | None = None,
               level: int = logging.WARNING, **fields: Any) -> None:
        """One fallback: log line + Event (rate-limited per reason and pod, 60 s) + counter."""
        self.metrics.fallbacks.labels(reason=reason).inc()
        extra = {"reason": reason, **fields}
        if pod is not None:
            extra["pod"] = f"{pod[0]}/{pod[1]}"
        self.log.log(level, "scheduling fallback", extra=kv(**extra, message=message))
        if pod is not None:
            self.events.post(namespace=pod[0], name=pod[1], uid=pod[2], reason=reason, message=message,
                             type_="Warning")
