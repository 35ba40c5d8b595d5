"""A pod's expected demand profile, and where it came from: the one reading the extender scores with
and the migration controller decides with.

Sources, in order (the first that answers wins; ``PodView.demand_source`` says which):

1. ``annotation`` -- the pod's ``drsched.io/profile`` annotation (unless the store's ``judge_annotation``
   overrules it, see ``extender.annotation_trust``), in one of two forms:

   * JSON with Kubernetes quantities in Kubernetes base units (cpu cores, memory bytes, net and disk
     bytes per second): ``{"cpu": "2", "memory": "1Gi", "net": "60M", "disk": "80M"}``
   * compact ``key=value`` pairs in policy units (cores, GiB, MB/s, MB/s): ``cpu=2,mem=1,net=60,disk=80``

   Keys: ``cpu``; ``mem`` or ``memory``; ``net`` or ``network``; ``disk``. A key left out takes the value
   from the pod's requests (cpu, mem) or 0 (net, disk). Unknown keys, negative or unparseable values are a
   ``ProfileError``; the caller then falls back to the next source and reports it.
2. ``learned`` -- the profile a ``ProfileSource`` holds for the pod's workload (keyed by the source's own
   ``workload_of(pod)``; ``kube.objects.workload_key`` without a source). The extender's stores
   (``extender.profile_store.ProfileStore``, which extends ``ProfileSource``) learn them from the node
   agents' per-pod readings; the controller has none.
3. ``requests`` -- ``PodView.from_requests``: cpu and memory as requested, no net or disk.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Protocol

import numpy as np

from kube.errors import ProfileError, QuantityError
from kube.objects import child_map, pod_key, workload_key
from kube.quantity import cpu_cores, mem_gib, rate_mbps
from kube.selectors import parse_pairs
from policy.state import PodView

PROFILE_ANNOTATION = "drsched.io/profile"
_KEYS = {"cpu": 0, "mem": 1, "memory": 1, "net": 2, "network": 2, "disk": 3}
_JSON_CONVERT = (cpu_cores, mem_gib, rate_mbps, rate_mbps)


def parse_profile(text: str, requests: np.ndarray) -> np.ndarray:
    """(4,) demand in policy units from an annotation value; raises ``ProfileError`` naming the problem."""
    if not isinstance(text, str) or not text.strip():
        raise ProfileError("profile annotation is empty")
    demand = np.array([requests[0], requests[1], 0.0, 0.0], dtype=np.float64)
    text = text.strip()
    seen: set[int] = set()
    if text[0] in "{[":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProfileError(f"profile annotation is not valid JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(obj, dict):
            raise ProfileError("profile annotation JSON must be an object")
        items = list(obj.items())
        convert = True
    else:
        try:
            items = parse_pairs(text, what="profile entry")
        except ValueError as exc:
            raise ProfileError(f"{exc} (e.g. cpu=2,mem=1,net=60,disk=80)") from None
        convert = False
    for key, value in items:
        idx = _KEYS.get(str(key).lower())
        if idx is None:
            raise ProfileError(f"profile key {key!r} is unknown; use cpu, mem, net, disk")
        if idx in seen:
            raise ProfileError(f"profile key {key!r} is given twice")
        seen.add(idx)
        try:
            if convert:
                demand[idx] = _JSON_CONVERT[idx](value)
            else:
                number = float(value)
                if not np.isfinite(number) or number < 0:
                    raise ValueError
                demand[idx] = number
        except (QuantityError, ValueError, TypeError):
            unit = "a Kubernetes quantity" if convert else "a number >= 0 in policy units"
            raise ProfileError(f"profile value {key}={value!r} is not {unit}") from None
    return demand


class ProfileSource(Protocol):
    """What reading a pod's demand asks of a profile store: learned demand profiles per workload key
    (``namespace/Kind/name``), in policy units. The extender's full store interface, which every store
    implements, is ``extender.profile_store.ProfileStore``."""

    def workload_of(self, pod: Mapping) -> str | None:
        """The workload key of a v1.Pod JSON object (None: standalone, no profile)."""
        ...

    def get(self, workload: str) -> np.ndarray | None:
        """The (4,) demand to serve for ``workload``, or None when there is none (yet)."""
        ...

    def judge_annotation(self, *, pod: str, workload: str, claim: np.ndarray, requests: np.ndarray
                         ) -> np.ndarray | None:
        """The demand to serve instead of an annotation's ``claim``, or None to believe the claim."""
        ...


def checked_demand(workload: str, demand) -> np.ndarray:
    """``demand`` as a (4,) float array of finite values >= 0; raises ``ProfileError`` naming ``workload``."""
    demand = np.asarray(demand, dtype=np.float64).reshape(-1)
    if demand.shape != (4,) or not np.all(np.isfinite(demand)) or np.any(demand < 0):
        raise ProfileError(f"profile for {workload!r} must be 4 finite values >= 0")
    return demand


def pod_view(*, name: str, requests: np.ndarray, annotation: str | None, workload: str | None,
             store: ProfileSource | None) -> tuple[PodView, ProfileError | None]:
    """The PodView for a pod, plus the annotation error if one was skipped (for the caller to report)."""
    problem = None
    if annotation is not None:
        try:
            demand = parse_profile(annotation, requests)
        except ProfileError as exc:
            problem = exc
        else:
            # a store may refuse to believe the claim (extender.annotation_trust) and say what to serve
            learned = None if store is None or workload is None else \
                store.judge_annotation(pod=name, workload=workload, claim=demand, requests=requests)
            if learned is not None:
                return PodView(requests=requests, demand=learned, demand_source="learned", name=name,
                               workload=workload), None
            return PodView(requests=requests, demand=demand, demand_source="annotation", name=name,
                           workload=workload), None
    if workload is not None and store is not None:
        learned = store.get(workload)
        if learned is not None:
            return PodView(requests=requests, demand=learned, demand_source="learned", name=name,
                           workload=workload), problem
    return PodView.from_requests(float(requests[0]), float(requests[1]), name=name, workload=workload), problem


def pod_view_for(pod: Mapping, *, requests: np.ndarray, annotation_key: str,
                 store: ProfileSource | None) -> tuple[PodView, ProfileError | None]:
    """``pod_view`` for a v1.Pod JSON object (name, annotation and workload read from its metadata)."""
    ns, name, _ = pod_key(pod)
    meta = child_map(pod, "metadata")
    ann = child_map(meta, "annotations")
    value = ann.get(annotation_key)
    key_of = store.workload_of if store is not None else workload_key
    return pod_view(name=f"{ns}/{name}", requests=requests, annotation=value if value is None else str(value),
                    workload=key_of(pod), store=store)
