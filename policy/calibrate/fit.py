"""Scoring a parameter set on measured runs, and fitting one by grid search.

Why it exists: the calibration's verdict is two numbers per resource kind — the median and the 90th
percentile of the per-job relative error of the predicted run slowdown — on seeds the parameters were not
fitted on. This module computes them for any ``ContentionParams`` and searches a small grid of parameter
sets for the one with the least ``median + p90`` error on the fitting seeds. The grid is explicit and small
(the cpu, network and disk sharing rules, cpu efficiency, interference), so the search is exhaustive and
its result reproducible. The module owns no state.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from policy.calibrate.host import held_back, system_busy, system_speed
from policy.calibrate.labdata import LabDataError, LabRuns
from policy.calibrate.replay import PLAIN, Machine, Prediction, replay
from policy.sim.sharing import SHARES, ContentionParams

log = logging.getLogger(__name__)

GRID: dict[str, tuple] = {
    "cpu_share": SHARES,
    "request_exponent": (1.0, 0.75, 0.5, 0.25),
    "cpu_efficiency": (1.0, 0.95, 0.9, 0.85, 0.8),
    "interference": (0.0, 0.03, 0.06, 0.1, 0.15, 0.2, 0.3),
}
"""Every combination of these values is tried; other parameters (network and disk sharing: the lab's jobs do
not saturate either) keep their original values unless the caller's grid names them."""


@dataclass(frozen=True)
class Errors:
    """Median and p90 of the per-job relative error, over ``n`` jobs (NaN when there are none)."""

    n: int
    median: float
    p90: float

    @classmethod
    def of(cls, predictions: Sequence[Prediction]) -> Errors:
        return cls.of_values([p.error for p in predictions])

    @classmethod
    def of_values(cls, errors: Sequence[float] | np.ndarray) -> Errors:
        """From the per-job relative errors themselves."""
        err = np.asarray(errors, dtype=np.float64)
        if not len(err):
            return cls(0, float("nan"), float("nan"))
        return cls(len(err), float(np.median(err)), float(np.percentile(err, 90)))

    @property
    def loss(self) -> float:
        return self.median + self.p90


def predict(runs: LabRuns, params: ContentionParams, seeds: Iterable[int] | None = None, *,
            machine: Machine = PLAIN) -> list[Prediction]:
    """Replay every (seed, arm, variant) run of ``runs`` (only ``seeds`` if given) under ``params``."""
    keep = set(runs.seeds if seeds is None else seeds)
    groups: dict[tuple, list] = {}
    for j in runs.jobs:
        if j.seed in keep:
            groups.setdefault(j.run, []).append(j)
    out: list[Prediction] = []
    for (seed, arm, variant), jobs in sorted(groups.items()):
        events = [e for e in runs.events if e.seed == seed and e.arm == arm]
        limits = held_back(jobs, runs.nodes, events, runs.node_usage.get((seed, arm, variant), ()),
                           cpu_bound=machine.cpu_bound, margin_m=machine.held_margin_m,
                           per_node=machine.host_held == "node") if machine.host_held else []
        speed = []
        if machine.system_slowdown:
            ticks = runs.system_ticks.get((seed, arm, variant), [])
            if len(ticks) < 2:
                raise LabDataError(runs.path / "system.csv", 0, "", f"run {(seed, arm, variant)} has no system "
                                   f"CPU samples to model host {machine.speed} from")
            speed = system_speed(system_busy(ticks), machine.system_slowdown)
        out.extend(replay(jobs, runs.nodes, events, params, machine=machine,
                          usage=runs.usage.get((seed, arm, variant), ()), limits=limits, speed=speed))
    return out


def by_kind(predictions: Sequence[Prediction]) -> dict[str, Errors]:
    """Errors over all jobs (key ``all``) and per job kind."""
    kinds = sorted({p.job.kind for p in predictions})
    return {"all": Errors.of(predictions), **{k: Errors.of([p for p in predictions if p.job.kind == k])
                                             for k in kinds}}


def grid(grid: dict[str, tuple] | None = None) -> list[ContentionParams]:
    """Every parameter set of ``grid`` (default ``GRID``)."""
    grid = GRID if grid is None else grid
    names = list(grid)
    sets = [ContentionParams(**dict(zip(names, values, strict=True))) for values in itertools.product(*grid.values())]
    # the exponent only matters under 'requests' shares: keep one of each otherwise-equal set
    return list(dict.fromkeys(p if p.cpu_share == "requests" else replace(p, request_exponent=1.0) for p in sets))


def fit(runs: LabRuns, seeds: Sequence[int], *, candidates: Sequence[ContentionParams] | None = None,
        machines: Sequence[Machine] = (PLAIN,)) -> tuple[ContentionParams, Machine, Errors]:
    """The candidate (default: ``grid()``) and machine with the least median + p90 error on ``seeds``; ties
    keep the earlier pair, so the original rule wins a tie when it is in the grid's first corner. Several
    ``machines`` fit what the runs do not record (e.g. how much CPU the host left to the nodes) jointly."""
    best: tuple[ContentionParams, Machine, Errors] | None = None
    for machine in machines:
        for params in grid() if candidates is None else candidates:
            err = Errors.of(predict(runs, params, seeds, machine=machine))
            if best is None or err.loss < best[2].loss - 1e-12:
                best = (params, machine, err)
    if best is None:
        raise ValueError("fit needs at least one candidate parameter set and machine")
    log.info("fit done best=%s machine=%s loss=%.4f", best[0].as_dict(), best[1], best[2].loss)
    return best
