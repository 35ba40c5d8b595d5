"""Whether a pod's ``drsched.io/profile`` annotation is believed.

Anyone who may create a pod may write the annotation, and a pod that claims a tiny demand is packed onto
busy nodes at other tenants' expense. The extender cannot check a claim about a pod that has not run yet,
but it can check it against what the same workload's pods were measured using: once the workload has a
*trusted* learned profile (``extender.profile_learning.trusted``), an annotation that claims less than
``fraction`` of that profile in any resource it has learned, or less than ``fraction`` of the pod's own
cpu or memory requests, is not believed -- the learned profile is served instead
(``demand_source: learned``). Claiming *more* than measured is always believed: it only costs the
claimant. Without a trusted learned profile the annotation is served as it is (nothing to check it
against). ``fraction`` 0 believes every annotation.

Each pod whose claim is overridden is counted once (``drsched_extender_annotation_overridden_total``)
and gets one Kubernetes Event (``ProfileAnnotationNotBelieved``, so its owner can see why), and each
workload is logged once, so a Deployment of a thousand lying replicas is one log line.
``AnnotationTrust`` owns those two bounded memories.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

import numpy as np
from prometheus_client import CollectorRegistry, Counter

from extender.telemetry import Telemetry
from kube.logs import kv

log = logging.getLogger(__name__)
RESOURCES = ("cpu", "mem", "net", "disk")
_REMEMBERED = 10_000


def understated(claim: np.ndarray, *, learned: np.ndarray, requests: np.ndarray, fraction: float) -> list[str]:
    """The resources ``claim`` puts below ``fraction`` of the learned demand (where one was learned, > 0) or,
    for cpu and memory, below ``fraction`` of the requests. Empty: the claim is believable."""
    claim, learned = np.asarray(claim, dtype=np.float64), np.asarray(learned, dtype=np.float64)
    floor = fraction * learned
    floor[:2] = np.maximum(floor[:2], fraction * np.asarray(requests, dtype=np.float64)[:2])
    return [RESOURCES[i] for i in range(4) if floor[i] > 0 and claim[i] < floor[i]]


class AnnotationTrust:
    """Judges annotations against trusted learned profiles; counts and logs the overrides."""

    def __init__(self, *, fraction: float, registry: CollectorRegistry | None = None,
                 telemetry: Telemetry | None = None) -> None:
        self.fraction, self.telemetry = fraction, telemetry  # telemetry.events: read per call (set after start)
        self.overridden = Counter("drsched_extender_annotation_overridden_total",
                                  "Pods whose profile annotation claimed less than the trusted learned profile "
                                  "allows (the learned profile was served)", registry=registry)
        self._lock = threading.Lock()
        self._pods: OrderedDict[str, None] = OrderedDict()
        self._workloads: OrderedDict[str, None] = OrderedDict()

    def judge(self, *, pod: str, workload: str, claim: np.ndarray, learned: np.ndarray | None,
              requests: np.ndarray) -> np.ndarray | None:
        """The demand to serve instead of ``claim`` (the learned profile), or None to believe the claim."""
        if self.fraction <= 0 or learned is None:
            return None
        short = understated(claim, learned=learned, requests=requests, fraction=self.fraction)
        if not short:
            return None
        with self._lock:
            new_pod = _remember(self._pods, pod)
            new_workload = _remember(self._workloads, workload)
        if new_pod:
            self.overridden.inc()
            self._event(pod, short, claim, learned)
        if new_workload:
            log.warning("profile annotation not believed: the learned profile is served",
                        extra=kv(workload=workload, pod=pod, understated=",".join(short), fraction=self.fraction,
                                 claimed=[round(float(x), 3) for x in claim],
                                 learned=[round(float(x), 3) for x in learned]))
        return np.asarray(learned, dtype=np.float64)


    def _event(self, pod: str, short: list[str], claim: np.ndarray, learned: np.ndarray) -> None:
        if self.telemetry is None:
            return
        namespace, _, name = pod.partition("/")
        message = (f"drsched.io/profile understates {', '.join(short)} against the workload's measured profile "
                   f"(claimed {[round(float(x), 3) for x in claim]}, measured {[round(float(x), 3) for x in learned]}"
                   f" cores/GiB/MB/s/MB/s); scheduled with the measured profile")
        # Once per pod already (the caller remembers pods), so the recorder's rate limit is not needed;
        # the recorder keeps an Event best effort, never failing the request.
        self.telemetry.events.post(namespace=namespace, name=name, uid="", reason="ProfileAnnotationNotBelieved",
                                   message=message, type_="Warning", limit=False)


def _remember(seen: OrderedDict[str, None], key: str) -> bool:
    """Add ``key``; True if it was new. The oldest keys go past a bound (a forgotten pod may count twice)."""
    if key in seen:
        seen.move_to_end(key)
        return False
    seen[key] = None
    while len(seen) > _REMEMBERED:
        seen.popitem(last=False)
    return True
