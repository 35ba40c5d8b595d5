"""Where a job's progress comes from, and how one progress report becomes the rule's ``RunningJob``.

Why it exists: the controller must learn how far each opted-in job is without mounting its volume. The
document is always the progress contract of ``workloads.progress`` (schema 1, parsed by its strict
``parse_progress``); only the transport is pluggable (``ProgressSource``):

* ``AnnotationSource`` -- the pod annotation ``drsched.io/progress`` holds the JSON document. Written by a
  sidecar (or, in the KWOK e2e tests, by the test itself, which plays the job).
* ``HttpSource`` -- ``GET http://<status.podIP>:<port>/progress``, the workloads' ``--progress-port``
  endpoint; the port comes from the pod annotation ``drsched.io/progress-port`` (else ``default_port``).
* ``AutoSource`` -- the annotation when the pod has one, else HTTP when a port is known (the default).

A pod whose progress cannot be used is *skipped with a counted reason* (``SkipReason``), never a crash:
no document yet, garbled, a bad field, stale, unreachable, or a job that is not running. The module owns
no state except ``ExpectedRates`` (the highest rate seen per job, the fallback for its expected rate).
"""

from __future__ import annotations

import math
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from migration.errors import MigrationError
from policy.migrate import RunningJob
from policy.state import PodView
from workloads.progress import (
    Progress,
    ProgressDecodeError,
    ProgressError,
    ProgressFieldError,
    ProgressMissingError,
    parse_progress,
)

PROGRESS_ANNOTATION = "drsched.io/progress"
PORT_ANNOTATION = "drsched.io/progress-port"
EXPECTED_DURATION_ANNOTATION = "drsched.io/expected-duration"
"""Seconds the job takes alone on an idle node; sets its expected rate (else: the highest rate seen)."""
RESTORE_COST_ANNOTATION = "drsched.io/restore-cost"
"""Seconds from stopping on the source to progressing on a target (else: the controller's default)."""


class SkipReason(StrEnum):
    """Why an opted-in pod was not offered to the rule this cycle (``drsched_migration_skipped_total``)."""

    NO_PROGRESS = "no-progress"              # no document yet (annotation absent, no port, 404)
    GARBLED_PROGRESS = "garbled-progress"    # not a JSON object
    BAD_PROGRESS = "bad-progress"            # a field missing, of the wrong type or out of range
    STALE_PROGRESS = "stale-progress"        # updated_at older than the staleness limit
    UNREACHABLE = "progress-unreachable"     # the HTTP endpoint did not answer
    JOB_NOT_RUNNING = "job-not-running"      # progress state done / failed / checkpointing
    NOT_RUNNING = "pod-not-running"          # pod phase is not Running, or it has no node
    NODE_NOT_READY = "node-not-ready"        # its node's Ready condition is not True (e.g. a dead kubelet)
    TERMINATING = "terminating"              # the pod is being deleted
    HAS_CONTROLLER = "has-controller"        # owned by a controller (a Job, ReplicaSet) that would recreate it
    IN_FLIGHT = "in-flight"                  # a migration of this job is in progress
    BAD_REQUESTS = "bad-requests"            # its resource requests do not parse


