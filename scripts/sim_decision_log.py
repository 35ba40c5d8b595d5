#!/usr/bin/env python3
"""A decision log of a baseline's choices in the simulator, written with the extender's row builders.

Why it exists: the warm start (``policy.warmstart``, issue #23) learns from logged decisions, and without a
cluster the only log to measure it on is a simulated one. Each placement the baseline makes in the
validation families' configs becomes a shadow row (``actual``: the baseline's node, as a watch would see another
scheduler bind it) with the inputs the encoder read, built by ``policy.decisionlog.decision_row`` exactly
as ``extender.shadow`` builds its own; then, with ``--warm-start``, the warm start's held-out agreement.

Seeds: ``--split train`` (the default) runs the families on training-split seeds 0, 1, ... (below
``policy.splits.TRAIN_SEED_LIMIT``): a log a training run warm starts from must not hold the episodes its
checkpoints are chosen on, and training's evaluation uses the first validation seeds, the very ones
``--split validation`` takes (an episode's jobs depend on its seed only; the load just rescales their submit
times, so 0.8 and 0.9 on one seed are the same jobs). The families' configs all lie inside training's ranges::

    PYTHONPATH=. python scripts/sim_decision_log.py --out /tmp/simlog --seeds 2 --warm-start
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import orjson

from policy.baselines import make_scorer, pick
from policy.decisionlog import DecisionInputs, decision_row
from policy.features import DEFAULT_MAX_USAGE_AGE, encode
from policy.sim.config import SimConfig
from policy.sim.engine import Simulator
from policy.sim.episode import run
from policy.splits import TRAIN_SEED_LIMIT, VALIDATION, seeds


def log_seeds(split: str, n: int) -> list[int]:
    """The first ``n`` seeds of ``split``: ``train`` is [0, TRAIN_SEED_LIMIT), the held-out ones ``policy.splits``'."""
    if split == "train":
        if n > TRAIN_SEED_LIMIT:
            raise ValueError(f"{n} seeds exceed the training split's {TRAIN_SEED_LIMIT}")
        return list(range(n))
    return seeds(split, n)


def write_log(out: Path, *, scorer_name: str, n_seeds: int, loads: tuple[float, ...],
              n_jobs: int, split: str = "train") -> tuple[int, float]:
    """Run every validation family's config at ``loads`` for ``n_seeds`` seeds of ``split`` under ``scorer_name``:
    the rows written and the agreement a perfect imitator could expect (the mean of 1 / the nodes tied for the
    baseline's best: it breaks ties at random)."""
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    ceiling = []
    with open(out / "decisions-sim.jsonl", "wb") as f:
        for family in VALIDATION.values():
            for load in loads:
                for seed in log_seeds(split, n_seeds):
                    scorer = make_scorer(scorer_name, seed=seed)
                    rng = np.random.default_rng(seed)

                    def choose(snap, pod, mask, scorer=scorer, rng=rng, tag=f"{family.name}-{load}-{seed}"):
                        nonlocal written
                        raw = np.asarray(scorer.score(snap, pod), dtype=np.float64)
                        node = pick(raw, mask, rng)
                        if node is not None:
                            ceiling.append(1.0 / np.count_nonzero(mask & (raw == raw[node])))
                            enc = encode(snap, pod)
                            row = decision_row(
                                ts=float(written), replica="sim", mode="shadow",
                                pod=(tag, pod.name, f"{tag}-{written}"),
                                requests=pod.requests, demand=pod.demand, demand_source=pod.demand_source,
                                policy=scorer_name, model_version=f"heuristic:{scorer_name}", nodes=snap.names,
                                scores=np.zeros(snap.n_nodes, dtype=np.int64), raw=raw, chosen=None,
                                actual=snap.names[node], scheduler=f"{scorer_name} (simulated)",
                                inputs=DecisionInputs(snap=snap, cluster=enc.cluster,
                                                      max_usage_age=DEFAULT_MAX_USAGE_AGE))
                            f.write(orjson.dumps(row) + b"\n")
                            written += 1
                        return node

                    run(Simulator(SimConfig(load=load, n_jobs=n_jobs, **family.config), seed=seed), choose)
    return written, float(np.mean(ceiling)) if ceiling else float("nan")


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="log directory to write")
    p.add_argument("--scorer", default="default-k8s", help="the baseline whose choices are logged")
    p.add_argument("--split", choices=("train", "validation"), default="train",
                   help="whose seeds the episodes run on (train: disjoint from training's evaluation)")
    p.add_argument("--seeds", type=int, default=2, help="seeds per family and load")
    p.add_argument("--loads", default="0.8,1.2", help="offered loads, comma-separated")
    p.add_argument("--jobs", type=int, default=120, help="jobs per episode")
    p.add_argument("--warm-start", action="store_true", help="then warm start a fresh DQN on it and report")
    p.add_argument("--epochs", type=int, default=20, help="warm start epochs")
    a = p.parse_args()
    t0 = time.perf_counter()
    n, ceiling = write_log(a.out, scorer_name=a.scorer, n_seeds=a.seeds,
                           loads=tuple(float(x) for x in a.loads.split(",")), n_jobs=a.jobs, split=a.split)
    logging.info("wrote %d rows to %s in %.0f s (split=%s); tie-limited agreement ceiling %.3f", n, a.out,
                 time.perf_counter() - t0, a.split, ceiling)
    if a.warm_start:
        from policy.train import Args, make_env, make_model
        from policy.warmstart import warm_start

        args = Args(progress=False)
        report = warm_start(make_model(args, make_env(args)), a.out, epochs=a.epochs, holdout=0.2, seed=args.seed)
        print(json.dumps(asdict(report), indent=2))  # noqa: T201 -- the script's result
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
