"""The TCP sink of the net job: receives named byte streams, verifies them, stores them durably.

Wire protocol (client → sink), each request a JSON line, ``data`` followed by raw bytes::

    {"op": "open", "stream": "job", "offset": N}     → {"ok": true, "length": N, "sha256": <prefix hash>}
    {"op": "data", "len": n, "sha256": <hash of the n bytes>} <n bytes>      (no reply; bad hash → error, close)
    {"op": "sync"}                                     → {"ok": true, "length": L, "sha256": <hash of all L bytes>}
    {"op": "finish", "length": L, "sha256": H}         → {"ok": true, "length": L, "sha256": H}
    any failure                                        → {"ok": false, "error": "..."} and the connection closes

``open`` is what makes the stream resumable by offset: the sink truncates ``<dir>/<stream>.part`` to N
(refusing if it holds fewer than N bytes) and returns the hash of what it keeps, so the client can check
it against its checkpoint. ``sync`` fsyncs before answering; the client checkpoints only after a sync, so
a checkpoint never covers bytes the sink could lose. ``finish`` checks length and hash of the whole
stream, then atomically renames the part file to ``<dir>/<stream>.bin``. One connection per stream at a
time (a per-stream lock); a killed client's connection ends at EOF and releases it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import socket
import socketserver
import threading
from pathlib import Path
from typing import Any, BinaryIO

from kube.atomic import atomic_rename
from kube.logs import kv
from workloads.tcpserver import BackgroundTCPServer

log = logging.getLogger(__name__)

_STREAM = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
LOCK_TIMEOUT_S = 10.0
MAX_FRAME = 64 << 20


class SinkProtocolError(Exception):
    """A request the sink refuses; sent back as ``{"ok": false, "error": ...}``."""


class _Handler(socketserver.StreamRequestHandler):
    server: SinkServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self) -> None:
        stream: _Stream | None = None
        try:
            while line := self.rfile.readline(4096):
                request = json.loads(line)
                op = request.get("op")
                if op == "open":
                    if stream is not None:
                        raise SinkProtocolError("stream already open on this connection")
                    stream = self.server.acquire(str(request.get("stream")))
                    self._reply(stream.open(int(request["offset"])))
                elif stream is None:
                    raise SinkProtocolError(f"{op!r} before open")
                elif op == "data":
                    size = int(request["len"])
                    if not 0 <= size <= MAX_FRAME:
                        raise SinkProtocolError(f"frame of {size} bytes")
                    data = self.rfile.read(size)
                    if len(data) != size:
                        break  # client died mid-frame; the partial frame is past any synced offset
                    stream.append(data, str(request.get("sha256")))
                elif op == "sync":
                    self._reply(stream.sync())
                elif op == "finish":
                    self._reply(stream.finish(int(request["length"]), str(request["sha256"])))
                else:
                    raise SinkProtocolError(f"unknown op {op!r}")
        except (SinkProtocolError, ValueError, KeyError, TypeError) as exc:
            log.warning("sink request refused", extra=kv(error=exc))
            try:
                self._reply({"ok": False, "error": str(exc)})
            except OSError:
                pass
        except OSError as exc:
            log.info("sink connection ended", extra=kv(error=exc))
        finally:
            if stream is not None:
                stream.release()

    def _reply(self, body: dict[str, Any]) -> None:
        self.wfile.write(json.dumps(body).encode() + b"\n")
        self.wfile.flush()


class _Stream:
    """One stream's part file, used by one connection at a time."""

    def __init__(self, directory: Path, name: str) -> None:
        self.part = directory / f"{name}.part"
        self.final = directory / f"{name}.bin"
        self.lock = threading.Lock()
        self.fh: BinaryIO | None = None
        self.hasher = hashlib.sha256()

    def open(self, offset: int) -> dict[str, Any]:
        if self.final.exists() and not self.part.exists():
            # The client died between our finish and its own output: reopen, it will finish again.
            log.info("reopening a finished stream", extra=kv(path=self.final))
            atomic_rename(self.final, self.part)
        self.fh = open(self.part, "r+b" if self.part.exists() else "w+b")
        self.hasher = hashlib.sha256()
        remaining = offset
        while remaining:
            block = self.fh.read(min(remaining, 1 << 20))
            if not block:
                raise SinkProtocolError(f"sink holds only {offset - remaining} bytes, cannot resume at {offset}")
            self.hasher.update(block)
            remaining -= len(block)
        self.fh.truncate(offset)
        self.fh.seek(offset)
        log.info("stream opened", extra=kv(path=self.part, offset=offset))
        return {"ok": True, "length": offset, "sha256": self.hasher.hexdigest()}

    def append(self, data: bytes, sha256: str) -> None:
        if hashlib.sha256(data).hexdigest() != sha256:
            raise SinkProtocolError("frame sha256 mismatch")
        self.fh.write(data)
        self.hasher.update(data)

    def sync(self) -> dict[str, Any]:
        self.fh.flush()
        os.fsync(self.fh.fileno())
        return {"ok": True, "length": self.fh.tell(), "sha256": self.hasher.hexdigest()}

    def finish(self, length: int, sha256: str) -> dict[str, Any]:
        reply = self.sync()
        if reply["length"] != length or reply["sha256"] != sha256:
            raise SinkProtocolError(f"stream verification failed: have {reply['length']} bytes "
                                    f"sha256 {reply['sha256'][:12]}, client sent {length} bytes sha256 {sha256[:12]}")
        self.fh.close()
        self.fh = None
        atomic_rename(self.part, self.final)
        log.info("stream verified and stored", extra=kv(path=self.final, bytes=length))
        return reply

    def release(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None
        self.lock.release()


class SinkServer(BackgroundTCPServer):
    """Threaded TCP sink; ``start()`` serves in a daemon thread, ``stop()`` ends it."""

    thread_name = "sink"

    def __init__(self, directory: Path, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._streams: dict[str, _Stream] = {}
        self._streams_lock = threading.Lock()
        super().__init__((host, port), _Handler)

    def acquire(self, name: str) -> _Stream:
        if not _STREAM.match(name):
            raise SinkProtocolError(f"bad stream name {name!r}")
        with self._streams_lock:
            stream = self._streams.setdefault(name, _Stream(self.directory, name))
        if not stream.lock.acquire(timeout=LOCK_TIMEOUT_S):
            raise SinkProtocolError(f"stream {name!r} is busy on another connection")
        return stream

    def start(self) -> None:
        super().start()
        log.info("sink listening", extra=kv(host=self.address[0], port=self.address[1], dir=self.directory))

    def stop(self) -> None:
        super().stop()
