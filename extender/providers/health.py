"""Per-node health of a usage provider: last good sample, current failure reason, counters.

Reasons (the ``reason`` label of ``drsched_extender_usage_errors_total{provider,reason}``):

=================  ==========================================================================
``unreachable``    connection refused / reset / DNS: the agent or Prometheus is down
``timeout``        no answer within the provider's timeout
``http_status``    an HTTP status other than 200
``bad_response``   not JSON, wrong shape, negative or non-finite numbers
``wrong_node``     the agent at that address says it is another node
``no_data``        the source answered but has no sample for the node (agent just started,
                   the node's series are missing from Prometheus)
``no_agent``       no agent pod known on that node (cluster mode)
``node_not_ready`` the node's Ready condition is not True (a dead kubelet): its agent is not asked
``query_error``    Prometheus refused the query (``status: error``)
``unmapped``       a Prometheus series whose node label maps to no known node (counted, no node)
=================  ==========================================================================

Every failed fetch of a node is counted. The first failure after success (or a new reason) is one
``Telemetry.report("usage_node_failed", ...)``: log line + ``drsched_extender_fallback_total`` (the node
is scored from requests once its last sample is older than ``max_usage_age_s``); recovery is one info
line. A failing node keeps its last sample, which ages in the cache like any other.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge

from extender.telemetry import Telemetry
from kube.logs import kv

log = logging.getLogger(__name__)
REASONS = ("unreachable", "timeout", "http_status", "bad_response", "wrong_node", "no_data", "no_agent",
           "node_not_ready", "query_error", "unmapped")


class UsageMetrics:
    """The usage-provider series, on the app's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.errors = Counter("drsched_extender_usage_errors_total",
                              "Failed usage reads by provider and reason (per node, per poll)",
                              ["provider", "reason"], registry=registry)
        self.failing = Gauge("drsched_extender_usage_failing_nodes", "Nodes whose last usage read failed",
                             ["provider"], registry=registry)
        self.oldest = Gauge("drsched_extender_usage_oldest_sample_seconds",
                            "Age of the oldest last-good node sample the provider holds", ["provider"],
                            registry=registry)


@dataclass
class NodeHealth:
    last_ok: float | None = None        # epoch time of the last good sample
    reason: str | None = None           # why the last read failed; None while it succeeds
    detail: str = ""
    failures: int = 0                   # consecutive failed reads
    failing_since: float | None = None


class UsageHealth:
    """Per-node read status of one provider (event-loop only: no lock)."""

    def __init__(self, provider: str, *, telemetry: Telemetry | None = None, metrics: UsageMetrics | None = None,
                 nodes: Callable[[], Iterable[str]] = tuple, clock: Callable[[], float] = time.time) -> None:
        self.provider, self.telemetry, self.metrics = provider, telemetry, metrics
        self.nodes, self._clock = nodes, clock
        self._nodes: dict[str, NodeHealth] = {}

    def ok(self, node: str, sample_ts: float) -> None:
        h = self._nodes.setdefault(node, NodeHealth())
        if h.reason is not None:
            log.info("usage back", extra=kv(provider=self.provider, node=node, after_failures=h.failures))
        h.last_ok = sample_ts if h.last_ok is None else max(h.last_ok, sample_ts)
        h.reason, h.detail, h.failures, h.failing_since = None, "", 0, None

    def failed(self, node: str, reason: str, detail: str) -> None:
        h = self._nodes.setdefault(node, NodeHealth())
        self.count(reason)
        if h.reason != reason and self.telemetry is not None:
            self.telemetry.report("usage_node_failed", "usage read failed; the node ages towards stale",
                                  provider=self.provider, node=node, error=reason, detail=detail[:300])
        if h.reason is None:
            h.failing_since = self._clock()
        h.reason, h.detail, h.failures = reason, detail[:300], h.failures + 1

    def failed_all(self, reason: str, detail: str) -> None:
        """The whole source failed (Prometheus down, the fetch timed out): every known node."""
        for node in set(self.nodes()) | set(self._nodes):
            self.failed(node, reason, detail)

    def count(self, reason: str, n: int = 1) -> None:
        if self.metrics is not None and n:
            self.metrics.errors.labels(provider=self.provider, reason=reason).inc(n)

    def publish(self) -> None:
        """Drop nodes that left the cluster; set the gauges."""
        known = set(self.nodes())
        if known:
            for gone in set(self._nodes) - known:
                del self._nodes[gone]
        if self.metrics is None:
            return
        now = self._clock()
        self.metrics.failing.labels(provider=self.provider).set(sum(h.reason is not None for h in self._nodes.values()))
        ages = [now - h.last_ok for h in self._nodes.values() if h.last_ok is not None]
        self.metrics.oldest.labels(provider=self.provider).set(max(ages) if ages else 0.0)

    def status(self) -> dict[str, dict]:
        """Node -> {age_s, error, detail, failures, failing_for_s} for /debug/usage and /debug/explain."""
        now = self._clock()
        return {node: {"age_s": None if h.last_ok is None else round(max(now - h.last_ok, 0.0), 3),
                       "error": h.reason, "detail": h.detail or None, "failures": h.failures,
                       "failing_for_s": None if h.failing_since is None else round(now - h.failing_since, 3)}
                for node, h in sorted(self._nodes.items())}
