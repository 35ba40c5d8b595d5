"""Workload profile stores: the interface every store implements, the learned one the extender serves from
(and where it persists), and a plain one.

``ProfileStore`` is that interface, complete: the request path, the watch, the debug routes and the
static loader call its methods directly, never probing a store for what it has.

``LearnedProfileStore`` owns every workload's ``Profile`` (``extender.profile_learning``) behind one lock:
the usage poller folds pod readings in (``observe``), the request path and the watch threads read
(``get``), the debug routes list them (``describe``). It also decides how a pod maps to a workload key
(``workload_of``): the ``drsched.io/workload`` label, else every label in ``workload_labels`` (when the
pod has them all: ``namespace/Labels/k=v,k2=v2``), else the controller owner (``objects.workload_key``).

Persistence goes through a ``ProfileBackend`` (``load`` / ``save`` of the whole map). ``JsonFileBackend``
writes one JSON file atomically (temp file in the same directory, fsync, rename); a ConfigMap backend
would implement the same two methods with a get and a replace. **A file that cannot be read or parsed**
is logged, counted (``drsched_extender_profile_store_errors_total{op="load"}``), moved aside to
``<path>.corrupt-<unix time>`` and the store starts empty: losing learned profiles costs a few minutes of
learning, refusing to start would cost scheduling. A failed save is logged and counted, and retried at
the next save interval.

Static profiles (the static cluster's ``profiles``) are ``put`` as seeds: served as they are until a
learned profile for the same workload is trusted. Seeds are not persisted.

``InMemoryProfileStore`` is a plain thread-safe dict of workload -> demand, for tests and callers that learn
nothing: pods map to ``kube.objects.workload_key``, every annotation is believed. Both are ``ProfileStore``s.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from prometheus_client import CollectorRegistry, Counter, Gauge

from extender.annotation_trust import AnnotationTrust
from extender.errors import ExtenderError
from extender.profile_learning import PodSample, Profile, aggregate, served_demand, trusted, update
from kube.atomic import atomic_write
from kube.logs import kv
from kube.objects import WORKLOAD_LABEL, child_map, workload_key
from kube.profiles import ProfileSource, checked_demand

log = logging.getLogger(__name__)
FORMAT_VERSION = 1


@runtime_checkable
class ProfileStore(ProfileSource, Protocol):
    """Every profile store of the extender: ``kube.profiles.ProfileSource`` (``workload_of``, ``get``,
    ``judge_annotation``: what reading a pod's demand asks) plus seeding, listing and counting."""

    def put(self, workload: str, demand: np.ndarray) -> None:
        """A static seed for ``workload`` (``kube.errors.ProfileError`` unless 4 finite values >= 0)."""
        ...

    def describe(self, workload: str | None = None) -> dict[str, dict[str, Any]]:
        """Every profile (or ``workload``'s) for a person to read: ``served`` demand and its ``source``."""
        ...

    def __len__(self) -> int: ...


class ProfileStoreError(ExtenderError):
    """The persisted profiles could not be read (the store starts empty) or written (retried later)."""


class ProfileMetrics:
    """The profile series, on the app's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.profiles = Gauge("drsched_extender_profiles", "Learned workload profiles by state (trusted, learning)",
                              ["state"], registry=registry)
        self.samples = Counter("drsched_extender_profile_samples_total",
                               "Workload samples folded into learned profiles", registry=registry)
        self.errors = Counter("drsched_extender_profile_store_errors_total",
                              "Profile persistence failures by operation (load, save)", ["op"], registry=registry)


class ProfileBackend(Protocol):
    """Where profiles persist. ``load`` raises ``ProfileStoreError`` for unreadable content."""

    def load(self) -> dict[str, Profile]: ...

    def save(self, profiles: Mapping[str, Profile], *, now: float) -> None: ...

    def quarantine(self, *, now: float) -> str | None: ...


def encode(profiles: Mapping[str, Profile], *, now: float) -> str:
    body = {"version": FORMAT_VERSION, "saved_at": now,
            "profiles": {k: p.as_dict() for k, p in sorted(profiles.items())}}
    return json.dumps(body, indent=1, allow_nan=False)


def decode(text: str) -> dict[str, Profile]:
    """Parse the file format; raises ``ProfileStoreError`` naming the first problem."""
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProfileStoreError(f"not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(body, dict) or body.get("version") != FORMAT_VERSION:
        raise ProfileStoreError(f"not a version-{FORMAT_VERSION} profile file")
    raw = body.get("profiles")
    if not isinstance(raw, dict):
        raise ProfileStoreError("'profiles' must be an object")
    out = {}
    for key, p in raw.items():
        try:
            demand = [float("nan") if d is None else float(d) for d in p["demand"]]
            samples = [int(n) for n in p["samples"]]
            if len(demand) != 4 or len(samples) != 4 or any(n < 0 for n in samples):
                raise ValueError("4 demands and 4 sample counts >= 0")
            if any(np.isfinite(d) and d < 0 for d in demand) or any(np.isinf(d) for d in demand):
                raise ValueError("demands must be finite and >= 0")
            out[str(key)] = Profile(demand=tuple(demand), samples=tuple(samples), first_seen=float(p["first_seen"]),
                                    updated_at=float(p["updated_at"]), pods=int(p.get("pods", 0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise ProfileStoreError(f"profile {key!r}: {exc}") from None
    return out


class JsonFileBackend:
    """Profiles in one JSON file (see the module docstring for the atomic write)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def load(self) -> dict[str, Profile]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise ProfileStoreError(f"{self.path}: cannot read: {exc}") from None
        try:
            return decode(text)
        except ProfileStoreError as exc:
            raise ProfileStoreError(f"{self.path}: {exc}") from None

    def save(self, profiles: Mapping[str, Profile], *, now: float) -> None:
        text = encode(profiles, now=now)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, text.encode())

    def quarantine(self, *, now: float) -> str | None:
        target = self.path.with_name(f"{self.path.name}.corrupt-{int(now)}")
        try:
            os.replace(self.path, target)
        except OSError:
            return None
        return str(target)


