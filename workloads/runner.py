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

from kube.atomic import remove_stale_temps
from kube.logs import kv
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
        log.info("stop requested, checkpointing", extra=kv(signal=signal.Signals(signum).name, grace_s=self.grace))
        self._watchdog = threading.Timer(self.grace, self._expired)
        self._watchdog.daemon = True
        self._watchdog.start()

    def _expired(self) -> None:
        log.error("grace period exceeded before a checkpoint was written, exiting", extra=kv(grace_s=self.grace))
        logging.shutdown()
        os._exit(EXIT_GRACE)

    def cancel(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()


def run(job: Job, settings: RunSettings) -> int:
    """Run ``job`` to completion or to a SIGTERM checkpoint; return the process exit code."""
    stop = _Stop(settings.grace)
    # Installed first, so a SIGTERM during input generation or resume still ends in a clean stop.
    previous = {s: signal.signal(s, stop.handle) for s in (signal.SIGTERM, signal.SIGINT)}
    session = _Session(job, settings, stop)
    try:
        return session.execute()
    except (JobError, OSError) as exc:
        log.error("job failed", extra=kv(kind=job.kind, units_done=session.units, error=exc))
        session.report_failure()
        return EXIT_FAILED
    finally:
        stop.cancel()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if session.server is not None:
            session.server.stop()
        job.close()


class _Session:
    """One process's run of a job: where it resumed, how far it got, its newest checkpoint."""

    def __init__(self, job: Job, settings: RunSettings, stop: _Stop) -> None:
        self.job, self.settings, self.stop = job, settings, stop
        self.units = 0
        self.ckpt: Checkpoint | None = None
        self.reporter: ProgressReporter | None = None
        self.server: ProgressServer | None = None

    def execute(self) -> int:
        job, settings, state_dir = self.job, self.settings, self.settings.state_dir
        state_dir.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(state_dir)
        job.prepare()
        store = CheckpointStore(state_dir, kind=job.kind, fingerprint=fingerprint(job.config()), keep=settings.keep)
        total = job.units_total
        if job.is_complete():
            log.info("output already present, nothing to do", extra=kv(kind=job.kind))
            ProgressReporter(state_dir, kind=job.kind, units_total=total, resumed_from=total).report(
                total, state="done", checkpoint=None, force=True)
            return EXIT_OK

        restoring = time.monotonic()
        self.ckpt = store.load_newest(accept=lambda c: _restore(job, c))
        restore_s = time.monotonic() - restoring if self.ckpt is not None else None
        if self.ckpt is None:
            job.restore(None, 0)
        self.units = self.ckpt.units_done if self.ckpt else 0
        log.info("starting", extra=kv(kind=job.kind, units_done=self.units, units_total=total,
                                      resumed_from=self.ckpt.path.name if self.ckpt else "scratch"))
        self.reporter = ProgressReporter(state_dir, kind=job.kind, units_total=total, resumed_from=self.units,
                                         interval=settings.progress_interval)
        self.reporter.restore_s = None if restore_s is None else round(restore_s, 6)
        if settings.progress_port is not None:
            self.server = ProgressServer(self.reporter, host=settings.progress_host, port=settings.progress_port)
            self.server.start()
        self.reporter.report(self.units, checkpoint=self._ref(), force=True)
        last_ckpt_at = time.monotonic()
        while self.units < total:
            if self.stop.event.is_set():
                return self._checkpoint_and_stop(store)
            job.run_unit(self.units)
            self.units += 1
            if self.units < total and _due(settings, self.units, last_ckpt_at):
                self.ckpt = _save(job, store, self.units, self.reporter)
                last_ckpt_at = time.monotonic()
                self.reporter.report(self.units, checkpoint=self._ref(), force=True)
            else:
                self.reporter.report(self.units, checkpoint=self._ref())
        job.finish()
        self.reporter.report(self.units, state="done", checkpoint=self._ref(), force=True)
        log.info("done", extra=kv(kind=job.kind, units=self.units))
        return EXIT_OK

    def _ref(self) -> CheckpointRef | None:
        return self.ckpt.ref() if self.ckpt else None

    def _checkpoint_and_stop(self, store: CheckpointStore) -> int:
        self.reporter.report(self.units, state="checkpointing", checkpoint=self._ref(), force=True)
        if self.ckpt is None or self.ckpt.units_done != self.units:
            self.ckpt = _save(self.job, store, self.units, self.reporter)
        self.reporter.report(self.units, state="checkpointing", checkpoint=self._ref(), force=True)
        log.info("stopped at a checkpoint", extra=kv(units_done=self.units))
        return EXIT_OK

    def report_failure(self) -> None:
        if self.reporter is None:
            return  # failed before resuming: no progress of this process to report
        try:
            self.reporter.report(self.units, state="failed", checkpoint=self._ref(), force=True)
        except OSError:
            log.exception("could not report the failure")


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


def _save(job: Job, store: CheckpointStore, units: int, reporter: ProgressReporter) -> Checkpoint:
    started = time.monotonic()
    ckpt = store.save(units, job.snapshot())
    took = time.monotonic() - started
    reporter.checkpoint_written(took)
    log.info("checkpoint written", extra=kv(units_done=units, path=ckpt.path.name, took_ms=round(took * 1e3, 1)))
    return ckpt
