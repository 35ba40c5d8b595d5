"""The real-node lab's job mixes as simulator workloads: ``lab-<variant>`` (the DRS world) and
``lab-<world>-<variant>`` (any other world of ``policy.labworld.WORLDS``, e.g. ``lab-multi-resource-under``), with
``-<shape>`` after them for a job shape other than ``core`` (e.g. ``lab-misleading-small``), and ``-x0.4`` last for
the jobs of the lab's isolated frame (``policy.labworld.ISOLATED_SCALE``: ``lab-multi-resource-under-x0.4``).

Why it exists: drsched's model lost to the default scheduler on the lab's four real nodes (``rn-*`` in
``policy.sim.cluster``), and the question is whether the simulator shows the same; before a lab scenario
runs, the simulator's copy of it predicts each arm's ratio. That needs the lab's jobs in the simulator: this
module draws a world's jobs of one job shape (its mix weights, a template size drawn uniformly per kind from
``World.template_sizes`` as ``lab.schedule.make_schedule`` does, its request variants; for ``misleading`` one
use / request ratio per template and episode, drawn from the same table the lab draws from) at the ``--scale``
the lab's runs of that world use (``World.scale``). What it adds to the lab's world is how long a unit of
work takes. The module owns no state.

Units are ``policy.state``'s: cpu cores (``cpu_use_m`` / 1000), memory GiB (MiB / 1024), net MB/s (the
lab's profile annotation: Mbit/s / 8), disk MB/s. A job's work is its seconds alone on a whole core:
``units x seconds per unit``. io and net jobs move ``--chunk-bytes`` per unit through a ``--bandwidth``
MiB/s cap, so their seconds per unit follow from their arguments; cpu and train units were timed on the
lab's ``rn-small`` (``CPU_SECONDS_PER_UNIT``), so those two are measurements; a compute job capped below a
core (``--cores``: the fraction and small shapes) takes that many times longer, at its cap. Each job's demand is its
template's exactly (the lab annotates every pod with its true use), and work varies by a small lognormal
factor for the run-to-run noise of real runtimes.

The isolated frame (``node_scale`` below 1): host isolation shrinks the lab's nodes by one factor and its jobs with
them (``policy.labworld.scaled_template``: cpu use scaled, compute work in as many fewer units, each that much
longer, so a job's seconds alone are unchanged), and the lab computes each request from the scaled use with the
scaled caps and the unscaled floor (``cpu_request_m(..., node_scale=...)``: 80 m and 10 m in ``under``). Drawn here
the same way, with the same random draws as at 1.0, so a seed's jobs, work and arrival times are the same in both
frames; only the cpu figures, and the requests the floor keeps from scaling, differ. The nodes to match are
``policy.sim.cluster``'s ``mr-iso-*`` and ``mr-lab-*``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from policy.labworld import (
    ALIBABA_USE_PER_REQUEST,
    COMPUTE_KINDS,
    DEFAULT_WORLD,
    ISOLATED_SCALE,
    SHAPES,
    TEMPLATES,
    VARIANTS,
    WORLDS,
    Template,
    cpu_request_m,
    scaled_template,
    scaled_units,
)
from policy.sim.arrivals import offered_work
from policy.sim.errors import UnknownClassError
from policy.sim.jobs import JobSpec

JOB_SHAPE = "core"
"""The job shape a lab workload draws unless its name says another (``policy.labworld.SHAPES``): whole-core cpu
and train jobs, the lab's default."""
WORK_SIGMA = 0.1
"""Lognormal sigma of a job's work around its template's (real solo runtimes vary by about this)."""
CPU_SECONDS_PER_UNIT = 0.0065
"""Seconds a cpu or train unit takes on a whole core: the median solo runtime on the lab's ``rn-small`` / 4,
since a job there gets a quarter core (results/lab/drs-quiet-2026-11-30/jobs.csv)."""


def templates(world: str, kind: str, shape: str = JOB_SHAPE) -> tuple[Template, ...]:
    """The ``shape`` templates a ``kind`` job of ``world`` is drawn from, in the order a size is drawn."""
    return tuple(TEMPLATES[f"{kind}-{size}"] for size in WORLDS[world].template_sizes(shape, kind))


def seconds_per_unit(template: Template) -> float:
    """Seconds one unit of ``template`` takes alone with what it uses (module doc): a compute unit's time on a
    whole core, longer by the job's ``--cores`` cap below one."""
    if template.kind in COMPUTE_KINDS:
        return CPU_SECONDS_PER_UNIT * max(1.0, 1000 / template.cpu_use_m)
    args = dict(a.removeprefix("--").split("=", 1) for a in template.args if "=" in a)
    return int(args["chunk-bytes"]) / (float(args["bandwidth"]) * 2**20)


def work(template: Template, scale: float = WORLDS[DEFAULT_WORLD].scale) -> float:
    """Seconds alone (at its demand) at ``scale`` (units rounded as the lab rounds them)."""
    return scaled_units(template.units, scale) * seconds_per_unit(template)