class LearnedProfileStore:
    """Thread-safe map of workload key -> ``Profile`` plus static seeds; see the module docstring."""

    def __init__(self, *, min_samples: int = 6, half_life_s: float = 600.0, workload_labels: Iterable[str] = (),
                 backend: ProfileBackend | None = None, ttl_s: float = 7 * 86400.0, max_profiles: int = 10_000,
                 metrics: ProfileMetrics | None = None, trust: AnnotationTrust | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.min_samples, self.half_life_s = min_samples, half_life_s
        self.workload_labels = tuple(workload_labels)
        self.backend, self.ttl_s, self.max_profiles = backend, ttl_s, max_profiles
        self.metrics, self._clock = metrics, clock
        self._lock = threading.Lock()
        self._profiles: dict[str, Profile] = {}
        self._seeds: dict[str, np.ndarray] = {}
        self._dirty = False
        self.trust = trust  # None: every annotation is believed

    # -- keys ----------------------------------------------------------------------------------------
    def workload_of(self, pod: Mapping) -> str | None:
        """The workload key of a v1.Pod JSON object (None: a standalone pod, nothing to learn or serve)."""
        meta = child_map(pod, "metadata")
        labels = child_map(meta, "labels")
        if self.workload_labels and not labels.get(WORKLOAD_LABEL) and all(
                labels.get(k) for k in self.workload_labels):
            ns = str(meta.get("namespace") or "default")
            return f"{ns}/Labels/" + ",".join(f"{k}={labels[k]}" for k in self.workload_labels)
        return workload_key(pod)

    # -- serving -------------------------------------------------------------------------------------
    def get(self, workload: str) -> np.ndarray | None:
        with self._lock:
            p = self._profiles.get(workload)
            seed = self._seeds.get(workload)
        if p is not None:
            demand = served_demand(p, self.min_samples)
            if demand is not None:
                return demand
        return seed

    def judge_annotation(self, *, pod: str, workload: str, claim: np.ndarray, requests: np.ndarray
                         ) -> np.ndarray | None:
        """The trusted learned demand to serve instead of an annotation's ``claim``, or None to believe it
        (``self.trust``, an ``extender.annotation_trust.AnnotationTrust``, decides; seeds never overrule)."""
        if self.trust is None:
            return None
        with self._lock:
            p = self._profiles.get(workload)
        learned = served_demand(p, self.min_samples) if p is not None else None
        return self.trust.judge(pod=pod, workload=workload, claim=claim, learned=learned, requests=requests)

    def put(self, workload: str, demand: np.ndarray) -> None:
        """A static seed (served until a learned profile for ``workload`` is trusted)."""
        demand = checked_demand(workload, demand)
        with self._lock:
            self._seeds[workload] = demand

    def __len__(self) -> int:
        with self._lock:
            return len(self._profiles.keys() | self._seeds.keys())

    def describe(self, workload: str | None = None) -> dict[str, dict[str, Any]]:
        """Every profile (or one) for the debug routes: learned state, trust, what would be served."""
        with self._lock:
            keys = [workload] if workload is not None else sorted(self._profiles.keys() | self._seeds.keys())
            rows = {k: (self._profiles.get(k), self._seeds.get(k)) for k in keys}
        out = {}
        for key, (p, seed) in rows.items():
            if p is None and seed is None:
                continue
            served = self.get(key)
            entry: dict = {"served": None if served is None else [round(float(x), 6) for x in served],
                           "source": ("learned" if p is not None and trusted(p, self.min_samples)
                                      else "static" if seed is not None else "learning")}
            if p is not None:
                entry["learned"] = {**p.as_dict(), "trusted": trusted(p, self.min_samples)}
            if seed is not None:
                entry["static"] = [round(float(x), 6) for x in seed]
            out[key] = entry
        return out

    # -- learning ------------------------------------------------------------------------------------
    def observe(self, samples: Iterable[PodSample], workload_of_uid: Callable[[str], str | None]) -> int:
        """Fold one poll's pod readings in; returns how many workloads were updated."""
        groups = aggregate(samples, workload_of_uid)
        if not groups:
            return 0
        with self._lock:
            for key, (mean, pods, at) in groups.items():
                self._profiles[key] = update(self._profiles.get(key), mean, pods=pods, at=at,
                                             half_life_s=self.half_life_s)
            self._dirty = True
        if self.metrics is not None:
            self.metrics.samples.inc(len(groups))
            self._gauge()
        return len(groups)

    def _gauge(self) -> None:
        with self._lock:
            n_trusted = sum(trusted(p, self.min_samples) for p in self._profiles.values())
            total = len(self._profiles)
        self.metrics.profiles.labels(state="trusted").set(n_trusted)
        self.metrics.profiles.labels(state="learning").set(total - n_trusted)

    def _prune(self, now: float) -> None:
        """Drop profiles not updated for ``ttl_s``, then the least recently updated over ``max_profiles``."""
        old = [k for k, p in self._profiles.items() if now - p.updated_at > self.ttl_s]
        for k in old:
            del self._profiles[k]
        if len(self._profiles) > self.max_profiles:
            by_age = sorted(self._profiles, key=lambda k: self._profiles[k].updated_at)
            for k in by_age[: len(self._profiles) - self.max_profiles]:
                del self._profiles[k]

    # -- persistence ---------------------------------------------------------------------------------
    def load(self) -> int:
        """Read the backend; a corrupt file is logged, counted, moved aside, and the store starts empty."""
        if self.backend is None:
            return 0
        now = self._clock()
        try:
            loaded = self.backend.load()
        except ProfileStoreError as exc:
            moved = self.backend.quarantine(now=now)
            log.error("learned profiles unreadable, starting empty", extra=kv(error=str(exc), moved_to=moved))
            if self.metrics is not None:
                self.metrics.errors.labels(op="load").inc()
            return 0
        with self._lock:
            self._profiles = loaded
            self._prune(now)
            n = len(self._profiles)
        if self.metrics is not None:
            self._gauge()
        log.info("learned profiles loaded", extra=kv(profiles=n))
        return n

    def save(self, *, force: bool = False) -> bool:
        """Write the profiles if anything changed (or ``force``); False (logged, counted) when it failed."""
        if self.backend is None:
            return True
        now = self._clock()
        with self._lock:
            if not (self._dirty or force):
                return True
            self._prune(now)
            profiles = dict(self._profiles)
            self._dirty = False
        try:
            self.backend.save(profiles, now=now)
        except (OSError, ValueError) as exc:
            with self._lock:
                self._dirty = True
            log.warning("learned profiles not saved", extra=kv(error=repr(exc)))
            if self.metrics is not None:
                self.metrics.errors.labels(op="save").inc()
            return False
        return True


class ProfileLearner:
    """What the usage poller calls after each poll: fold the pod readings in, save now and then."""

    def __init__(self, store: LearnedProfileStore, workload_of_uid: Callable[[str], str | None], *,
                 save_interval_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.store, self.workload_of_uid = store, workload_of_uid
        self.save_interval_s, self._clock = save_interval_s, clock
        self._last_save = clock()

    async def after_poll(self, samples: list[PodSample]) -> None:
        self.store.observe(samples, self.workload_of_uid)
        if self._clock() - self._last_save >= self.save_interval_s:
            self._last_save = self._clock()
            await asyncio.to_thread(self.store.save)

    async def close(self) -> None:
        await asyncio.to_thread(self.store.save)


class InMemoryProfileStore:
    """A thread-safe dict of workload -> (4,) demand (tests, and callers that learn nothing)."""

    def __init__(self, profiles: Mapping[str, np.ndarray] | None = None) -> None:
        self._lock = threading.Lock()
        self._profiles = {k: np.asarray(v, dtype=np.float64) for k, v in (profiles or {}).items()}

    def workload_of(self, pod: Mapping) -> str | None:
        return workload_key(pod)

    def get(self, workload: str) -> np.ndarray | None:
        with self._lock:
            return self._profiles.get(workload)

    def judge_annotation(self, *, pod: str, workload: str, claim: np.ndarray, requests: np.ndarray
                         ) -> np.ndarray | None:
        return None  # nothing learned to hold a claim against

    def put(self, workload: str, demand: np.ndarray) -> None:
        demand = checked_demand(workload, demand)
        with self._lock:
            self._profiles[workload] = demand

    def describe(self, workload: str | None = None) -> dict[str, dict[str, Any]]:
        """As ``LearnedProfileStore.describe``: every profile here is a static one."""
        with self._lock:
            rows = {k: v for k, v in sorted(self._profiles.items()) if workload is None or k == workload}
        return {k: {"served": [round(float(x), 6) for x in v], "source": "static",
                    "static": [round(float(x), 6) for x in v]} for k, v in rows.items()}

    def __len__(self) -> int:
        with self._lock:
            return len(self._profiles)
