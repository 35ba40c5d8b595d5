"""The real-node lab's DRS job mix as simulator workloads ``lab-under``, ``lab-flat`` and ``lab-honest``.

Why it exists: drsched's model lost to the default scheduler on the lab's four real nodes (``rn-*`` in
``policy.sim.cluster``), and the question is whether the simulator shows the same. That needs the lab's
jobs in the simulator: this module mirrors ``lab/schedule.py``'s ``core``-shape mix (its ``MIX`` weights,
its ``TEMPLATES`` use, a template size drawn uniformly per kind as ``make_schedule`` does) at the
``--scale`` the lab's DRS runs used, and its three request variants. ``policy`` may not import ``lab`` (an
import contract keeps the simulator free of cluster code), so the numbers are written here and
``tests/unit/policy/sim/test_labmix.py`` keeps them equal to ``lab.schedule``'s. The module owns no state.

Units are ``policy.state``'s: cpu cores (``cpu_use_m`` / 1000), memory GiB (MiB / 1024), net MB/s (the
lab's profile annotation: Mbit/s / 8), disk MB/s. A job's work is its seconds alone on a whole core:
``units x seconds per unit``. io and net jobs move ``chunk`` bytes per unit through a 4 MiB/s cap, so their
seconds per unit follow from their arguments; cpu and train units were timed on the lab's ``rn-small``
(median solo runtime / 4, since a job there gets a quarter core: lab/results/drs-quiet-2026-11-30/jobs.csv),
so those two are measurements. Each job's demand is its template's exactly (the lab annotates every pod
with its true use), and work varies by a small lognormal factor for the run-to-run noise of real runtimes.

Requests (``lab/schedule.py``'s variants): ``under`` asks for ``REQUEST_RATIO`` x cpu use (at least 10 m),
``flat`` for ``FLAT_REQUEST_M`` whatever the use, ``honest`` for the use up to ``HONEST_CAP_M``; memory is
requested as used in all three.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from policy.sim.errors import UnknownClassError
from policy.sim.jobs import JobSpec

REQUEST_RATIO = 0.2
FLAT_REQUEST_M = 100
HONEST_CAP_M = 450
MIN_REQUEST_M = 10
VARIANTS = ("under", "flat", "honest")
LAB_SCALE = 0.5
"""``python -m lab run --scale`` of the lab's DRS runs (lab/results/drs-quiet-2026-11-30/notes.md)."""
MIX = (("cpu", 0.4), ("train", 0.2), ("io", 0.2), ("net", 0.2))
WORK_SIGMA = 0.1
"""Lognormal sigma of a job's work around its template's (real solo runtimes vary by about this)."""


@dataclass(frozen=True, slots=True)
class LabTemplate:
    """One job shape of the lab: ``lab.schedule.Template``'s numbers plus seconds per unit on a whole core."""

    kind: str
    size: str
    units: int
    cpu_use_m: int
    mem_use_mi: int
    net_mbit: float
    io_mbps: float
    seconds_per_unit: float

    def work(self, scale: float = LAB_SCALE) -> float:
        """Seconds alone on a whole core at ``scale`` (units rounded as the lab rounds them)."""
        return max(1, int(round(self.units * scale))) * self.seconds_per_unit

    @property
    def demand(self) -> tuple[float, float, float, float]:
        return (self.cpu_use_m / 1000, self.mem_use_mi / 1024, self.net_mbit / 8, self.io_mbps)


_MIB = 1.048576  # MB per MiB
TEMPLATES: dict[str, tuple[LabTemplate, ...]] = {
    "cpu": (LabTemplate("cpu", "s", 2000, 1000, 64, 0.0, 0.0, 0.0065),
            LabTemplate("cpu", "l", 4000, 1000, 64, 0.0, 0.0, 0.0065)),
    "train": (LabTemplate("train", "m", 2000, 1000, 128, 0.0, 0.0, 0.0065),),
    "io": (LabTemplate("io", "m", 60, 100, 96, 0.0, 4.0 * _MIB, 1.0 / 4.0),),  # 1 MiB chunks at 4 MiB/s
    "net": (LabTemplate("net", "m", 240, 100, 96, 4.0 * _MIB * 8, 0.0, 0.25 / 4.0),),  # 256 KiB at 4 MiB/s
}


def cpu_request_m(cpu_use_m: int, variant: str) -> int:
    """The cpu request of a job using ``cpu_use_m`` under ``variant`` (module doc), millicores."""
    if variant == "under":
        request = cpu_use_m * REQUEST_RATIO
    elif variant == "flat":
        request = FLAT_REQUEST_M
    elif variant == "honest":
        request = min(cpu_use_m, HONEST_CAP_M)
    else:
        raise UnknownClassError("lab request variant", variant, VARIANTS)
    return max(MIN_REQUEST_M, int(math.ceil(request)))


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
    kinds = [k for k, _ in MIX]
    weights = np.array([w for _, w in MIX])
    drawn = rng.choice(len(kinds), size=n, p=weights / weights.sum())
    out = []
    for k in drawn:
        options = TEMPLATES[kinds[int(k)]]
        tpl = options[int(rng.integers(len(options)))]
        work = tpl.work(scale) * float(np.exp(WORK_SIGMA * rng.standard_normal()))
        requests = (cpu_request_m(tpl.cpu_use_m, variant) / 1000, tpl.mem_use_mi / 1024)
        out.append(JobSpec(tpl.kind, work, requests, tpl.demand))
    return out
