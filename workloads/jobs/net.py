"""net: stream deterministic data to a TCP sink, resumable by offset (protocol in ``workloads.sink``).

The sink is ``--sink HOST:PORT`` (e.g. ``python -m workloads sink`` elsewhere) or, with ``--start-sink``,
one started inside this process on 127.0.0.1 that stores into ``<state-dir>/sink/``. Unit ``i`` sends
chunk ``i`` (``workloads.jobs.data``). A checkpoint is taken only after the sink confirmed (``sync``,
fsynced) exactly the bytes and hash the client expects, and records that offset and hash; on resume the
client reopens the stream at the checkpoint's offset, the sink truncates to it and returns the hash of
what it kept, which must match both the checkpoint and the regenerated data, or the checkpoint is
rejected. At the end the sink verifies the whole stream and stores ``<stream>.bin``; the job then writes
``output.json`` (bytes, sha256, stream name).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import socket
from pathlib import Path
from typing import Any

from kube.atomic import atomic_write
from workloads.jobs.base import Job, JobError, StateRejected
from workloads.jobs.data import chunk, prefix_hasher
from workloads.jobs.throttle import Throttle
from workloads.sink import SinkServer

OUTPUT = "output.json"


def parse_hostport(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


class NetJob(Job):
    kind = "net"

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        where = parser.add_mutually_exclusive_group(required=True)
        where.add_argument("--sink", type=parse_hostport, metavar="HOST:PORT", help="address of a running sink")
        where.add_argument("--start-sink", action="store_true",
                           help="start a sink in this process on 127.0.0.1, storing into <state-dir>/sink/")
        parser.add_argument("--stream", default="job", help="stream name at the sink (default: %(default)s)")
        parser.add_argument("--chunk-bytes", type=int, default=256 << 10, help="bytes per unit (default: %(default)s)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the data (default: %(default)s)")
        parser.add_argument("--bandwidth", type=float, default=0.0,
                            help="cap the stream at this many MiB/s, 0 = unlimited (default: %(default)s)")
        parser.add_argument("--timeout", type=float, default=30.0,
                            help="seconds to wait for the sink to connect or answer (default: %(default)s)")

    def __init__(self, args: argparse.Namespace, state_dir: Path) -> None:
        super().__init__(args, state_dir)
        if args.chunk_bytes < 1:
            raise JobError("--chunk-bytes must be >= 1")
        self._server: SinkServer | None = None
        self._sock: socket.socket | None = None
        self._rfile = None
        self._hasher = hashlib.sha256()
        self._sent = 0
        self._throttle = Throttle(args.bandwidth)

    def prepare(self) -> None:
        if self.args.start_sink:
            self._server = SinkServer(self.state_dir / "sink")
            self._server.start()

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind, "units": self.units_total, "chunk_bytes": self.args.chunk_bytes,
                "seed": self.args.seed, "stream": self.args.stream}

    def _request(self, body: dict[str, Any], payload: bytes = b"", *, reply: bool = True) -> dict[str, Any]:
        try:
            self._sock.sendall(json.dumps(body).encode() + b"\n" + payload)
            if not reply:
                return {}
            line = self._rfile.readline()
        except OSError as exc:
            raise JobError(f"sink connection failed during {body['op']}: {exc}") from None
        if not line:
            raise JobError(f"sink closed the connection during {body['op']}")
        answer = json.loads(line)
        if not answer.get("ok"):
            raise JobError(f"sink refused {body['op']}: {answer.get('error')}")
        return answer

    def restore(self, state: dict[str, Any] | None, units_done: int) -> None:
        self.close_connection()
        address = self._server.address if self._server else self.args.sink
        try:
            self._sock = socket.create_connection(address, timeout=self.args.timeout)
        except OSError as exc:
            raise JobError(f"cannot connect to sink {address[0]}:{address[1]}: {exc}") from None
        # Small sync/finish requests behind unacknowledged data would otherwise wait out Nagle + delayed ACK.
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._rfile = self._sock.makefile("rb")
        units = 0 if state is None else units_done
        self._hasher = prefix_hasher(self.args.seed, units, self.args.chunk_bytes)
        self._sent = units * self.args.chunk_bytes
        if state is not None and (state["offset"] != self._sent or state["sha256"] != self._hasher.hexdigest()):
            raise StateRejected("checkpoint offset/sha256 disagree with the regenerated stream")
        try:
            opened = self._request({"op": "open", "stream": self.args.stream, "offset": self._sent})
        except JobError as exc:
            if state is None:
                raise
            raise StateRejected(str(exc)) from None
        if opened["sha256"] != self._hasher.hexdigest():
            raise StateRejected(f"sink holds other data than the first {self._sent} bytes of this stream")

    def run_unit(self, index: int) -> None:
        data = chunk(self.args.seed, index, self.args.chunk_bytes)
        self._request({"op": "data", "len": len(data), "sha256": hashlib.sha256(data).hexdigest()}, data, reply=False)
        self._hasher.update(data)
        self._sent += len(data)
        self._throttle.account(len(data))

    def _confirmed(self, op: dict[str, Any]) -> dict[str, Any]:
        answer = self._request(op)
        if answer["length"] != self._sent or answer["sha256"] != self._hasher.hexdigest():
            raise JobError(f"sink confirmed {answer['length']} bytes, expected {self._sent} with our sha256")
        return {"offset": self._sent, "sha256": self._hasher.hexdigest()}

    def snapshot(self) -> dict[str, Any]:
        return self._confirmed({"op": "sync"})

    def finish(self) -> None:
        digest = self._hasher.hexdigest()
        self._confirmed({"op": "finish", "length": self._sent, "sha256": digest})
        result = {**self.config(), "bytes": self._sent, "sha256": digest, "verified_by_sink": True}
        atomic_write(self.state_dir / OUTPUT, json.dumps(result, sort_keys=True).encode() + b"\n")

    def is_complete(self) -> bool:
        return (self.state_dir / OUTPUT).exists()

    def close_connection(self) -> None:
        for closable in (self._rfile, self._sock):
            if closable is not None:
                closable.close()
        self._rfile = self._sock = None

    def close(self) -> None:
        self.close_connection()
        if self._server is not None:
            self._server.stop()
            self._server = None
