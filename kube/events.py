"""The one way drsched posts Kubernetes Events: rate-limited per pod and reason, and best effort.

An Event goes with every scheduling fallback (extender) and every migration decision, step or outcome
(controller). Some of those repeat every request or every cycle -- a pod whose profile annotation does not
parse, an intent the budget refuses -- so ``EventRecorder`` posts at most one per (reason, pod, key) every
``interval_s``. A failed post is logged at DEBUG and dropped: an Event never fails a request or a step.

The sink that really posts is ``kube.client.KubeEventSink`` (from a small thread pool, never on the request
path); ``NullEventSink`` drops them (static mode, tests).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from kube.logs import kv

log = logging.getLogger(__name__)

_MAX_KEYS = 10_000
"""Bound on remembered (reason, pod) keys; past it the memory is cleared (a few duplicate Events at worst)."""


class EventSink(Protocol):
    """Posts a core/v1 Event about a pod."""

    def event(self, *, namespace: str, name: str, uid: str, reason: str, message: str, type_: str) -> None: ...


class NullEventSink:
    """Drops every Event (static mode, tests)."""

    def event(self, **_: Any) -> None:
        return None


class EventRecorder:
    """Posts Events through ``sink``, at most one per (reason, pod, ``key``) every ``interval_s`` seconds."""

    def __init__(self, sink: EventSink | None = None, *, interval_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.sink: EventSink = sink or NullEventSink()
        self.interval_s = interval_s
        self._clock = clock
        self._last: dict[tuple, float] = {}

    def post(self, *, namespace: str, name: str, uid: str, reason: str, message: str, type_: str,
             key: tuple = (), limit: bool = True) -> bool:
        """Post one Event unless ``limit`` and the same one went out less than ``interval_s`` ago.

        An Event posted with ``limit=False`` still counts for later limited ones. Returns whether it was
        handed to the sink."""
        k = (reason, namespace, name, uid, *key)
        now = self._clock()
        if limit and now - self._last.get(k, -float("inf")) < self.interval_s:
            return False
        self._last[k] = now
        if len(self._last) > _MAX_KEYS:
            self._last.clear()
        try:
            self.sink.event(namespace=namespace, name=name, uid=uid, reason=reason, message=message[:1000],
                            type_=type_)
        except Exception:  # best effort: never fail a request or a step for an Event
            log.debug("event not posted", extra=kv(reason=reason, pod=f"{namespace}/{name}"), exc_info=True)
        return True
