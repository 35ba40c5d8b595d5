"""The simulator's sharing rule over one job's stay on a node, its co-runners' measured comings and goings given.

Why it exists: ``policy.calibrate.replay`` predicts every job of a run jointly from the measured starts, so one
job's error moves its co-runners'. To judge the sharing rule one job at a time, the focal job is replayed alone
against its node's measured occupancy: ``policy.sharing.shared_rates`` on the focal job and the co-runners present,
recomputed whenever one of them starts or finishes (as the simulator's ``Fleet`` recomputes per event), and the
focal job's work integrated at those rates until done. The co-runners' presence is measured, not re-simulated, so
their own rates never matter. Used by ``results/policy/net-check`` (rule "S") and
``results/policy/calibration/replay-host``. Units are ``policy.state``'s (cores, GiB, MB/s); times in seconds.
The module owns no state.

Inputs are the focal job's start, work, demand and requests and the co-runners' windows: never the focal job's
own finish, so a prediction takes nothing from the outcome it predicts except through the co-runners' finishes
(which a slow focal job lengthens).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from policy.errors import ConfigError
from policy.sharing import ContentionParams, shared_rates

MIN_RATE = 1e-9
"""A rate below this counts as this (a job the rule starves still finishes, very late)."""

TEMPLATE_OF = {("cpu", 800): "cpu-s", ("cpu", 1600): "cpu-l", ("train", 800): "train-m", ("io", 60): "io-m",
               ("net", 240): "net-p"}
"""The multi-resource lab's ``jobs.csv`` (kind, ``work`` units) -> ``policy.labworld.TEMPLATES`` key, in the
isolated frame (node scale 0.4: 0.4 x 2000 / 4000 / 2000 units)."""


class CoRunner(NamedTuple):
    """Another job on the focal job's node: present from ``start`` until ``finish`` (``math.inf``: still running
    when the run ended), with its demand (4 values) and requests (cpu, memory)."""

    start: float
    finish: float
    demand: Sequence[float]
    requests: Sequence[float]


def rate_schedule(start: float, demand: Sequence[float], requests: Sequence[float], others: Sequence[CoRunner],
                  capacity: Sequence[float], params: ContentionParams) -> list[tuple[float, float]]:
    """(from, rate) of a job on a node of ``capacity`` from ``start`` on: one entry at ``start`` and one at each
    later start or finish of ``others``, each rate held until the next entry (the last one for ever)."""

    def rate_at(t: float) -> float:
        here = [o for o in others if o.start <= t < o.finish]
        rates = shared_rates([o.demand for o in here] + [demand], [o.requests for o in here] + [requests],
                             capacity, params)
        return max(rates[-1], MIN_RATE)

    events = sorted({x for o in others for x in (o.start, o.finish) if start < x < math.inf})
    return [(t, rate_at(t)) for t in (start, *events)]


def run_time(schedule: Sequence[tuple[float, float]], work: float, *, speed: float = 1.0) -> float:
    """Seconds from the schedule's first entry until ``work`` (seconds at rate 1) is done at the schedule's rates
    times ``speed`` (the work a CPU-second does against the solo runs)."""
    if not speed > 0:
        raise ConfigError("speed", f"must be > 0, got {speed}")
    start = t = schedule[0][0]
    for k, (_, rate) in enumerate(schedule):
        nxt = schedule[k + 1][0] if k + 1 < len(schedule) else math.inf
        x = rate * speed
        if t + work / x <= nxt:
            return t + work / x - start
        work -= x * (nxt - t)
        t = nxt
    raise AssertionError("unreachable: the last interval is unbounded")
