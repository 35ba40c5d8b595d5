"""cpu: a compute-bound job, an iterated SHA-256 chain.

Each unit hashes the running 32-byte digest ``--work`` times. The chain is seeded by ``--seed``, so the
final digest is a pure function of (seed, units, work) and cannot be computed without doing all the
work in order, which makes it a strict test of resume correctness: one skipped or repeated unit changes
the output. State: the running digest. Output: ``output.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

from kube.atomic import atomic_write
from workloads.jobs.base import Job, JobError, StateRejected
from workloads.jobs.cpucap import CpuCap, Cycle

OUTPUT = "output.json"


class CpuJob(Job):
    kind = "cpu"

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--work", type=int, default=20000, help="SHA-256 rounds per unit (default: %(default)s)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the hash chain (default: %(default)s)")
        parser.add_argument("--cores", type=float, default=0.0,
                            help="use at most this many cores (sleep between units); 0 = no cap (default: %(default)s)")
        parser.add_argument("--cores-cycle", default="", metavar="HIGH:LOW:PERIOD:HIGH_S:PHASE",
                            help="instead of --cores, a cap that alternates: HIGH cores while (t + PHASE) mod PERIOD "
                                 "< HIGH_S, t seconds since the start, LOW otherwise (a long-running tenant's use, "
                                 "lab tenants scenario)")

    def __init__(self, args: argparse.Namespace, state_dir: Path) -> None:
        super().__init__(args, state_dir)
        if not args.cores >= 0:
            raise JobError(f"--cores must be >= 0, got {args.cores}")
        if args.cores_cycle and args.cores:
            raise JobError("--cores and --cores-cycle: give one cap")
        try:
            cycle = Cycle.parse(args.cores_cycle) if args.cores_cycle else None
        except ValueError as exc:
            raise JobError(f"--cores-cycle: {exc}") from None
        # not part of config(): the cap changes when work is done, not the result
        self._cap = CpuCap(args.cores, cycle=cycle)

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind, "units": self.units_total, "work": self.args.work, "seed": self.args.seed}

    def restore(self, state: dict[str, Any] | None, units_done: int) -> None:
        if state is None:
            self.digest = hashlib.sha256(f"drsched-cpu:{self.args.seed}".encode()).digest()
            return
        digest = bytes.fromhex(state["digest"])
        if len(digest) != 32:
            raise StateRejected(f"digest has {len(digest)} bytes, expected 32")
        self.digest = digest

    def run_unit(self, index: int) -> None:
        digest = self.digest
        for _ in range(self.args.work):
            digest = hashlib.sha256(digest).digest()
        self.digest = digest
        self._cap.account()

    def snapshot(self) -> dict[str, Any]:
        return {"digest": self.digest.hex()}

    def finish(self) -> None:
        result = {**self.config(), "digest": self.digest.hex()}
        atomic_write(self.state_dir / OUTPUT, json.dumps(result, sort_keys=True).encode() + b"\n")

    def is_complete(self) -> bool:
        return (self.state_dir / OUTPUT).exists()
