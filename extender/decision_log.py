"""The decision log's writer: a bounded queue the request path drops rows into, and one thread that writes.

The schema, the format and why it is JSON lines are ``policy.decisionlog``'s; this module owns the files.

* Off the request path. ``submit(build, *args)`` puts a builder and its arguments (references, nothing
  copied or encoded) on a bounded ``queue.Queue`` and returns; the writer thread calls ``build(*args)``,
  encodes the row with orjson and appends it. A full queue drops the row and counts it
  (``drsched_extender_decision_log_dropped_total``); it never blocks. The writer reports drops (and write
  errors) through ``Telemetry.report`` at most once per flush, off the request path.
* Files. Segments ``decisions-<UTC start>.jsonl`` in ``directory``, each created exclusively
  (``open(..., "xb")``): an existing file is never opened for writing, so a restart after a crash starts a
  new segment beside the torn one. A segment is closed before it would pass ``max_file_bytes``; then the
  oldest segments are deleted until they and a full new segment fit in ``max_total_bytes``: the log never
  holds more on disk (the open segment is never deleted; a row larger than a segment gets one of its own).
* Loss bound. The writer wakes every ``flush_interval_s`` (sooner when the queue is half full), writes
  every queued row and hands them to the kernel (``flush``), and does the same at stop. A ``kill -9``
  loses what the process still holds: at most the rows submitted in the last ``flush_interval_s`` plus
  the time the writer takes to write one interval's rows (milliseconds in steady state), and it can tear
  the last line, which the reader skips. Rows handed to the kernel survive the process (not a power
  loss: there is no fsync). Tested by SIGKILLing a real writer process and a real extender
  (``tests/integration/extender/test_decision_log_kill.py``).
* Bursts, not a wake-up per row: woken for each row, the writer's GIL hand-offs landed inside every
  request (+0.4-0.7 ms p50 per prioritize at 1,000 nodes in ``bench/bench_shadow.py``); it still offers the
  GIL between rows, so a request waits for one row at most.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from extender.telemetry import Telemetry
from kube.logs import kv
from policy.decisionlog import SEGMENT_GLOB

log = logging.getLogger(__name__)


class DecisionLog:
    """Append rows to rotated JSON-lines segments from one writer thread (module doc)."""

    def __init__(self, *, directory: Path, telemetry: Telemetry, max_file_bytes: int, max_total_bytes: int,
                 flush_interval_s: float, queue_size: int) -> None:
        self.directory = Path(directory)
        self.telemetry = telemetry
        self.max_file_bytes, self.max_total_bytes = max_file_bytes, max_total_bytes
        self.flush_interval_s = flush_interval_s
        self._queue: queue.Queue = queue.Queue(maxsize=queue_size)
        self._half = queue_size // 2
        self._wake = threading.Event()  # set: write what is queued now (half full, or stopping)
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._file: BinaryIO | None = None
        self._path: Path | None = None
        self._size = 0
        self._dropped = self._reported_drops = 0
        self._failed = 0
        m = telemetry.metrics
        self._rows, self._drops, self._bytes = m.decision_log_rows, m.decision_log_dropped, m.decision_log_bytes

    # -- the request path -------------------------------------------------------------------------------
    def submit(self, build: Callable[..., dict[str, Any]], *args: Any) -> bool:
        """Queue one row, built later on the writer thread as ``build(*args)``; False (dropped) when full."""
        try:
            self._queue.put_nowait((build, args))
            if self._queue.qsize() > self._half:
                self._wake.set()
            return True
        except queue.Full:
            self._dropped += 1
            self._drops.inc()
            return False

    # -- life ---------------------------------------------------------------------------------------------
    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._open()
        self._retain()  # segments of earlier runs count too
        self._thread = threading.Thread(target=self._run, name="decision-log", daemon=True)
        self._thread.start()
        log.info("decision log started", extra=kv(path=str(self._path), flush_interval_s=self.flush_interval_s,
                                                  max_total_bytes=self.max_total_bytes))

    def stop(self, timeout: float = 5.0) -> None:
        """Write what is queued, flush and close (waits at most ``timeout`` seconds)."""
        if self._thread is None:
            return
        self._stopping = True
        self._wake.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("decision log stop timed out: rows still queued are lost", extra=kv(path=str(self._path)))
        self._thread = None

    @property
    def path(self) -> Path | None:
        """The segment being written."""
        return self._path

    # -- the writer thread ----------------------------------------------------------------------------------
    def _run(self) -> None:
        # Rows are written in bursts, one per flush interval (or sooner when the queue is half full), not one
        # wake-up per row: waking for each row put the writer's GIL hand-offs inside every request.
        while True:
            self._wake.wait(self.flush_interval_s)
            self._wake.clear()
            while True:
                try:
                    build, args = self._queue.get_nowait()
                except queue.Empty:
                    break
                self._write_one(build, args)
                # Offer the GIL between rows: a request waiting for it then waits for one row at most,
                # not for the switch interval (5 ms).
                time.sleep(0)
            self._flush()
            if self._stopping:
                break
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write_one(self, build: Callable[..., dict[str, Any]], args: tuple) -> None:
        try:
            line = orjson.dumps(build(*args), option=orjson.OPT_SERIALIZE_NUMPY) + b"\n"
        except Exception:  # a bug in a row builder: this row is lost, the log goes on
            self._failed += 1
            log.exception("decision log row not built", extra=kv(builder=getattr(build, "__name__", "?")))
            return
        try:
            if self._size and self._size + len(line) > self.max_file_bytes:
                self._rotate()
            self._file.write(line)
            self._size += len(line)
            self._rows.inc()
        except OSError as exc:
            self._failed += 1
            self.telemetry.report("decision_log_write_failed", f"decision log row lost: {exc.strerror}",
                                  path=str(self._path))

    def _flush(self) -> None:
        try:
            if self._file is not None:
                self._file.flush()
        except OSError as exc:
            self.telemetry.report("decision_log_write_failed", f"decision log flush failed: {exc.strerror}",
                                  path=str(self._path))
        new = self._dropped - self._reported_drops
        if new:
            self._reported_drops = self._dropped
            self.telemetry.report("decision_log_full", "decision log queue full: rows dropped", dropped=new,
                                  total=self._dropped)
        self._bytes.set(self._segments_bytes())

    def _open(self) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
        for n in range(1000):
            path = self.directory / f"decisions-{stamp}{'' if n == 0 else f'-{n:03d}'}.jsonl"
            try:
                self._file = open(path, "xb", buffering=1 << 20)  # noqa: SIM115 -- held open across writes
            except FileExistsError:
                continue
            self._path, self._size = path, 0
            return
        raise FileExistsError(f"{self.directory}: no free segment name for {stamp}")

    def _rotate(self) -> None:
        self._file.close()
        self._open()
        self._retain()

    def _retain(self) -> None:
        """Delete the oldest segments until they and a full open segment fit in ``max_total_bytes``."""
        segs = sorted(self.directory.glob(SEGMENT_GLOB))
        sizes = {p: p.stat().st_size for p in segs}
        total = sum(sizes.values())
        for p in segs:
            if total + self.max_file_bytes <= self.max_total_bytes or p == self._path:
                break
            p.unlink(missing_ok=True)
            total -= sizes[p]
            log.info("decision log segment deleted", extra=kv(path=str(p), bytes=sizes[p], total=total))

    def _segments_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.directory.glob(SEGMENT_GLOB) if p.exists())
