"""Run metrics: the numbers a scheduler is judged by, computed from what the engine recorded.

Why it exists: the evaluator, the benchmark and the tests must compute slowdown, JCT and imbalance one way.
``RunResult`` is an immutable record; ``imbalance`` is the one formula for the DRS load-imbalance metric.
The module owns no state.

Definitions:
    JCT        finish − submit (waiting included), finished jobs only
    slowdown   JCT / work (work = seconds when alone), so 1.0 is a job that never waited or shared
    makespan   last finish − first submit
    utilisation  per sample tick, Σ usage / Σ capacity over ready nodes, per resource
    imbalance  per sample tick, mean over resources of the population std across ready nodes of
               usage / capacity (DRS §3.4); reported as the mean over the ticks of the run
    migrations           moves carried out; migration_rollbacks: allowed moves whose targets were all full
    lost_work            work seconds redone because of restarts (migrations and node failures)
    choice_share         share of decisions (pods offered to the policy) with >= 2 feasible nodes: where
                         placement can matter at all
    excess_queue         Σ waiting / work over jobs (queued for a node or restoring) / finished jobs: the part
                         of ``excess_slowdown`` no placement of *this* pod changes directly
    excess_contention    excess_slowdown − excess_queue: time lost sharing nodes (and redoing lost work);
                         the split is exact when every job finished
    placements           (job kind, node type) of every placement the scheduler made, in decision order (a
                         job restarted after a node failure counts again; migrations do not count);
                         ``placement_counts`` tallies them per node type
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def imbalance(usage: np.ndarray, capacity: np.ndarray) -> float:
    """Mean over resources of the std across nodes of the utilisation fraction; 0 for fewer than 2 nodes."""
    if len(usage) < 2:
        return 0.0
    return float(np.mean(np.std(usage / capacity, axis=0)))


def placement_counts(placements, kinds) -> dict[str, int]:
    """How many of ``placements`` ((job kind, node type) pairs) of a job of one of ``kinds`` went to each node
    type; node types no such job went to are absent."""
    out: dict[str, int] = {}
    for kind, node_type in placements:
        if kind in kinds:
            out[node_type] = out.get(node_type, 0) + 1
    return out


@dataclass(frozen=True, eq=False)
class RunResult:
    """Outcome of one run. Arrays over finished jobs are in finish order."""

    n_jobs: int
    finished: int
    unschedulable: int
    unfinished: int
    restarts: int
    skipped_rows: int
    jct: np.ndarray
    slowdown: np.ndarray
    kinds: tuple[str, ...]
    makespan: float
    tick_times: np.ndarray
    utilisation: np.ndarray
    imbalance_series: np.ndarray
    excess_integral: float
    migrations: int = 0
    migration_rollbacks: int = 0
    lost_work: float = 0.0
    decisions: int = 0
    choices: int = 0
    queue_integral: float = 0.0
    placements: tuple[tuple[str, str], ...] = ()

    @property
    def mean_slowdown(self) -> float:
        return float(self.slowdown.mean()) if self.finished else float("nan")

    @property
    def excess_slowdown(self) -> float:
        """Mean slowdown − 1: the share of time jobs lost to waiting and contention."""
        return self.mean_slowdown - 1.0

    @property
    def choice_share(self) -> float:
        return self.choices / self.decisions if self.decisions else float("nan")

    @property
    def excess_queue(self) -> float:
        return self.queue_integral / self.finished if self.finished else float("nan")

    @property
    def excess_contention(self) -> float:
        return self.excess_slowdown - self.excess_queue

    @property
    def mean_jct(self) -> float:
        return float(self.jct.mean()) if self.finished else float("nan")

    @property
    def p95_jct(self) -> float:
        return float(np.percentile(self.jct, 95)) if self.finished else float("nan")

    @property
    def imbalance(self) -> float:
        """Time-averaged load imbalance (mean over the sample ticks)."""
        return float(self.imbalance_series.mean()) if len(self.imbalance_series) else 0.0

    @property
    def mean_utilisation(self) -> np.ndarray:
        """(4,) mean cluster utilisation per resource over the sample ticks."""
        return self.utilisation.mean(axis=0) if len(self.utilisation) else np.zeros(4)

    def summary(self) -> dict[str, float]:
        """Flat scalar metrics, named as in docs and charts."""
        util = self.mean_utilisation
        return {
            "jobs": self.n_jobs, "finished": self.finished, "unschedulable": self.unschedulable,
            "unfinished": self.unfinished, "restarts": self.restarts, "mean_slowdown": self.mean_slowdown,
            "excess_slowdown": self.excess_slowdown, "mean_jct": self.mean_jct, "p95_jct": self.p95_jct,
            "makespan": self.makespan, "imbalance": self.imbalance, "util_cpu": float(util[0]),
            "util_mem": float(util[1]), "util_net": float(util[2]), "util_disk": float(util[3]),
            "migrations": self.migrations, "migration_rollbacks": self.migration_rollbacks,
            "lost_work": self.lost_work, "choice_share": self.choice_share, "excess_queue": self.excess_queue,
            "excess_contention": self.excess_contention,
        }
