"""io: copy an input file to ``output.bin`` chunk by chunk, like a disk-bound ETL step.

The input (``--input``, default ``<state-dir>/input.bin``) is generated deterministically when absent
(atomically, so a kill during generation leaves nothing). Unit ``i`` copies bytes
``[i*chunk, (i+1)*chunk)`` into ``output.bin.part``. A checkpoint records the copied length and the
sha256 of that prefix, after fsyncing the part file; on resume the part file is truncated back to the
checkpoint's length and its prefix re-hashed: a part file that disagrees rejects the checkpoint (the
runner falls back to an older one). At the end the copy is verified against the input's hash, fsynced
and renamed to ``output.bin``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from pathlib import Path
from typing import Any

from kube.atomic import atomic_rename, atomic_write
from workloads.jobs.base import Job, JobError, StateRejected
from workloads.jobs.data import chunk
from workloads.jobs.throttle import Throttle

OUTPUT = "output.bin"
PART = OUTPUT + ".part"


class IoJob(Job):
    kind = "io"

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--input", type=Path, default=None,
                            help="file to copy; generated from --seed if absent (default: <state-dir>/input.bin)")
        parser.add_argument("--chunk-bytes", type=int, default=1 << 20, help="bytes per unit (default: %(default)s)")
        parser.add_argument("--seed", type=int, default=0, help="seed of a generated input (default: %(default)s)")
        parser.add_argument("--bandwidth", type=float, default=0.0,
                            help="cap the copy at this many MiB/s, 0 = unlimited (default: %(default)s)")
        parser.add_argument("--fsync-chunks", action="store_true",
                            help="fsync after every chunk, not only at checkpoints and the end")

    def __init__(self, args: argparse.Namespace, state_dir: Path) -> None:
        super().__init__(args, state_dir)
        if args.chunk_bytes < 1:
            raise JobError("--chunk-bytes must be >= 1")
        self.input = args.input or state_dir / "input.bin"
        self.part_path = state_dir / PART
        self.size = 0
        self._src = self._dst = None
        self._hasher = hashlib.sha256()
        self._throttle = Throttle(args.bandwidth)

    def prepare(self) -> None:
        chunk_bytes = self.args.chunk_bytes
        if not self.input.exists():
            data = b"".join(chunk(self.args.seed, i, chunk_bytes) for i in range(self.units_total))
            atomic_write(self.input, data)
        self.size = self.input.stat().st_size
        if not (self.units_total - 1) * chunk_bytes < self.size <= self.units_total * chunk_bytes:
            units = -(-self.size // chunk_bytes)
            raise JobError(f"input {self.input} has {self.size} bytes = {units} units of {chunk_bytes}, "
                           f"not --units {self.units_total}")

    def config(self) -> dict[str, Any]:
        # No paths: a migrated job may see the same volume mounted elsewhere.
        return {"kind": self.kind, "units": self.units_total, "chunk_bytes": self.args.chunk_bytes,
                "input_bytes": self.size, "seed": self.args.seed}

    def restore(self, state: dict[str, Any] | None, units_done: int) -> None:
        self.close()
        self._src = open(self.input, "rb")
        offset = 0 if state is None else int(state["offset"])
        if state is not None and offset != min(units_done * self.args.chunk_bytes, self.size):
            raise StateRejected(f"offset {offset} does not match units_done {units_done}")
        mode = "r+b" if self.part_path.exists() else "w+b"
        self._dst = open(self.part_path, mode)
        self._hasher = hashlib.sha256()
        if state is not None:
            self._dst.seek(0)
            remaining = offset
            while remaining:
                block = self._dst.read(min(remaining, 1 << 20))
                if not block:
                    raise StateRejected(f"{self.part_path.name} is shorter than the checkpoint's {offset} bytes")
                self._hasher.update(block)
                remaining -= len(block)
            if self._hasher.hexdigest() != state["sha256"]:
                raise StateRejected(f"{self.part_path.name} prefix does not match the checkpoint's sha256")
        self._dst.truncate(offset)
        self._dst.seek(offset)
        self._src.seek(offset)

    def run_unit(self, index: int) -> None:
        block = self._src.read(self.args.chunk_bytes)
        self._dst.write(block)
        self._hasher.update(block)
        if self.args.fsync_chunks:
            self._dst.flush()
            os.fsync(self._dst.fileno())
        self._throttle.account(len(block))

    def snapshot(self) -> dict[str, Any]:
        self._dst.flush()
        os.fsync(self._dst.fileno())
        return {"offset": self._dst.tell(), "sha256": self._hasher.hexdigest()}

    def finish(self) -> None:
        self._dst.flush()
        os.fsync(self._dst.fileno())
        expected = hashlib.sha256()
        with open(self.input, "rb") as fh:
            while block := fh.read(1 << 20):
                expected.update(block)
        if expected.hexdigest() != self._hasher.hexdigest():
            raise JobError(f"copy of {self.input} does not match it (sha256 differs)")
        self.close()
        atomic_rename(self.part_path, self.state_dir / OUTPUT)

    def is_complete(self) -> bool:
        return (self.state_dir / OUTPUT).exists()

    def close(self) -> None:
        for fh in (self._src, self._dst):
            if fh is not None:
                fh.close()
        self._src = self._dst = None
