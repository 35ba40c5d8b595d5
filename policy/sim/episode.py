"""The one episode loop: run a simulated cluster to the end under a scheduler, for every caller.

Why it exists: training's evaluation callback, ``python -m policy.evaluate`` (placement and migration
arms), the benchmark and the tests all need "run this policy on this episode to the end"; they share this
loop so a decision is made the same way everywhere. At each decision the scheduler sees the simulator's
``ClusterSnapshot``, the pod's ``PodView`` and ``policy.features.feasible_mask`` (what the extender sees);
a node scorer picks through ``policy.baselines.pick`` (feasible nodes only, random tie-break, as
kube-scheduler's selectHost). The gymnasium env steps the same simulator one decision at a time instead.

Scorer specs on the command line: a baseline name (``default-k8s``) or ``dqn:<model.npz>``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from policy.baselines import make_scorer, pick
from policy.features import feasible_mask
from policy.model import ModelScorer, Scorer, load_model
from policy.sim.config import SimConfig
from policy.sim.engine import Simulator
from policy.sim.metrics import RunResult
from policy.sim.migration import Controller
from policy.state import ClusterSnapshot, PodView

Choose = Callable[[ClusterSnapshot, PodView, np.ndarray], "int | None"]
"""``choose(snapshot, pod, feasible_mask)`` -> a node index, or ``None`` to defer the pod."""


def run(sim: Simulator, choose: Choose) -> RunResult:
    """Run ``sim`` to the end, asking ``choose`` at every decision; returns the simulator's result."""
    while (pending := sim.next_decision()) is not None:
        snap = sim.snapshot()
        pod = pending.pod
        node = choose(snap, pod, feasible_mask(snap, pod))
        if node is None:
            sim.defer()
        else:
            sim.place(int(node))
    return sim.result()


def first_feasible(snapshot: ClusterSnapshot, pod: PodView, mask: np.ndarray) -> int | None:
    """The trivial policy: the lowest-index node that fits."""
    return int(mask.argmax()) if mask.any() else None


def scorer_choice(scorer: Scorer, rng: np.random.Generator) -> Choose:
    """A ``Choose`` that places on ``scorer``'s best feasible node (ties at random from ``rng``); a scorer
    with a ``chose(node_name)`` hook (round-robin) is told each choice."""
    chose = getattr(scorer, "chose", None)

    def choose(snap: ClusterSnapshot, pod: PodView, mask: np.ndarray) -> int | None:
        node = pick(scorer.score(snap, pod), mask, rng)
        if node is not None and chose is not None:
            chose(snap.names[node])
        return node

    return choose


def run_episode(cfg: SimConfig, seed: int, scorer: Scorer, *, controller: Controller | None = None,
                tie_seed: int | None = None) -> RunResult:
    """Simulate ``cfg`` with ``seed`` (the workload depends on these alone) under ``scorer``, with a migration
    ``controller`` if given. Ties are broken from ``tie_seed`` (default: ``seed``)."""
    sim = Simulator(cfg, seed=seed, controller=controller)
    return run(sim, scorer_choice(scorer, np.random.default_rng(seed if tie_seed is None else tie_seed)))


def scorer_from_spec(spec: str, *, seed: int = 0) -> Scorer:
    """``"dqn:<path>"`` loads an exported model (``ModelError`` if it cannot); anything else names a baseline
    (``UnknownScorer`` if none has that name)."""
    if spec.startswith("dqn:"):
        path = spec.removeprefix("dqn:")
        return ModelScorer(load_model(path), name=scorer_label(spec))
    return make_scorer(spec, seed=seed)


def scorer_label(spec: str) -> str:
    """The name a spec is reported under: ``dqn:<file stem>`` for a model, the baseline's name otherwise."""
    return f"dqn:{Path(spec.removeprefix('dqn:')).stem}" if spec.startswith("dqn:") else spec
