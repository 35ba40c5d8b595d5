"""Hand-written node scorers, all deciding on the same ``ClusterSnapshot`` and ``PodView`` as the DQN.

Each scorer returns one float per node, higher is better; ``-inf`` marks a node the scorer itself refuses
(Koordinator's hot-node filter). Feasibility by requests is not a scorer's business: callers combine the
scores with ``policy.features.feasible_mask`` through ``pick``. Each formula lives in its own small module
with its source in the docstring and a table test in ``tests/unit/policy/baselines/``.

| name          | reads                      | rule                                                    |
|---------------|----------------------------|---------------------------------------------------------|
| default-k8s   | requests                   | NodeResourcesFit LeastAllocated + BalancedAllocation    |
| tlp           | measured cpu               | Trimaran TargetLoadPacking, target 40 %                 |
| lvrb          | measured cpu, mem          | Trimaran LoadVariationRiskBalancing, margin 1, sens. 1  |
| koord         | measured cpu, mem          | Koordinator LoadAware: hot filter 65/95 %, least-used   |
| demand-aware  | measured usage + profile   | minimise the highest utilisation after placing the pod  |
| lookahead     | measured usage + profile   | minimise the contention model's predicted added excess  |
| lookahead-time| ... + progress, run time   | the same over the newcomer's stay, knowing who leaves when |
| worst-fit     | measured usage + profile   | the reverse: maximise it, smallest node first (control)  |
| random        | nothing                    | uniform                                                 |
| round-robin   | nothing                    | next feasible node after the last one chosen            |
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from policy.baselines.default_k8s import DefaultK8s
from policy.baselines.demand_aware import DemandAware
from policy.baselines.koord import Koord
from policy.baselines.lookahead import Lookahead, LookaheadTime
from policy.baselines.simple import RandomScorer, RoundRobin
from policy.baselines.trimaran import LoadVariationRiskBalancing, TargetLoadPacking
from policy.baselines.worst_fit import WorstFit
from policy.features import DEFAULT_MAX_USAGE_AGE
from policy.model import Scorer

__all__ = ["SCORERS", "Scorer", "UnknownScorer", "make_scorer", "pick"]

class UnknownScorer(KeyError):
    """A scorer name that is not in ``SCORERS``."""

    def __str__(self) -> str:
        return f"unknown scorer {self.args[0]!r}; known: {', '.join(SCORERS)}"


SCORERS: dict[str, Callable[..., Scorer]] = {
    "default-k8s": DefaultK8s,
    "tlp": TargetLoadPacking,
    "lvrb": LoadVariationRiskBalancing,
    "koord": Koord,
    "demand-aware": DemandAware,
    "lookahead": Lookahead,
    "lookahead-time": LookaheadTime,
    "worst-fit": WorstFit,
    "random": RandomScorer,
    "round-robin": RoundRobin,
}


_LOAD_AWARE = (TargetLoadPacking, LoadVariationRiskBalancing, Koord, DemandAware, Lookahead, LookaheadTime, WorstFit)


def make_scorer(name: str, *, seed: int = 0, max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> Scorer:
    """Build a fresh scorer by name; ``seed`` feeds the ones that draw random numbers, ``max_usage_age`` the
    ones that read measured usage (so they and ``policy.features`` agree on which nodes are stale)."""
    try:
        factory = SCORERS[name]
    except KeyError:
        raise UnknownScorer(name) from None
    if factory is RandomScorer:
        return factory(seed=seed)
    if factory in _LOAD_AWARE:
        return factory(max_usage_age=max_usage_age)
    return factory()


def pick(scores: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None) -> int | None:
    """Index of the best feasible node, ties broken uniformly at random (as kube-scheduler's selectHost does).

    Returns None when no node is feasible or every feasible node was refused (-inf).
    """
    allowed = mask & np.isfinite(scores)
    if not allowed.any():
        return None
    best = np.max(scores[allowed])
    ties = np.flatnonzero(allowed & (scores >= best))
    if len(ties) == 1 or rng is None:
        return int(ties[0])
    return int(ties[rng.integers(len(ties))])