class ProgressUnavailable(MigrationError):
    """The source could not deliver a document: the job is skipped this cycle; ``reason`` is the counted skip
    reason."""

    def __init__(self, reason: SkipReason, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class ProgressSource(Protocol):
    name: str

    def read(self, pod: Mapping) -> Progress:
        """The pod's progress; raises ``ProgressError`` (bad document) or ``ProgressUnavailable``."""
        ...


def _meta(pod: Mapping) -> Mapping:
    return pod.get("metadata") or {}


def _where(pod: Mapping, what: str) -> str:
    meta = _meta(pod)
    return f"pod {meta.get('namespace', 'default')}/{meta.get('name', '?')} {what}"


@dataclass(frozen=True)
class AnnotationSource:
    """The progress JSON in a pod annotation."""

    key: str = PROGRESS_ANNOTATION
    name: str = "annotation"

    def has(self, pod: Mapping) -> bool:
        return self.key in (_meta(pod).get("annotations") or {})

    def read(self, pod: Mapping) -> Progress:
        value = (_meta(pod).get("annotations") or {}).get(self.key)
        where = _where(pod, f"annotation {self.key}")
        if value is None:
            raise ProgressMissingError(where, None, "no such annotation")
        return parse_progress(value, path=where)


@dataclass(frozen=True)
class HttpSource:
    """``GET /progress`` on the pod IP (the workloads' ``--progress-port``)."""

    port_annotation: str = PORT_ANNOTATION
    default_port: int | None = None
    timeout_s: float = 2.0
    name: str = "http"

    def port(self, pod: Mapping) -> int | None:
        raw = (_meta(pod).get("annotations") or {}).get(self.port_annotation)
        if raw is None:
            return self.default_port
        try:
            port = int(raw)
        except (TypeError, ValueError):
            return None
        return port if 0 < port < 65536 else None

    def read(self, pod: Mapping) -> Progress:
        port = self.port(pod)
        ip = (pod.get("status") or {}).get("podIP")
        where = _where(pod, "GET /progress")
        if port is None:
            raise ProgressMissingError(where, None, f"no usable {self.port_annotation} annotation")
        if not ip:
            raise ProgressUnavailable(SkipReason.UNREACHABLE, f"{where}: the pod has no IP yet")
        url = f"http://{ip}:{port}/progress"
        try:
            with urllib.request.urlopen(url, timeout=self.timeout_s) as resp:  # noqa: S310 (pod network)
                body = resp.read()
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                raise ProgressMissingError(url, None, "404: no progress yet") from None
            raise ProgressUnavailable(SkipReason.UNREACHABLE, f"{url}: HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise ProgressUnavailable(SkipReason.UNREACHABLE, f"{url}: {exc}") from None
        return parse_progress(body, path=url)


@dataclass(frozen=True)
class AutoSource:
    """The annotation when present, else HTTP."""

    annotation: AnnotationSource = AnnotationSource()
    http: HttpSource = HttpSource()
    name: str = "auto"

    def read(self, pod: Mapping) -> Progress:
        if self.annotation.has(pod) or self.http.port(pod) is None:
            return self.annotation.read(pod)
        return self.http.read(pod)


def make_source(kind: str, *, annotation: str = PROGRESS_ANNOTATION, default_port: int | None = None,
                timeout_s: float = 2.0) -> ProgressSource:
    """The source named by the ``progress_source`` setting: annotation, http or auto."""
    ann = AnnotationSource(key=annotation)
    http = HttpSource(default_port=default_port, timeout_s=timeout_s)
    return {"annotation": ann, "http": http, "auto": AutoSource(annotation=ann, http=http)}[kind]


def read_or_skip(source: ProgressSource, pod: Mapping, *, now: float,
                 stale_after_s: float) -> tuple[Progress | None, SkipReason | None, str]:
    """(progress, None, "") or (None, reason, detail): every way a document can be unusable, as a reason."""
    try:
        progress = source.read(pod)
    except ProgressMissingError as exc:
        return None, SkipReason.NO_PROGRESS, str(exc)
    except ProgressDecodeError as exc:
        return None, SkipReason.GARBLED_PROGRESS, str(exc)
    except ProgressFieldError as exc:
        return None, SkipReason.BAD_PROGRESS, str(exc)
    except ProgressError as exc:
        return None, SkipReason.BAD_PROGRESS, str(exc)
    except ProgressUnavailable as exc:
        return None, exc.reason, exc.detail
    if now - progress.updated_at > stale_after_s:
        return None, SkipReason.STALE_PROGRESS, f"updated {now - progress.updated_at:.0f}s ago > {stale_after_s:g}s"
    if progress.state != "running":
        return None, SkipReason.JOB_NOT_RUNNING, f"state {progress.state}"
    return progress, None, ""


class ExpectedRates:
    """Highest rate (progress/s) seen per job: the expected rate of a job with no duration annotation."""

    def __init__(self) -> None:
        self._best: dict[str, float] = {}

    def observe(self, job: str, rate: float) -> float:
        best = max(self._best.get(job, 0.0), rate)
        self._best[job] = best
        return best

    def forget(self, keep: set[str]) -> None:
        for job in [j for j in self._best if j not in keep]:
            del self._best[job]


def _annotation_float(pod: Mapping, key: str) -> float | None:
    raw = (_meta(pod).get("annotations") or {}).get(key)
    try:
        value = float(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None
    return value if value is not None and math.isfinite(value) and value > 0 else None


def running_job(*, job: str, pod: Mapping, node: str, progress: Progress, view: PodView, now: float,
                rates: ExpectedRates, default_restore_cost_s: float, checkpointed: bool = True) -> RunningJob:
    """The rule's record of one job from its progress report (rates in progress fraction per second).

    expected rate: 1 / ``drsched.io/expected-duration`` when annotated, else the highest rate seen for the job
    (a job slow from its first report is then never "slow": annotate it). The checkpoint's share is
    ``checkpoint.units_done / units_total``; no checkpoint (or ``checkpointed=False``: the successor starts
    from scratch, setting ``resume``) means a move loses everything since the start.
    """
    total = float(progress.units_total)
    rate = progress.rate / total
    duration = _annotation_float(pod, EXPECTED_DURATION_ANNOTATION)
    seen = rates.observe(job, rate)
    expected = 1.0 / duration if duration else seen
    ckpt = progress.checkpoint.units_done / total if checkpointed and progress.checkpoint is not None else 0.0
    restore = _annotation_float(pod, RESTORE_COST_ANNOTATION) or default_restore_cost_s
    return RunningJob(job_id=job, node=node, progress=progress.progress, rate=rate,
                      expected_rate=max(expected, 1e-12), running_for=max(now - progress.started_at, 0.0),
                      checkpoint_progress=min(ckpt, progress.progress), restore_cost=restore, pod=view)
