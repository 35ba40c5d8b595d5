"""The real-node lab's DRS job mix as simulator workloads ``lab-under``, ``lab-flat`` and ``lab-honest``.

Why it exists: drsched's model lost to the default scheduler on the lab's four real nodes (``rn-*`` in
``policy.sim.cluster``), and the question is whether the simulator shows the same. That needs the lab's
jobs in the simulator: this module draws ``policy.labworld``'s ``core``-shape jobs (its ``MIX`` weights,
a template size drawn uniformly per kind as ``lab.schedule.make_schedule`` does, its request variants) at
the ``--scale`` the lab's DRS runs used. What it adds to the lab's world is how long a unit of work takes.
The module owns no state.

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

from policy.labworld import MIX, SHAPES, TEMPLATES, VARIANTS, Template, cpu_request_m, scaled_units
from policy.sim.errors import UnknownClassError
from policy.sim.jobs import JobSpec

LAB_SCALE = 0.5
"""``python -m lab run --scale`` of the lab's DRS runs (lab/results/drs-quiet-2026-11-30/notes.md)."""
WORK_SIGMA = 0.1
"""Lognormal sigma of a job's work around its template's (real solo runtimes vary by about this)."""
CPU_SECONDS_PER_UNIT = 0.0065
"""Seconds a cpu or train unit takes on a whole core: the median solo runtime on the lab's ``rn-small`` / 4,
since a job there gets a quarter core (lab/results/drs-quiet-2026-11-30/jobs.csv)."""
TEMPLATES_BY_KIND: dict[str, tuple[Template, ...]] = {
    kind: tuple(TEMPLATES[f"{kind}-{size}"] for size in sizes) for kind, sizes in SHAPES["core"].items()}
"""The lab's ``core``-shape templates per kind, in the order a size is drawn."""


def seconds_per_unit(template: Template) -> float:
    """Seconds one unit of ``template`` takes on a whole core (module doc)."""
    if template.kind in ("cpu", "train"):
        return CPU_SECONDS_PER_UNIT
    args = dict(a.removeprefix("--").split("=", 1) for a in template.args if "=" in a)
    return int(args["chunk-bytes"]) / (float(args["bandwidth"]) * 2**20)


def work(template: Template, scale: float = LAB_SCALE) -> float:
    """Seconds alone on a whole core at ``scale`` (units rounded as the lab rounds them)."""
    return scaled_units(template.units, scale) * seconds_per_unit(template)


def demand(template: Template) -> tuple[float, float, float, float]:
    """The template's use when alone, in ``policy.state`` units."""
    return (template.cpu_use_m / 1000, template.mem_use_mi / 1024, template.net_mbit / 8, template.io_mbps)


def lab_variant(workload: str) -> str | None:
    """The request variant of a ``lab-<variant>`` workload name, or None for any other workload."""
    if not workload.startswith("lab-"):
        return None
    variant = workload.removeprefix("lab-")
    if variant not in VARIANTS:
        raise UnknownClassError("lab workload", workload, [f"lab-{v}" for v in VARIANTS])
    return variant


def sample_lab(variant: str, n: int, rng: np.random.Generator, *, scale: float = LAB_SCALE) -> list[JobSpec]:
    """Draw ``n`` lab jobs with ``variant`` requests (submit time 0; arrivals set it)."""
    if variant not in VARIANTS:
        raise UnknownClassError("lab request variant", variant, VARIANTS)
    kinds = [k for k, _ in MIX]
    weights = np.array([w for _, w in MIX])
    drawn = rng.choice(len(kinds), size=n, p=weights / weights.sum())
    out = []
    for k in drawn:
        options = TEMPLATES_BY_KIND[kinds[int(k)]]
        tpl = options[int(rng.integers(len(options)))]
        seconds = work(tpl, scale) * float(np.exp(WORK_SIGMA * rng.standard_normal()))
        requests = (cpu_request_m(tpl.cpu_use_m, variant) / 1000, tpl.mem_use_mi / 1024)
        out.append(JobSpec(tpl.kind, seconds, requests, demand(tpl)))
    return out
