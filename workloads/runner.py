"""Drives one job to completion across kills: resume, run units, checkpoint, react to SIGTERM, finish.

Ordering rules that make the guarantees hold (see README "Guarantees"):

* A checkpoint is saved (durably) *before* progress.json reports the units it covers, so whenever
  progress says ``units_done = r`` the newest checkpoint covers at least ``r - interval`` units.
* SIGTERM/SIGINT only set a flag; the loop notices it at the next unit boundary, writes a checkpoint of
  that consistent state, reports ``state="checkpointing"`` and exits 0. A watchdog started by the
  signal exits with ``EXIT_GRACE`` if that takes longer than ``--grace`` (no checkpoint is half-written:
  they are all atomic), so the kubelet's SIGKILL never meets an unfinished, undetectable checkpoint.
* The final output's atomic appearance is the commit point: a rerun with the output present is a no-op.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from workloads.atomic import remove_stale_temps
from workloads.checkpoint import Checkpoint, CheckpointRejectedError, CheckpointStore, fingerprint
from workloads.jobs.base import Job, JobError, StateRejected
from workloads.progress import CheckpointRef
from workloads.reporter import ProgressReporter, ProgressServer

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_GRACE = 3
"""The SIGTERM grace period ran out before a checkpoint was written; the previous checkpoint stands."""


@dataclass(frozen=True)
class RunSettings:
    state_dir: Path
    checkpoint_every: float = 10.0
    """Seconds between periodic checkpoints (0: off)."""
    checkpoint_units: int = 0
    """Units between periodic checkpoints (0: off)."""
    keep: int = 3
    """Checkpoint files kept."""
    grace: float = 20.0
    """Seconds allowed from SIGTERM to the final checkpoint."""
    progress_interval: float = 0.25
    """Minimum seconds between unforced progress.json writes."""
    progress_port: int | None = None
    """Serve progress over HTTP on this port (0: any free port)."""
    progress_host: str = "0.0.0.0"


class _Stop:
    """Set by SIGTERM/SIGINT; arms the grace watchdog once."""

    def __init__(self, grace: float) -> None:
        self.grace = grace
        self.event = threading.Event()
        self._watchdog: threading.Timer | None = None

    def handle(self, signum: int, _frame) -> None:
        if self.event.is_set():
            return
        self.event.set()
        log.info("stop requested, checkpointing signal=%s grace_s=%.1f", signal.Signals(signum).name, self.grace)
        self._watchdog = threading.Timer(self.grace, self._expired)
        self._watchdog.daemon = True
        self._watchdog.start()

    def _expired(self) -> None:
        log.error("grace period exceeded before a checkpoint was written, exiting grace_s=%.1f", self.grace)
        logging.shutdown()
        os._exit(EXIT_GRACE)

    def cancel(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()


def run(job: Job, settings: RunSettings) -> int:
    state_dir = settings.state_dir
    state_dir.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(state_dir)
    job.prepare()
    store = CheckpointStore(state_dir, kind=job.kind, fingerprint=fingerprint(job.config()), keep=settings.keep)
    total = job.units_total

    if job.is_complete():
        log.info("output already present, nothing to do kind=%s", job.kind)
        ProgressReporter(state_dir, kind=job.kind, units_total=total, resumed_from=total).report(
            total, state="done", checkpoint=None, force=True)
        return EXIT_OK

    ckpt = store.load_newest(accept=lambda c: _restore(job, c))
    if ckpt is None:
        job.restore(None, 0)
    units = ckpt.units_done if ckpt else 0
    ref: CheckpointRef | None = ckpt.ref() if ckpt else None
    log.info("starting kind=%s units_done=%d units_total=%d resumed_from=%s", job.kind, units, total,
             ckpt.path.name if ckpt else "scratch")

    reporter = ProgressReporter(state_dir, kind=job.kind, units_total=total, resumed_from=units,
                                interval=settings.progress_interval)
    server = None
    stop = _Stop(settings.grace)
    previous = {s: signal.signal(s, stop.handle) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        if settings.progress_port is not None:
            server = ProgressServer(reporter, host=settings.progress_host, port=settings.progress_port)
            server.start()
        reporter.report(units, checkpoint=ref, force=True)
        last_ckpt_at = time.monotonic()
        while units < total:
            if stop.event.is_set():
                return _checkpoint_and_stop(job, store, reporter, units, ckpt)
            job.run_unit(units)
            units += 1
            if units < total and _due(settings, units, last_ckpt_at):
                ckpt = _save(job, store, units)
                ref, last_ckpt_at = ckpt.ref(), time.monotonic()
                reporter.report(units, checkpoint=ref, force=True)
            else:
                reporter.report(units, checkpoint=ref)
        job.finish()
        reporter.report(units, state="done", checkpoint=ref, force=True)
        log.info("done kind=%s units=%d", job.kind, units)
        return EXIT_OK
    except (JobError, OSError) as exc:
        log.error("job failed kind=%s units_done=%d error=%s", job.kind, units, exc)
        try:
            reporter.report(units, state="failed", checkpoint=ref, force=True)
        except OSError:
            log.exception("could not report the failure")
        return EXIT_FAILED
    finally:
        stop.cancel()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if server is not None:
            server.stop()
        job.close()


def _restore(job: Job, ckpt: Checkpoint) -> None:
    try:
        job.restore(ckpt.state, ckpt.units_done)
    except StateRejected as exc:
        raise CheckpointRejectedError(ckpt.path, str(exc)) from None
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointRejectedError(ckpt.path, f"state not understood ({exc!r})") from None


def _due(settings: RunSettings, units: int, last_ckpt_at: float) -> bool:
    if settings.checkpoint_units and units % settings.checkpoint_units == 0:
        return True
    return bool(settings.checkpoint_every) and time.monotonic() - last_ckpt_at >= settings.checkpoint_every


def _save(job: Job, store: CheckpointStore, units: int) -> Checkpoint:
    started = time.monotonic()
    ckpt = store.save(units, job.snapshot())
    log.info("checkpoint written units_done=%d path=%s took_ms=%.1f", units, ckpt.path.name,
             (time.monotonic() - started) * 1e3)
    return ckpt


def _checkpoint_and_stop(job: Job, store: CheckpointStore, reporter: ProgressReporter, units: int,
                         ckpt: Checkpoint | None) -> int:
    reporter.report(units, state="checkpointing", checkpoint=ckpt.ref() if ckpt else None, force=True)
    if ckpt is None or ckpt.units_done != units:
        ckpt = _save(job, store, units)
    reporter.report(units, state="checkpointing", checkpoint=ckpt.ref(), force=True)
    log.info("stopped at a checkpoint units_done=%d", units)
    return EXIT_OK
