"""The data source of the pulling net job: streams chunks of the deterministic data to whoever asks.

Why it exists: a net job that pushes to a sink in its own pod crosses no shaped link, so where it runs cannot
change its speed. A job that pulls from this source, run outside the pod (``python -m workloads source`` on the
host, as the lab starts it), moves every byte through its own node's link (``harness.nodenet`` shapes what
enters a node's pods), so placement decides how fast it goes.

Wire protocol (client → source), one JSON line per request::

    {"seed": S, "chunk_bytes": N, "first": I, "count": C}
        → {"ok": true, "seed": S, "chunk_bytes": N, "first": I, "count": C} then C * N raw bytes:
          chunks I .. I+C-1 of seed S (``workloads.jobs.data.chunk``), back to back
    anything else → {"ok": false, "error": "..."} and the connection closes

``first`` is the offset in chunks, so a resumed job asks for the rest from its checkpoint. A connection may
send further requests after a reply has been read in full. Stateless: a request names everything the answer
depends on, so any source process answers any job the same, and a job that moves to another node just asks
again. The source verifies nothing of the client's; the client verifies every chunk against the seed
(``workloads.jobs.net``). Refusals are logged one line each and counted (``SourceServer.counts``).
"""

from __future__ import annotations

import json
import logging
import socketserver
import threading
from collections import Counter
from dataclasses import asdict, dataclass

from kube.logs import kv
from workloads.jobs.data import chunk
from workloads.tcpserver import BackgroundTCPServer

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 1024
"""A request line longer than this is refused (a real one is under 100 bytes)."""
MAX_CHUNK_BYTES = 16 << 20
MAX_REPLY_BYTES = 16 << 30
"""The most one request may ask for (count x chunk_bytes): 16 GiB, far above any job, far below forever."""
IDLE_TIMEOUT_S = 60.0
"""The default of ``SourceServer.idle_timeout_s``: a connection that sends no complete request (refused), or
reads nothing of its reply (dropped), this long is closed."""
_FIELDS = ("seed", "chunk_bytes", "first", "count")


class SourceRequestError(ValueError):
    """A request the source refuses; sent back as ``{"ok": false, "error": ...}``."""


@dataclass(frozen=True)
class PullRequest:
    """Chunks ``first .. first+count-1`` of ``seed``'s data, ``chunk_bytes`` each."""

    seed: int
    chunk_bytes: int
    first: int
    count: int

    def line(self) -> bytes:
        return json.dumps(asdict(self)).encode() + b"\n"


def parse_request(line: bytes) -> PullRequest:
    """The request in one line as read (newline included); ``SourceRequestError`` saying what is wrong."""
    if len(line) > MAX_REQUEST_BYTES:
        raise SourceRequestError(f"request longer than {MAX_REQUEST_BYTES} bytes")
    if not line.endswith(b"\n"):
        raise SourceRequestError("truncated request: the connection ended before the newline")
    try:
        body = json.loads(line)
    except ValueError:  # UnicodeDecodeError is one
        raise SourceRequestError("request is not a JSON line") from None
    if not isinstance(body, dict):
        raise SourceRequestError("request must be a JSON object")
    unknown = sorted(set(body) - set(_FIELDS))
    missing = [f for f in _FIELDS if f not in body]
    if unknown or missing:
        raise SourceRequestError(f"request needs exactly {', '.join(_FIELDS)}"
                                 + (f"; unknown: {', '.join(unknown)}" if unknown else "")
                                 + (f"; missing: {', '.join(missing)}" if missing else ""))
    for name in _FIELDS:
        if isinstance(body[name], bool) or not isinstance(body[name], int):
            raise SourceRequestError(f"field {name!r}: {body[name]!r} is not an integer")
    req = PullRequest(**body)
    if not 0 <= req.seed < 1 << 63 or req.first < 0:
        raise SourceRequestError("fields 'seed' and 'first' must be >= 0 (seed < 2**63)")
    if not 1 <= req.chunk_bytes <= MAX_CHUNK_BYTES:
        raise SourceRequestError(f"field 'chunk_bytes': {req.chunk_bytes} is not 1 .. {MAX_CHUNK_BYTES}")
    if req.count < 1 or req.count * req.chunk_bytes > MAX_REPLY_BYTES:
        raise SourceRequestError(f"field 'count': {req.count} chunks of {req.chunk_bytes} bytes is not 1 .. "
                                 f"{MAX_REPLY_BYTES} bytes")
    return req


class _Handler(socketserver.StreamRequestHandler):
    server: SourceServer

    def setup(self) -> None:
        self.timeout = self.server.idle_timeout_s  # StreamRequestHandler puts it on the socket
        super().setup()

    def handle(self) -> None:
        peer = f"{self.client_address[0]}:{self.client_address[1]}"
        served = 0
        while True:
            try:
                line = self.rfile.readline(MAX_REQUEST_BYTES + 1)
            except TimeoutError:
                if served:  # a client that keeps its finished connection open: close it, nothing was refused
                    self.server.count("idle")
                else:
                    self._refuse(peer, f"no complete request within {self.timeout:g} s")
                return
            except OSError as exc:
                log.info("source connection ended", extra=kv(peer=peer, error=exc))
                return
            if not line:
                return
            try:
                req = parse_request(line)
            except SourceRequestError as exc:
                self._refuse(peer, str(exc))
                return
            try:
                self.wfile.write(json.dumps({"ok": True, **asdict(req)}).encode() + b"\n")
                for index in range(req.first, req.first + req.count):
                    self.wfile.write(chunk(req.seed, index, req.chunk_bytes))
                self.wfile.flush()
            except OSError as exc:  # gone mid-reply (a job killed or moved) or stopped reading: nothing to tell it
                self.server.count("dropped")
                log.info("source connection ended mid-reply", extra=kv(peer=peer, error=exc))
                return
            served += 1
            self.server.count("served", req.count * req.chunk_bytes)

    def _refuse(self, peer: str, error: str) -> None:
        refused = self.server.count("refused")
        log.warning("source request refused", extra=kv(peer=peer, error=error, refused=refused))
        try:
            self.wfile.write(json.dumps({"ok": False, "error": error}).encode() + b"\n")
            self.wfile.flush()
        except OSError:
            pass


class SourceServer(BackgroundTCPServer):
    """Threaded TCP source; ``start()`` serves in a daemon thread, ``stop()`` ends it. ``counts``: requests
    ``served`` (and their ``bytes``), ``refused``, ``dropped`` (the client left or stopped reading mid-reply),
    ``idle`` (a served connection closed after ``idle_timeout_s`` without another request)."""

    thread_name = "source"

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, idle_timeout_s: float = IDLE_TIMEOUT_S) -> None:
        self.idle_timeout_s = idle_timeout_s
        self.counts: Counter[str] = Counter()
        self._counts_lock = threading.Lock()
        super().__init__((host, port), _Handler)

    def count(self, what: str, nbytes: int = 0) -> int:
        """Count one ``what`` (and ``nbytes`` served); the new count."""
        with self._counts_lock:
            self.counts[what] += 1
            self.counts["bytes"] += nbytes
            return self.counts[what]

    def start(self) -> None:
        super().start()
        log.info("source listening", extra=kv(host=self.address[0], port=self.address[1]))

    def stop(self) -> None:
        super().stop()
        log.info("source stopped", extra=kv(**dict(sorted(self.counts.items()))))
