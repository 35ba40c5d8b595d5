"""net: move deterministic data over TCP, resumable by offset: push it to a sink, or pull it from a source.

Push (protocol in ``workloads.sink``): the sink is ``--sink HOST:PORT`` (e.g. ``python -m workloads sink``
elsewhere) or, with ``--start-sink``, one started inside this process on 127.0.0.1 that stores into
``<state-dir>/sink/``. Unit ``i`` sends chunk ``i`` (``workloads.jobs.data``). A checkpoint is taken only after
the sink confirmed (``sync``, fsynced) exactly the bytes and hash the client expects, and records that offset
and hash; on resume the client reopens the stream at the checkpoint's offset, the sink truncates to it and
returns the hash of what it kept, which must match both the checkpoint and the regenerated data, or the
checkpoint is rejected. At the end the sink verifies the whole stream and stores ``<stream>.bin``; the job then
writes ``output.json`` (bytes, sha256, stream name).

Pull (protocol in ``workloads.source``): the source is ``--source HOST:PORT`` or the address in the environment
variable ``--source-env`` names (a pod fills it from the downward API: the source runs on the node's host). The
job asks for every chunk from its checkpoint on in one request; unit ``i`` reads chunk ``i`` and compares it
with the chunk regenerated from the seed (a mismatch fails the job). Nothing is stored but the hash, so a
checkpoint (offset + sha256 of everything read) needs nothing made durable first; on resume the hash of the
prefix is regenerated, checked against the checkpoint, and the rest asked for. ``output.json`` holds bytes
and sha256: the same as a pushing job's for the same seed, units and chunk size. ``--bandwidth`` caps both.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import socket
from pathlib import Path
from typing import Any

from kube.atomic import atomic_write
from workloads.jobs.base import Job, JobError, StateRejected
from workloads.jobs.data import chunk, prefix_hasher
from workloads.jobs.throttle import Throttle
from workloads.sink import SinkServer
from workloads.source import PullRequest

OUTPUT = "output.json"


def parse_hostport(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


def source_address(args: argparse.Namespace) -> tuple[str, int] | None:
    """Where a pulling job's source is (``--source``, or the variable ``--source-env`` names); None: pushing."""
    if args.source_env is None:
        return args.source
    value = os.environ.get(args.source_env, "")
    try:
        return parse_hostport(value)
    except argparse.ArgumentTypeError:
        raise JobError(f"--source-env {args.source_env}: the variable holds {value!r}, not HOST:PORT") from None


def check_reply(line: bytes, request: PullRequest) -> None:
    """The source's answer to ``request``: it must say ok and echo the request; ``JobError`` otherwise."""
    if not line:
        raise JobError("source closed the connection without answering the request")
    try:
        answer = json.loads(line)
    except ValueError:
        raise JobError(f"source answered with something not JSON: {line[:80]!r}") from None
    if not isinstance(answer, dict) or not answer.get("ok"):
        error = answer.get("error") if isinstance(answer, dict) else answer
        raise JobError(f"source refused the request: {error}")
    echoed = {k: answer.get(k) for k in ("seed", "chunk_bytes", "first", "count")}
    if echoed != dataclasses.asdict(request):
        raise JobError(f"source answered another request ({echoed}) than ours ({dataclasses.asdict(request)})")


def check_chunk(got: bytes, expected: bytes, *, index: int) -> None:
    """Chunk ``index`` as read from the source must be the chunk the seed makes; ``JobError`` otherwise."""
    if len(got) != len(expected):
        raise JobError(f"source closed the connection in chunk {index} ({len(got)} of {len(expected)} bytes)")
    if got != expected:
        raise JobError(f"chunk {index} from the source differs from the seed's data")


