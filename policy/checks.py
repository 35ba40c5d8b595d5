"""The figures of the trainer's periodic check: the network as a pure argmax, and as served, on validation episodes.

Why it exists: ``policy.train``'s callback exports the network every ``--eval-every`` steps and keeps the best
export by ``--select`` (``policy.selection``); these are the two figures it can choose by, each on the validation
split only (``policy.splits``), never the test split. ``evaluate_export`` is the trainer's own check (the
network's argmax placements against default-k8s and demand-aware, ``--eval-seeds`` seeds per family and load,
the training episodes' job count); ``served_rows`` scores policies as the extender serves them
(``policy.grid.run_all``) on ``--select-seeds`` other validation seeds at a split evaluation's job count.

State: none of its own; ``evaluate_export`` fills the caller's ``baselines`` cache, since the baselines do not
learn and the simulator is deterministic (the first check's figures are every check's).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from policy.served import ScoreMapping
from policy.sim.sharing import ContentionParams

BASELINES = {"default-k8s": "default-k8s", "demand-aware": "demand-aware"}
"""The policies the trainer's check scores beside the network (name -> scorer spec)."""


def evaluate_export(model_path: Path, *, n_jobs: int, n_seeds: int, contention: ContentionParams | None,
                    baselines: dict[str, float] | None = None) -> dict:
    """Validation excess slowdown (mean over cases) of an exported model and of default-k8s / demand-aware on
    the same episodes: every validation family at every split load, ``n_seeds`` seeds each, ``n_jobs`` jobs,
    in ``contention`` (None: the calibration file's active set). ``baselines``, when given, caches the
    baselines' figures across calls."""
    from policy.sim.config import SimConfig
    from policy.sim.episode import run_episode, scorer_from_spec
    from policy.splits import LOADS, VALIDATION, seeds

    cache = {} if baselines is None else baselines
    specs = {"dqn": f"dqn:{model_path}", **{k: v for k, v in BASELINES.items() if k not in cache}}
    scores: dict[str, list[float]] = {k: [] for k in specs}
    for family in VALIDATION.values():
        for load in LOADS:
            cfg = SimConfig(load=load, n_jobs=n_jobs, contention=contention, **family.config)
            for seed in seeds("validation", n_seeds):
                for name, spec in specs.items():
                    scores[name].append(run_episode(cfg, seed, scorer_from_spec(spec, seed=seed)).excess_slowdown)
    cache.update({name: float(np.mean(v)) for name, v in scores.items() if name != "dqn"})
    return {"dqn": float(np.mean(scores["dqn"])), **{name: cache[name] for name in BASELINES}}


def served_rows(policies: list[str], *, n_seeds: int, offset: int, weight: float, mapping: ScoreMapping,
                contention: ContentionParams | None) -> list[dict]:
    """Per-episode rows of ``policies`` scored as served (extender ``weight`` and ``mapping``, the extender's hot
    filter) on the validation families at every split load, ``n_seeds`` seeds from ``offset`` into the split,
    ``policy.splits.SPLIT_JOBS`` jobs (``policy.grid.run_all``)."""
    from policy.grid import run_all, split_cases
    from policy.splits import LOADS, SPLIT_JOBS, VALIDATION

    cases = split_cases("validation", list(VALIDATION), LOADS, n_seeds, offset=offset)
    rows, _ = run_all(cases, policies, SPLIT_JOBS, 1, progress=False, served_weight=weight, contention=contention,
                      mapping=mapping)
    return rows
