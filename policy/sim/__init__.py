"""drsched's cluster simulator: heterogeneous nodes, contention, arrivals, traces, failures, metrics.

Pure Python + numpy (no gymnasium, no torch). The public API is re-exported here:

    sim = Simulator(SimConfig(cluster="mixed:16", load=0.9), seed=1)
    while (p := sim.next_decision()) is not None:
        sim.place(choose(sim.snapshot(), p.pod, sim.feasible_mask()))   # or sim.defer()
    sim.result().summary()

or simply ``run(sim, choose)``, or ``run_episode(config, seed, scorer)`` (``policy.sim.episode``: the one loop
every evaluation uses). See each module's docstring for the model it owns.
"""

from policy.sim.arrivals import offered_work
from policy.sim.cluster import MIXED_WEIGHTS, NODE_TYPES, Nodes, NodeType, parse_cluster
from policy.sim.config import SimConfig
from policy.sim.contention import fair_rates
from policy.sim.engine import PendingPod, Simulator
from policy.sim.errors import (
                               ActionError,
                               ConfigError,
                               InfeasiblePlacement,
                               NoPendingPod,
                               SimError,
                               TraceError,
                               UnknownClassError,
)
from policy.sim.events import NodeFailure, Straggler, random_stragglers
from policy.sim.jobs import JOB_CLASSES, JobClass, JobSpec
from policy.sim.metrics import RunResult, imbalance
from policy.sim.traces import Trace, load_alibaba, load_csv

__all__ = [
    "ActionError", "ConfigError", "InfeasiblePlacement", "JOB_CLASSES", "JobClass", "JobSpec", "MIXED_WEIGHTS",
    "NODE_TYPES", "NoPendingPod", "NodeFailure", "NodeType", "Nodes", "PendingPod", "RunResult", "SimConfig",
    "SimError", "Simulator", "Straggler", "Trace", "TraceError", "UnknownClassError", "fair_rates", "first_feasible",
    "imbalance", "load_alibaba", "load_csv", "offered_work", "parse_cluster", "random_stragglers", "run",
    "run_episode", "scorer_from_spec",
]

_EPISODE = ("first_feasible", "run", "run_episode", "scorer_from_spec")


def __getattr__(name: str):
    # The episode loop sits above the scorers (policy.baselines, policy.model): importing it lazily keeps
    # ``import policy.sim`` to the simulator itself.
    if name in _EPISODE:
        from policy.sim import episode

        return getattr(episode, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