class NetJob(Job):
    kind = "net"

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        where = parser.add_mutually_exclusive_group(required=True)
        where.add_argument("--sink", type=parse_hostport, metavar="HOST:PORT", help="address of a running sink")
        where.add_argument("--start-sink", action="store_true",
                           help="start a sink in this process on 127.0.0.1, storing into <state-dir>/sink/")
        where.add_argument("--source", type=parse_hostport, metavar="HOST:PORT",
                           help="pull the data from a running source (python -m workloads source) instead of pushing")
        where.add_argument("--source-env", metavar="VAR",
                           help="like --source, the HOST:PORT read from environment variable VAR (a pod sets it "
                                "from the downward API, e.g. $(HOST_IP):PORT)")
        parser.add_argument("--stream", default="job", help="stream name at the sink, push only (default: %(default)s)")
        parser.add_argument("--chunk-bytes", type=int, default=256 << 10, help="bytes per unit (default: %(default)s)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the data (default: %(default)s)")
        parser.add_argument("--bandwidth", type=float, default=0.0,
                            help="cap the stream at this many MiB/s, 0 = unlimited (default: %(default)s)")
        parser.add_argument("--timeout", type=float, default=30.0,
                            help="seconds to wait for the sink or source to connect or answer (default: %(default)s)")

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
        self._source = source_address(args)

    @property
    def pulling(self) -> bool:
        return self._source is not None

    def prepare(self) -> None:
        if self.args.start_sink:
            self._server = SinkServer(self.state_dir / "sink")
            self._server.start()

    def config(self) -> dict[str, Any]:
        common = {"kind": self.kind, "units": self.units_total, "chunk_bytes": self.args.chunk_bytes,
                  "seed": self.args.seed}
        # No address in either: a migrated job may reach its sink or source by another one.
        return {**common, "pull": True} if self.pulling else {**common, "stream": self.args.stream}

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

    def _connect(self, address: tuple[str, int], what: str) -> None:
        self.close_connection()
        try:
            self._sock = socket.create_connection(address, timeout=self.args.timeout)
        except OSError as exc:
            raise JobError(f"cannot connect to {what} {address[0]}:{address[1]}: {exc}") from None
        # Small sync/finish requests behind unacknowledged data would otherwise wait out Nagle + delayed ACK.
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._rfile = self._sock.makefile("rb")

    def restore(self, state: dict[str, Any] | None, units_done: int) -> None:
        units = 0 if state is None else units_done
        self._hasher = prefix_hasher(self.args.seed, units, self.args.chunk_bytes)
        self._sent = units * self.args.chunk_bytes
        if state is not None and (state["offset"] != self._sent or state["sha256"] != self._hasher.hexdigest()):
            raise StateRejected("checkpoint offset/sha256 disagree with the regenerated stream")
        if self.pulling:
            self._connect(self._source, "source")
            if units < self.units_total:
                self._ask(PullRequest(seed=self.args.seed, chunk_bytes=self.args.chunk_bytes, first=units,
                                      count=self.units_total - units))
            return
        self._connect(self._server.address if self._server else self.args.sink, "sink")
        try:
            opened = self._request({"op": "open", "stream": self.args.stream, "offset": self._sent})
        except JobError as exc:
            if state is None:
                raise
            raise StateRejected(str(exc)) from None
        if opened["sha256"] != self._hasher.hexdigest():
            raise StateRejected(f"sink holds other data than the first {self._sent} bytes of this stream")

    def _ask(self, request: PullRequest) -> None:
        try:
            self._sock.sendall(request.line())
            line = self._rfile.readline()
        except OSError as exc:
            raise JobError(f"source connection failed during the request: {exc}") from None
        check_reply(line, request)

    def run_unit(self, index: int) -> None:
        data = chunk(self.args.seed, index, self.args.chunk_bytes)
        if self.pulling:
            try:
                got = self._rfile.read(len(data))
            except OSError as exc:
                raise JobError(f"source connection failed in chunk {index}: {exc}") from None
            check_chunk(got, data, index=index)
        else:
            self._request({"op": "data", "len": len(data), "sha256": hashlib.sha256(data).hexdigest()}, data,
                          reply=False)
        self._hasher.update(data)
        self._sent += len(data)
        self._throttle.account(len(data))

    def _confirmed(self, op: dict[str, Any]) -> dict[str, Any]:
        answer = self._request(op)
        if answer["length"] != self._sent or answer["sha256"] != self._hasher.hexdigest():
            raise JobError(f"sink confirmed {answer['length']} bytes, expected {self._sent} with our sha256")
        return {"offset": self._sent, "sha256": self._hasher.hexdigest()}

    def snapshot(self) -> dict[str, Any]:
        if self.pulling:  # nothing is kept but the hash: nothing to make durable first
            return {"offset": self._sent, "sha256": self._hasher.hexdigest()}
        return self._confirmed({"op": "sync"})

    def finish(self) -> None:
        digest = self._hasher.hexdigest()
        if self.pulling:
            verified = {"verified_by_job": True}  # every chunk, against the seed (run_unit)
        else:
            self._confirmed({"op": "finish", "length": self._sent, "sha256": digest})
            verified = {"verified_by_sink": True}
        result = {**self.config(), "bytes": self._sent, "sha256": digest, **verified}
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
