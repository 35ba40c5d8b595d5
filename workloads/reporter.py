"""Publishes a job's ``Progress`` (the contract in ``workloads.progress``) to its file and, optionally, HTTP.

The reporter owns the only mutable progress state of a process: the smoothed rate and the latest
document. ``report`` is called by the runner after every unit; it rewrites ``progress.json`` at most
every ``interval`` seconds unless forced (state changes and checkpoints always force a write), because
each write costs an fsync. The HTTP server, when enabled, serves the latest document from memory.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from kube.atomic import atomic_write
from kube.logs import kv
from workloads.progress import PROGRESS_FILE, CheckpointRef, Progress, WriteTimes

log = logging.getLogger(__name__)

RATE_SMOOTHING = 0.3
"""Weight of the newest rate sample in the exponential moving average."""


class ProgressReporter:
    def __init__(self, state_dir: Path, *, kind: str, units_total: int, resumed_from: int,
                 interval: float = 0.25, clock=time.time) -> None:
        self.path = Path(state_dir) / PROGRESS_FILE
        self.kind = kind
        self.units_total = units_total
        self.resumed_from = resumed_from
        self.interval = interval
        self._clock = clock
        self.started_at = clock()
        self._last_write = -float("inf")
        self._rate_at = (self.started_at, resumed_from)
        self._rate: float | None = None
        self._lock = threading.Lock()
        self._latest: Progress | None = None
        self.restore_s: float | None = None
        self._writes: list[float] = []

    def checkpoint_written(self, seconds: float) -> None:
        """Note one checkpoint write's duration; the next report carries the count, last and mean."""
        self._writes.append(max(seconds, 0.0))

    def _write_times(self) -> WriteTimes | None:
        w = self._writes
        return WriteTimes(last=round(w[-1], 6), mean=round(sum(w) / len(w), 6)) if w else None

    def _update_rate(self, now: float, units_done: int) -> float:
        then, units_then = self._rate_at
        if now - then >= 1e-3 and units_done > units_then:
            sample = (units_done - units_then) / (now - then)
            self._rate = sample if self._rate is None else RATE_SMOOTHING * sample + (1 - RATE_SMOOTHING) * self._rate
            self._rate_at = (now, units_done)
        return self._rate or 0.0

    def report(self, units_done: int, *, state: str = "running", checkpoint: CheckpointRef | None,
               force: bool = False) -> Progress | None:
        """Record progress; write the file if forced or ``interval`` has passed. Returns what was written."""
        now = self._clock()
        if not force and now - self._last_write < self.interval:
            return None
        doc = Progress(kind=self.kind, units_done=units_done, units_total=self.units_total,
                       progress=units_done / self.units_total, rate=self._update_rate(now, units_done),
                       started_at=self.started_at, updated_at=now, checkpoint=checkpoint, state=state,
                       pid=os.getpid(), resumed_from=self.resumed_from, restore_s=self.restore_s,
                       checkpoint_writes=len(self._writes), checkpoint_write_s=self._write_times())
        with self._lock:
            atomic_write(self.path, doc.to_json().encode())
            self._latest = doc
        self._last_write = now
        return doc

    def latest_json(self) -> bytes | None:
        with self._lock:
            return None if self._latest is None else self._latest.to_json().encode()


class ProgressServer:
    """Serves ``GET /progress`` (and ``/``) with the reporter's latest document; 503 before the first one."""

    def __init__(self, reporter: ProgressReporter, *, host: str, port: int) -> None:
        handler = _handler_for(reporter)
        self._httpd = ThreadingHTTPServer((host, port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="progress-http", daemon=True)

    def start(self) -> None:
        self._thread.start()
        log.info("serving progress over HTTP", extra=kv(port=self.port))

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _handler_for(reporter: ProgressReporter) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server naming)
            if self.path not in ("/", "/progress"):
                self.send_error(404)
                return
            body = reporter.latest_json()
            if body is None:
                self.send_error(503, "no progress yet")
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args) -> None:  # noqa: A002 (http.server signature)
            log.debug("http request", extra=kv(line=format % args))

    return Handler
