"""Whether the extender's two watches (nodes, pods) are connected to the apiserver, and since when.

Why it exists: when the apiserver or etcd goes away the extender goes on scoring from its last-known cache,
which is right (kube-scheduler cannot bind anything meanwhile, and the cache catches up by a re-list), but
it must say so: an operator reading ``/readyz`` or the metrics during an outage should see that the cache is
frozen, for how long and why, not a plain ``ready``. State per watch: up or down, since when, the last
error and a failure count. The watch threads write it (each its own kind); ``/readyz`` and ``/metrics``
read it, so a read sees one watch's fields from one update or the next, never a mix that matters.

* ``up(kind)``: a list succeeded (the cache holds the apiserver's state again); ``failed(kind, error)``: a
  list or watch broke. A watch stream that simply times out and is reopened is neither.
* Metrics: ``drsched_extender_watch_up{kind}`` (1/0) and ``drsched_extender_watch_failures_total{kind}``.
* ``down()`` is the readiness reason while any watch is down: the extender stays ready (200), since a frozen
  cache still scores correctly what it knows, and says which watch is down, for how long and why.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge

from kube.logs import kv

log = logging.getLogger(__name__)
KINDS = ("nodes", "pods")


@dataclass
class WatchState:
    up: bool = False           # the last list succeeded and no list or watch has failed since
    since: float = 0.0         # when ``up`` last changed (epoch seconds)
    failures: int = 0          # list/watch failures so far
    error: str = ""            # the last failure, while down


class WatchMetrics:
    """The watch series, on the app's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.up = Gauge("drsched_extender_watch_up", "1 while this watch is connected to the apiserver, else 0",
                        ["kind"], registry=registry)
        self.failures = Counter("drsched_extender_watch_failures_total",
                                "List or watch requests to the apiserver that failed, by kind", ["kind"],
                                registry=registry)


class WatchHealth:
    def __init__(self, kinds: Iterable[str] = KINDS, *, metrics: WatchMetrics | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.metrics = metrics
        self.state = {kind: WatchState(since=clock()) for kind in kinds}
        if metrics is not None:  # series from the start (a static cluster has no watches, and no such series)
            for kind in self.state:
                metrics.up.labels(kind=kind).set(0)
                metrics.failures.labels(kind=kind)

    def up(self, kind: str) -> None:
        s = self.state[kind]
        if not s.up:
            if s.failures:
                log.info("watch back", extra=kv(kind=kind, down_s=round(self._clock() - s.since, 1)))
            s.up, s.since, s.error = True, self._clock(), ""
        if self.metrics is not None:
            self.metrics.up.labels(kind=kind).set(1)

    def failed(self, kind: str, error: str) -> None:
        s = self.state[kind]
        s.failures += 1
        s.error = error
        if s.up:
            s.up, s.since = False, self._clock()
        if self.metrics is not None:
            self.metrics.failures.labels(kind=kind).inc()
            self.metrics.up.labels(kind=kind).set(0)

    def snapshot(self) -> dict[str, dict]:
        """Per watch: {up, for_s (seconds in the current state), failures, error (while down)}."""
        now = self._clock()
        return {kind: {"up": s.up, "for_s": round(now - s.since, 1), "failures": s.failures,
                       "error": s.error or None} for kind, s in self.state.items()}

    def down(self) -> str | None:
        """'watch of pods down for 3.2 s: <error>' for each watch down after having failed; None if none is."""
        now = self._clock()
        parts = [f"watch of {kind} down for {now - s.since:.1f} s: {s.error}"
                 for kind, s in self.state.items() if not s.up and s.failures]
        return "; ".join(parts) or None
