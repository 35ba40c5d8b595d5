"""How a pod ended, read from its status, for the pods the decision log has a decision for.

``OutcomeTracker`` remembers the UIDs of logged decisions (bounded: the oldest are forgotten first) and,
fed the watch's pod events, returns the outcome of a remembered pod once: when its phase becomes
Succeeded or Failed, or when it is deleted before that (phase ``deleted``). ``pod_times`` is the pure
reading of the times (JCT = last container finish - creation). UIDs are remembered in memory only: a pod
decided before a restart ends unrecorded (the reader then joins no outcome to its decision).

Writers: the request path (``track``) and the watch thread (``observe``): one lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from datetime import datetime

from kube.objects import TERMINAL_PHASES, child_map, pod_key


def _epoch(stamp) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def pod_times(pod: Mapping) -> tuple[float | None, float | None, float | None]:
    """(created, started, finished) epoch seconds of a v1.Pod: creation; the first container start (else
    the pod's startTime); the last container finish (None until every container has terminated)."""
    status = child_map(pod, "status")
    created = _epoch(child_map(pod, "metadata").get("creationTimestamp"))
    starts, ends, running = [], [], False
    for cs in status.get("containerStatuses") or []:
        state = child_map(cs, "state")
        term = child_map(state, "terminated")
        if term:
            starts.append(_epoch(term.get("startedAt")))
            ends.append(_epoch(term.get("finishedAt")))
        else:
            running = True
            starts.append(_epoch(child_map(state, "running").get("startedAt")))
    starts = [s for s in starts if s is not None]
    ends = [e for e in ends if e is not None]
    started = min(starts) if starts else _epoch(status.get("startTime"))
    finished = max(ends) if ends and not running else None
    return created, started, finished


class OutcomeTracker:
    def __init__(self, *, max_pods: int = 100_000) -> None:
        self.max_pods = max_pods
        self._lock = threading.Lock()
        self._uids: OrderedDict[str, None] = OrderedDict()

    def track(self, uid: str) -> None:
        """Remember a decided pod (its outcome will be returned once)."""
        if not uid:
            return
        with self._lock:
            self._uids[uid] = None
            self._uids.move_to_end(uid)
            while len(self._uids) > self.max_pods:
                self._uids.popitem(last=False)

    def __len__(self) -> int:
        return len(self._uids)

    def observe(self, event_type: str, pod: Mapping) -> dict | None:
        """The outcome of a tracked pod that this event ends ({pod, node, phase, created, started, finished}),
        else None. Each tracked pod's outcome is returned at most once."""
        key = pod_key(pod)
        if not key[2]:
            return None
        phase = child_map(pod, "status").get("phase")
        if event_type == "DELETED":
            phase = phase if phase in TERMINAL_PHASES else "deleted"
        elif phase not in TERMINAL_PHASES:
            return None
        with self._lock:
            if key[2] not in self._uids:
                return None
            del self._uids[key[2]]
        created, started, finished = pod_times(pod)
        return {"pod": key, "node": child_map(pod, "spec").get("nodeName") or None, "phase": str(phase),
                "created": created, "started": started, "finished": finished}
