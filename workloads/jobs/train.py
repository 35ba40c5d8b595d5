"""train: an iterative training-like job, mini-batch SGD for logistic regression with numpy.

The dataset is synthetic and seeded (``--samples`` x ``--features``, labels from a hidden weight vector
plus noise), rebuilt identically by every incarnation, so only the weights need checkpointing. Unit
``i`` is one epoch whose shuffling comes from ``default_rng([seed, i])``: the epoch order depends only on
its index, never on how many epochs this process has run, so a resumed run repeats the uninterrupted
one exactly. Weights go through JSON as Python floats (repr round-trips float64 exactly). Output:
``output.json`` with the weights, final loss and accuracy.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from kube.atomic import atomic_write
from workloads.jobs.base import Job, JobError, StateRejected
from workloads.jobs.cpucap import CpuCap

OUTPUT = "output.json"


class TrainJob(Job):
    kind = "train"

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--samples", type=int, default=20000, help="dataset rows (default: %(default)s)")
        parser.add_argument("--features", type=int, default=32, help="dataset columns (default: %(default)s)")
        parser.add_argument("--batch", type=int, default=64, help="mini-batch size (default: %(default)s)")
        parser.add_argument("--lr", type=float, default=0.05, help="learning rate (default: %(default)s)")
        parser.add_argument("--seed", type=int, default=0,
                            help="seed of data, init and shuffling (default: %(default)s)")
        parser.add_argument("--cores", type=float, default=0.0,
                            help="use at most this many cores (sleep between units); 0 = no cap (default: %(default)s)")

    def __init__(self, args: argparse.Namespace, state_dir: Path) -> None:
        super().__init__(args, state_dir)
        if min(args.samples, args.features, args.batch) < 1 or not args.lr > 0:
            raise JobError("--samples, --features, --batch must be >= 1 and --lr > 0")
        if not args.cores >= 0:
            raise JobError(f"--cores must be >= 0, got {args.cores}")
        self._cap = CpuCap(args.cores)  # not part of config(): the cap changes when work is done, not the result

    def prepare(self) -> None:
        rng = np.random.default_rng(self.args.seed)
        self.x = rng.standard_normal((self.args.samples, self.args.features))
        hidden = rng.standard_normal(self.args.features)
        noise = 0.5 * rng.standard_normal(self.args.samples)
        self.y = (self.x @ hidden + noise > 0).astype(np.float64)

    def config(self) -> dict[str, Any]:
        a = self.args
        return {"kind": self.kind, "units": self.units_total, "samples": a.samples, "features": a.features,
                "batch": a.batch, "lr": a.lr, "seed": a.seed}

    def restore(self, state: dict[str, Any] | None, units_done: int) -> None:
        if state is None:
            self.w = np.zeros(self.args.features)
            self.b = 0.0
            return
        w = np.array(state["weights"], dtype=np.float64)
        if w.shape != (self.args.features,) or not np.all(np.isfinite(w)):
            raise StateRejected(f"weights have shape {w.shape}, expected ({self.args.features},)")
        self.w, self.b = w, float(state["bias"])

    def run_unit(self, index: int) -> None:
        order = np.random.default_rng([self.args.seed, index]).permutation(self.args.samples)
        lr, batch = self.args.lr, self.args.batch
        for start in range(0, len(order), batch):
            rows = order[start:start + batch]
            xb, yb = self.x[rows], self.y[rows]
            p = 1.0 / (1.0 + np.exp(-(xb @ self.w + self.b)))
            err = p - yb
            self.w = self.w - lr * (xb.T @ err) / len(rows)
            self.b = self.b - lr * float(err.mean())
        self._cap.account()

    def snapshot(self) -> dict[str, Any]:
        return {"weights": [float(v) for v in self.w], "bias": float(self.b)}

    def _metrics(self) -> tuple[float, float]:
        z = self.x @ self.w + self.b
        loss = float(np.mean(np.logaddexp(0.0, z) - self.y * z))
        accuracy = float(np.mean((z > 0) == (self.y > 0.5)))
        return loss, accuracy

    def finish(self) -> None:
        loss, accuracy = self._metrics()
        result = {**self.config(), **self.snapshot(), "loss": loss, "accuracy": accuracy}
        atomic_write(self.state_dir / OUTPUT, json.dumps(result, sort_keys=True).encode() + b"\n")

    def is_complete(self) -> bool:
        return (self.state_dir / OUTPUT).exists()
