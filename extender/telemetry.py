"""Logging, Prometheus metrics and the one helper that reports a scheduling fallback.

* Logs: stdlib ``logging``; a constant message plus key=value fields passed as ``extra=kv(...)``. The
  ``JsonFormatter`` writes one JSON object per line with the fields as keys; the text format appends
  ``key=value``.
* Metrics: one ``Metrics`` object per app, on its own ``CollectorRegistry`` (so tests can build many apps).
  Names are the domain names used in the README.
* ``Telemetry.report``: every fallback (model unusable, bad profile annotation, usage fetch failed) is one
  log line, one Kubernetes Event (when there is an object to attach it to and an event sink) and one
  ``drsched_extender_fallback_total{reason}`` increment -- through this one function, never pasted.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.004, 0.006, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0, 5.0)


def kv(**fields: Any) -> dict[str, Any]:
    """``extra=`` for a log call: ``log.info("bound pod", extra=kv(pod="ns/p", node="n1"))``."""
    return {"kv": fields}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {"ts": round(record.created, 3), "level": record.levelname.lower(), "logger": record.name,
               "msg": record.getMessage()}
        out.update(getattr(record, "kv", {}) or {})
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        base = super().format(record)
        fields = getattr(record, "kv", {}) or {}
        return base + "".join(f" {k}={v}" for k, v in fields.items())


def setup_logging(*, level: str = "INFO", fmt: str = "json") -> None:
    """Configure the root logger once per process (called by ``__main__``, not at import)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True


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
        self.cache_age = Gauge("drsched_extender_cache_age_seconds", "Seconds since the cluster cache last changed",
                               registry=r)
        self.nodes = Gauge("drsched_extender_nodes", "Nodes in the cluster cache", registry=r)
        self.pods = Gauge("drsched_extender_pods", "Pods in the cluster cache", registry=r)
        self.usage_fetch = Counter("drsched_extender_usage_fetch_total", "Usage provider fetches by outcome",
                                   ["provider", "outcome"], registry=r)
        self.binds = Counter("drsched_extender_binds_total", "Bind requests by outcome", ["outcome"], registry=r)
        self.model = Info("drsched_extender_model", "The policy being served", registry=r)


class EventSink(Protocol):
    """Posts a Kubernetes Event about a pod (kube mode) or drops it (static mode)."""

    def event(self, *, namespace: str, name: str, uid: str, reason: str, message: str,
              type_: str = "Warning") -> None: ...


class NullEventSink:
    def event(self, **_: Any) -> None:
        return None


class Telemetry:
    """Metrics + event sink + the fallback reporter, shared by the routes and the background loops."""

    def __init__(self, metrics: Metrics | None = None, events: EventSink | None = None,
                 log: logging.Logger | None = None) -> None:
        self.metrics = metrics or Metrics()
        self.events = events or NullEventSink()
        self.log = log or logging.getLogger("extender")
        self._last_event: dict[tuple, float] = {}

    def report(self, reason: str, message: str, *, pod: tuple[str, str, str] | None = None,
               level: int = logging.WARNING, **fields: Any) -> None:
        """One fallback: log line + Event (rate-limited per reason and pod, 60 s) + counter."""
        self.metrics.fallbacks.labels(reason=reason).inc()
        extra = {"reason": reason, **fields}
        if pod is not None:
            extra["pod"] = f"{pod[0]}/{pod[1]}"
        self.log.log(level, message, extra=kv(**extra))
        if pod is not None:
            key = (reason, pod)
            now = time.monotonic()
            if now - self._last_event.get(key, -1e9) >= 60.0:
                self._last_event[key] = now
                if len(self._last_event) > 10_000:
                    self._last_event.clear()
                try:
                    self.events.event(namespace=pod[0], name=pod[1], uid=pod[2], reason=reason, message=message)
                except Exception:  # an Event is best effort; never fail a request for it
                    self.log.debug("event not posted", extra=kv(reason=reason), exc_info=True)
