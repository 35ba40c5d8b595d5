"""Run one policy through one simulated episode: the loop shared by evaluation, training callbacks and tests.

A policy is anything that scores nodes on (snapshot, pod): a heuristic from ``policy.baselines`` or an
exported DQN (``policy.model``). ``policy_from_spec`` turns the command-line names (``default-k8s``,
``dqn:policy/models/default.npz``) into one; ``run_episode`` feeds it every decision of a ``Simulator``
and returns the simulator's ``RunResult``. Decisions use the same feature encoder and the same
``pick`` (feasible nodes only, random tie-break) as the extender.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from policy.baselines import Scorer, make_scorer, pick
from policy.features import encode, feasible_mask
from policy.model import QModel, load_model
from policy.sim.config import SimConfig
from policy.sim.engine import Simulator
from policy.sim.metrics import RunResult
from policy.state import ClusterSnapshot, PodView


@dataclass
class ModelScorer:
    """Adapts a numpy ``QModel`` to the ``Scorer`` protocol."""

    model: QModel
    name: str = "dqn"

    def score(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        return self.model.q_values(encode(snap, pod))


def policy_from_spec(spec: str, *, seed: int = 0) -> Scorer:
    """``"dqn:<path>"`` loads an exported model (``ModelError`` if it cannot); anything else names a baseline."""
    if spec.startswith("dqn:"):
        path = spec.removeprefix("dqn:")
        return ModelScorer(load_model(path), name=f"dqn:{Path(path).stem}")
    return make_scorer(spec, seed=seed)


def policy_label(spec: str) -> str:
    return f"dqn:{Path(spec.removeprefix('dqn:')).stem}" if spec.startswith("dqn:") else spec


def run_episode(cfg: SimConfig, seed: int, scorer: Scorer, *, tie_seed: int | None = None) -> RunResult:
    """Simulate ``cfg`` with ``seed`` (the workload depends on these alone) under ``scorer``."""
    sim = Simulator(cfg, seed=seed)
    rng = np.random.default_rng(seed if tie_seed is None else tie_seed)
    chose = getattr(scorer, "chose", None)
    pending = sim.next_decision()
    while pending is not None:
        snap = sim.snapshot()
        choice = pick(scorer.score(snap, pending.pod), feasible_mask(snap, pending.pod), rng)
        if choice is None:
            sim.defer()
        else:
            if chose is not None:
                chose(snap.names[choice])
            sim.place(choice)
        pending = sim.next_decision()
    return sim.result()