def demand(template: Template) -> tuple[float, float, float, float]:
    """The template's use when alone, in ``policy.state`` units."""
    return (template.cpu_use_m / 1000, template.mem_use_mi / 1024, template.net_mbit / 8, template.io_mbps)


class LabWorkload(NamedTuple):
    """What a lab workload name says: the world, the request variant, the job shape and the nodes' scale."""

    world: str
    variant: str
    shape: str = JOB_SHAPE
    node_scale: float = 1.0


NODE_SCALES = (1.0, ISOLATED_SCALE)
"""The frames a lab workload is drawn in: the world as described, and the lab's isolated nodes (module doc)."""


def lab_workload(world: str, variant: str, shape: str = JOB_SHAPE, node_scale: float = 1.0) -> str:
    """The workload name of ``world``'s ``shape`` jobs with ``variant`` requests in the frame of ``node_scale``
    (module doc)."""
    name = f"lab-{variant}" if world == DEFAULT_WORLD else f"lab-{world}-{variant}"
    name = name if shape == JOB_SHAPE else f"{name}-{shape}"
    return name if node_scale == 1.0 else f"{name}-x{node_scale:g}"


LAB_WORKLOADS: dict[str, LabWorkload] = {
    lab_workload(w, v, s, f): LabWorkload(w, v, s, f) for w in WORLDS for v in VARIANTS for s in SHAPES
    for f in NODE_SCALES}
"""Every lab workload name -> what it says (``LabWorkload``)."""


def parse_lab_workload(workload: str) -> LabWorkload | None:
    """What a lab workload name (``lab-...``) says, or None for any other workload."""
    if not workload.startswith("lab-"):
        return None
    if workload not in LAB_WORKLOADS:
        raise UnknownClassError("lab workload", workload, list(LAB_WORKLOADS))
    return LAB_WORKLOADS[workload]


def sample_lab(variant: str, n: int, rng: np.random.Generator, *, world: str = DEFAULT_WORLD,
               scale: float | None = None, shape: str = JOB_SHAPE, node_scale: float = 1.0) -> list[JobSpec]:
    """Draw ``n`` ``shape`` jobs of ``world`` with ``variant`` requests at ``scale`` (None: the world's,
    ``World.scale``), submit time 0 (arrivals set it), on nodes ``node_scale`` times the world's (module doc).
    ``misleading`` first draws one use / request ratio per template from ``ALIBABA_USE_PER_REQUEST`` (the
    episode's workloads, as a lab seed's)."""
    if variant not in VARIANTS:
        raise UnknownClassError("lab request variant", variant, VARIANTS)
    if world not in WORLDS:
        raise UnknownClassError("lab world", world, list(WORLDS))
    if shape not in SHAPES:
        raise UnknownClassError("lab job shape", shape, list(SHAPES))
    scale = WORLDS[world].scale if scale is None else scale
    mix = WORLDS[world].mix
    kinds = [k for k, _ in mix]
    weights = np.array([w for _, w in mix])
    options_of = {k: templates(world, k, shape) for k in kinds}
    ratio = ({t.key: float(rng.choice(ALIBABA_USE_PER_REQUEST)) for k in kinds for t in options_of[k]}
             if variant == "misleading" else {})
    drawn = rng.choice(len(kinds), size=n, p=weights / weights.sum())
    out = []
    for k in drawn:
        options = options_of[kinds[int(k)]]
        tpl = options[int(rng.integers(len(options)))]
        tpl = scaled_template(tpl, node_scale)  # its key, which the ratio is drawn by, stays
        seconds = work(tpl, scale) * float(np.exp(WORK_SIGMA * rng.standard_normal()))
        requests = (cpu_request_m(tpl.cpu_use_m, variant, node_scale=node_scale, ratio=ratio.get(tpl.key)) / 1000,
                    tpl.mem_use_mi / 1024)
        out.append(JobSpec(tpl.kind, seconds, requests, demand(tpl)))
    return out


def window_load(world: str, n_jobs: int, window_s: float, total_capacity, *, scale: float | None = None,
                shape: str = JOB_SHAPE) -> float:
    """The offered load (``policy.sim.arrivals``) of a lab run of ``world``: ``n_jobs`` jobs arriving over
    ``window_s`` seconds (``lab.schedule``'s Poisson rate, ``n_jobs / window_s``) on nodes of ``total_capacity``
    together, in expectation over the world's mix and sizes (``scale`` and ``shape`` as ``sample_lab``'s)."""
    scale = WORLDS[world].scale if scale is None else scale
    mix = WORLDS[world].mix
    per_job = sum(weight * float(np.mean([offered_work([JobSpec(t.kind, work(t, scale), (0.0, 0.0), demand(t))],
                                                       total_capacity) for t in templates(world, kind, shape)]))
                  for kind, weight in mix) / sum(w for _, w in mix)
    return n_jobs / window_s * per_job
