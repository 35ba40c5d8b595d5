"""The real-node lab's job mixes as simulator workloads: ``lab-<variant>`` (the DRS world) and
``lab-<world>-<variant>`` (any other world of ``policy.labworld.WORLDS``, e.g. ``lab-multi-resource-under``).

Why it exists: drsched's model lost to the default scheduler on the lab's four real nodes (``rn-*`` in
``policy.sim.cluster``), and the question is whether the simulator shows the same; before a lab scenario
runs, the simulator's copy of it predicts each arm's ratio. That needs the lab's jobs in the simulator: this
module draws a world's ``core``-shape jobs (its mix weights, a template size drawn uniformly per kind from
``World.template_sizes`` as ``lab.schedule.make_schedule`` does, its request variants) at the ``--scale``
the lab's runs of that world use (``World.scale``). What it adds to the lab's world is how long a unit of
work takes. The module owns no state.

Units are ``policy.state``'s: cpu cores (``cpu_use_m`` / 1000), memory GiB (MiB / 1024), net MB/s (the
lab's profile annotation: Mbit/s / 8), disk MB/s. A job's work is its seconds alone on a whole core:
``units x seconds per unit``. io and net jobs move ``--chunk-bytes`` per unit through a ``--bandwidth``
MiB/s cap, so their seconds per unit follow from their arguments; cpu and train units were timed on the
lab's ``rn-small`` (``CPU_SECONDS_PER_UNIT``), so those two are measurements. Each job's demand is its
template's exactly (the lab annotates every pod with its true use), and work varies by a small lognormal
factor for the run-to-run noise of real runtimes.
"""

from __future__ import annotations

import numpy as np

from policy.labworld import DEFAULT_WORLD, TEMPLATES, VARIANTS, WORLDS, Template, cpu_request_m, scaled_units
from policy.sim.arrivals import offered_work
from policy.sim.errors import UnknownClassError
from policy.sim.jobs import JobSpec

JOB_SHAPE = "core"
"""The lab's job shape the simulator draws (``policy.labworld.SHAPES``): whole-core cpu and train jobs."""
WORK_SIGMA = 0.1
"""Lognormal sigma of a job's work around its template's (real solo runtimes vary by about this)."""
CPU_SECONDS_PER_UNIT = 0.0065
"""Seconds a cpu or train unit takes on a whole core: the median solo runtime on the lab's ``rn-small`` / 4,
since a job there gets a quarter core (results/lab/drs-quiet-2026-11-30/jobs.csv)."""


def templates(world: str, kind: str) -> tuple[Template, ...]:
    """The ``JOB_SHAPE`` templates a ``kind`` job of ``world`` is drawn from, in the order a size is drawn."""
    return tuple(TEMPLATES[f"{kind}-{size}"] for size in WORLDS[world].template_sizes(JOB_SHAPE, kind))


def seconds_per_unit(template: Template) -> float:
    """Seconds one unit of ``template`` takes on a whole core (module doc)."""
    if template.kind in ("cpu", "train"):
        return CPU_SECONDS_PER_UNIT
    args = dict(a.removeprefix("--").split("=", 1) for a in template.args if "=" in a)
    return int(args["chunk-bytes"]) / (float(args["bandwidth"]) * 2**20)


def work(template: Template, scale: float = WORLDS[DEFAULT_WORLD].scale) -> float:
    """Seconds alone on a whole core at ``scale`` (units rounded as the lab rounds them)."""
    return scaled_units(template.units, scale) * seconds_per_unit(template)


def demand(template: Template) -> tuple[float, float, float, float]:
    """The template's use when alone, in ``policy.state`` units."""
    return (template.cpu_use_m / 1000, template.mem_use_mi / 1024, template.net_mbit / 8, template.io_mbps)


def lab_workload(world: str, variant: str) -> str:
    """The workload name of ``world``'s jobs with ``variant`` requests (module doc)."""
    return f"lab-{variant}" if world == DEFAULT_WORLD else f"lab-{world}-{variant}"


LAB_WORKLOADS: dict[str, tuple[str, str]] = {lab_workload(w, v): (w, v) for w in WORLDS for v in VARIANTS}
"""Every lab workload name -> (world, request variant)."""


def parse_lab_workload(workload: str) -> tuple[str, str] | None:
    """(world, request variant) of a lab workload name (``lab-...``), or None for any other workload."""
    if not workload.startswith("lab-"):
        return None
    if workload not in LAB_WORKLOADS:
        raise UnknownClassError("lab workload", workload, list(LAB_WORKLOADS))
    return LAB_WORKLOADS[workload]


def sample_lab(variant: str, n: int, rng: np.random.Generator, *, world: str = DEFAULT_WORLD,
               scale: float | None = None) -> list[JobSpec]:
    """Draw ``n`` jobs of ``world`` with ``variant`` requests at ``scale`` (None: the world's, ``World.scale``), submit
    time 0 (arrivals set it)."""
    if variant not in VARIANTS:
        raise UnknownClassError("lab request variant", variant, VARIANTS)
    if world not in WORLDS:
        raise UnknownClassError("lab world", world, list(WORLDS))
    scale = WORLDS[world].scale if scale is None else scale
    mix = WORLDS[world].mix
    kinds = [k for k, _ in mix]
    weights = np.array([w for _, w in mix])
    options_of = {k: templates(world, k) for k in kinds}
    drawn = rng.choice(len(kinds), size=n, p=weights / weights.sum())
    out = []
    for k in drawn:
        options = options_of[kinds[int(k)]]
        tpl = options[int(rng.integers(len(options)))]
        seconds = work(tpl, scale) * float(np.exp(WORK_SIGMA * rng.standard_normal()))
        requests = (cpu_request_m(tpl.cpu_use_m, variant) / 1000, tpl.mem_use_mi / 1024)
        out.append(JobSpec(tpl.kind, seconds, requests, demand(tpl)))
    return out


def window_load(world: str, n_jobs: int, window_s: float, total_capacity, *, scale: float | None = None) -> float:
    """The offered load (``policy.sim.arrivals``) of a lab run of ``world``: ``n_jobs`` jobs arriving over
    ``window_s`` seconds (``lab.schedule``'s Poisson rate, ``n_jobs / window_s``) on nodes of ``total_capacity``
    together, in expectation over the world's mix and sizes (``scale`` as ``sample_lab``'s)."""
    scale = WORLDS[world].scale if scale is None else scale
    mix = WORLDS[world].mix
    per_job = sum(weight * float(np.mean([offered_work([JobSpec(t.kind, work(t, scale), (0.0, 0.0), demand(t))],
                                                       total_capacity) for t in templates(world, kind)]))
                  for kind, weight in mix) / sum(w for _, w in mix)
    return n_jobs / window_s * per_job
