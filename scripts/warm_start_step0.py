#!/usr/bin/env python3
"""Issue #23's A/B at step 0: the validation figure of each arm's network before any DQN step.

Why it exists: the trainer's first evaluation is at ``--eval-every`` steps, after the random warm-up and the
first TD updates, so it cannot show what the warm start hands DQN. This builds the model exactly as
``policy.train.train`` does for a seed (same config, same initialisation), exports and evaluates it through
``policy.checks.evaluate_export`` (the trainer's own check), then warm starts it from the log as the warm arm
does and evaluates again. Descriptive, not an endpoint. Writes ``per-run/step0.csv`` of the result folder.

``--finals DIR`` instead re-evaluates each run's end-of-training checkpoint (``DIR/<arm>-<seed>.sb3.zip``, saved
after the last gradient step) the same way, into ``per-run/final.csv`` at full precision: the trainer logs its
figures to 4 decimals, too coarse for a run that ends within rounding of the 5 % target::

    PYTHONPATH=. python scripts/warm_start_step0.py --log /tmp/ws/log --seeds 1 2 3
    PYTHONPATH=. python scripts/warm_start_step0.py --finals /tmp/ws

``--study`` names the result folder (default ``warm-start``); ``--log ARM=DIR`` (repeatable) warm starts one
arm per log, each from the seed's fresh model (a bare ``DIR`` is the arm ``warm``); ``--keep DIR`` keeps each
step-0 export (``DIR/<arm>-<seed>-step0.npz``) so the served evaluation can score it too::

    PYTHONPATH=. python scripts/warm_start_step0.py --study warm-start-strong --steps 150000 \
        --log warm-da=/tmp/wss/log-da warm-la=/tmp/wss/log-la --keep /tmp/wss/step0
"""

from __future__ import annotations

import argparse
import csv
import logging
import tempfile
from pathlib import Path

from policy.checks import evaluate_export
from policy.paths import POLICY_RESULTS
from policy.train import contention_of, export, make_env, make_model, parse_args
from policy.warmstart import warm_start

CONFIG = "policy/models/default-train.yaml"


def _check(path: Path, args) -> dict:
    """The trainer's own check of the export at ``path``, as its run's config ``args`` sets it."""
    return evaluate_export(path, n_jobs=args.n_jobs, n_seeds=args.eval_seeds, contention=contention_of(args))


def step0(logs: dict[str, Path], seed: int, tmp: Path, *, steps: int = 20000) -> list[dict]:
    """Rows (seed, arm, the three policies' validation excess) of the untrained network and of the network
    imitating each of ``logs`` (arm -> log directory), each imitation starting from the seed's fresh model."""
    args = parse_args(["--config", CONFIG, "--steps", str(steps), "--eval-every", "2500", "--seed", str(seed)])
    torch_threads_one()
    rows = []
    for arm, log_dir in {"cold": None, **logs}.items():
        model = make_model(args, make_env(args))  # the seed's initialisation, as the trainer builds it
        if log_dir is not None:
            warm_start(model, log_dir, epochs=args.warm_start_epochs, holdout=args.warm_start_holdout, seed=seed)
        path = export(model, tmp / f"{arm}-{seed}-step0", args, None, 0,
                      {"source_commit": "step0", "source_dirty": None})
        rows.append({"seed": seed, "arm": arm, **_check(path, args)})
        logging.info("step 0: %s", rows[-1])
    return rows


def parse_logs(specs: list[str]) -> dict[str, Path]:
    """``ARM=DIR`` (or a bare ``DIR``, the arm ``warm``) per log, as arm -> directory."""
    out = {}
    for spec in specs:
        arm, sep, path = spec.partition("=")
        out[arm if sep else "warm"] = Path(path if sep else arm)
    return out


def finals(src: Path, tmp: Path) -> list[dict]:
    """Rows (run, validation excess) of every ``<arm>-<seed>.sb3.zip`` in ``src``, with the run's own config."""
    import json

    from policy.dqn import MaskedDQN
    from policy.train import Args

    rows = []
    for ckpt in sorted(src.glob("*-*.sb3.zip")):
        run = ckpt.name.removesuffix(".sb3.zip")
        args = Args(**json.loads((src / f"{run}.json").read_text())["train_config"])
        model = MaskedDQN.load(str(ckpt), env=make_env(args), device="cpu")
        source = {"source_commit": "final", "source_dirty": None}
        path = export(model, tmp / run, args, None, model.num_timesteps, source)
        rows.append({"run": run, "steps": model.num_timesteps, "dqn": f"{_check(path, args)['dqn']:.6f}"})
        logging.info("final: %s", rows[-1])
    return rows


def torch_threads_one() -> None:
    """The trainer's thread setting, so the imitation runs as in the warm arm."""
    import torch

    torch.set_num_threads(1)


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--log", nargs="+", default=[], metavar="[ARM=]DIR",
                   help="the decision log each warm arm started from (bare DIR: the arm 'warm')")
    p.add_argument("--study", default="warm-start", help="result folder under results/policy/")
    p.add_argument("--steps", type=int, default=20000, help="the runs' --steps (sets the recorded config only)")
    p.add_argument("--keep", type=Path, help="keep the step-0 exports here (default: a temporary folder)")
    p.add_argument("--finals", type=Path, help="run directory: re-evaluate its end-of-training checkpoints instead")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="training seeds")
    a = p.parse_args()
    runs = POLICY_RESULTS / a.study / "per-run"
    runs.mkdir(parents=True, exist_ok=True)
    if a.finals:
        torch_threads_one()
        with tempfile.TemporaryDirectory() as tmp:
            rows = finals(a.finals, Path(tmp))
        with (runs / "final.csv").open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["run", "steps", "dqn"])
            w.writeheader()
            w.writerows(rows)
        return 0
    if not a.log:
        p.error("--log is required (or --finals)")
    out = runs / "step0.csv"
    with tempfile.TemporaryDirectory() as tmp:
        keep = a.keep or Path(tmp)
        keep.mkdir(parents=True, exist_ok=True)
        rows = [r for s in a.seeds for r in step0(parse_logs(a.log), s, keep, steps=a.steps)]
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["seed", "arm", "dqn", "default-k8s", "demand-aware"])
        w.writeheader()
        w.writerows({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in r.items()} for r in rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
