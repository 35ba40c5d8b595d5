"""Job classes and the expected-demand profiles a scheduler sees instead of true demand.

Why it exists: the value of a load-aware scheduler comes from the gap between what pods *request* and what
they *use*. A ``JobSpec`` carries both, plus the work (seconds when alone) and the ``expected`` demand
profile shown to the scheduler (``PodView.demand``), drawn with a configurable error so the value of good
profiles can be measured. The module owns the class presets (immutable); it keeps no other state.

DRS classes (the DRS paper's pod profiles), converted to absolute units on a ``standard`` node (4 cores, 16 GiB,
125 MB/s net, 200 MB/s disk). DRS profiles cap cpu at "25 % of node ⇒ 100", so video and disk were at least
one core; net/disk percentages used DRS's own scale, so the MB/s below are our choice, sized so that two net
jobs or three io jobs saturate a standard node. Every DRS pod requests 500m cpu (and we add 0.5 GiB memory),
so requests differ from use:

=====  ===================  ====  =======  ========  =========  ========
class  meaning              cpu   mem GiB  net MB/s  disk MB/s  work s
=====  ===================  ====  =======  ========  =========  ========
cpu    ffmpeg video scale   2.0   1.0      1.0       2.0        60
net    data transmission    0.5   1.0      60.0      0.5        60
io     file read + copy     1.0   1.0      0.5       80.0       60
batch  generic trace task   0.8×  1.6×     5.0×      10.0×      60
=====  ===================  ====  =======  ========  =========  ========

Each demand is multiplied per job by an independent lognormal factor ``exp(σ z)`` (median 1, σ =
``demand_sigma``), work by ``exp(work_sigma z)``. ``batch`` requests are 1 core / 2 GiB × lognormal(0.5)
and its demand (the × entries) scales with the drawn cpu request.

Profiles (``with_profiles``): ``noisy`` = true demand × lognormal(profile_error); ``class`` = the mean true
demand of the job's class in this workload × lognormal(profile_error); ``requests`` = (req cpu, req mem,
0, 0), shown as no profile (``demand_known`` 0); ``learned`` = what a deployment serves: the profile learned
from the measured usage of earlier pods of the same class (``policy.profiles``), kept by the engine, and no
profile until it is trusted. ``profile_error=0`` with ``noisy`` is exact. ``without_profiles`` marks a share
of pods as having no profile at all (standalone pods).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from policy.sim.errors import ConfigError, UnknownClassError

Vec4 = tuple[float, float, float, float]


@dataclass(frozen=True, slots=True)
class JobSpec:
    """One pod's workload. ``demand`` is true use alone; ``expected`` is what the scheduler is told."""

    kind: str
    work: float
    requests: tuple[float, float]
    demand: Vec4
    submit: float = 0.0
    expected: Vec4 | None = None
    demand_source: str = "sim"
    """Where ``expected`` comes from (``PodView.demand_source``): ``sim`` (drawn), ``requests`` (no profile:
    scored from requests) or ``learned`` (the engine serves the workload's learned profile at decision time)."""


@dataclass(frozen=True, slots=True)
class JobClass:
    """Parameters of one job class (see module table)."""

    name: str
    requests: tuple[float, float]
    demand: Vec4
    work: float
    demand_sigma: float = 0.25
    work_sigma: float = 0.3
    request_sigma: float = 0.0
    scale_with_request: bool = False

    def sample(self, rng: np.random.Generator, n: int) -> list[JobSpec]:
        """Draw ``n`` jobs of this class (submit time 0; arrivals set it)."""
        req = np.tile(np.asarray(self.requests), (n, 1)) * np.exp(self.request_sigma * rng.standard_normal((n, 2)))
        dem = np.asarray(self.demand) * np.exp(self.demand_sigma * rng.standard_normal((n, 4)))
        if self.scale_with_request:
            dem *= (req[:, 0] / self.requests[0])[:, None]
        work = self.work * np.exp(self.work_sigma * rng.standard_normal(n))
        return [JobSpec(self.name, float(w), (float(r[0]), float(r[1])), tuple(map(float, d)))
                for w, r, d in zip(work, req, dem, strict=True)]


JOB_CLASSES: dict[str, JobClass] = {
    c.name: c
    for c in (
        JobClass("cpu", (0.5, 0.5), (2.0, 1.0, 1.0, 2.0), 60.0),
        JobClass("net", (0.5, 0.5), (0.5, 1.0, 60.0, 0.5), 60.0),
        JobClass("io", (0.5, 0.5), (1.0, 1.0, 0.5, 80.0), 60.0),
        JobClass("batch", (1.0, 2.0), (0.8, 1.6, 5.0, 10.0), 60.0, demand_sigma=0.4, work_sigma=0.8,
                 request_sigma=0.5, scale_with_request=True),
    )
}
MIXES: dict[str, dict[str, float]] = {"drs": {"cpu": 1.0, "net": 1.0, "io": 1.0}, "batch": {"batch": 1.0}}
PROFILES = ("noisy", "class", "requests", "learned")


def parse_mix(mix: str) -> dict[str, float]:
    """``"drs"``, ``"batch"`` or explicit weights ``"cpu:2,io:1"`` → {class: probability}."""
    if mix in MIXES:
        weights = MIXES[mix]
    else:
        weights = {}
        for part in mix.split(","):
            name, _, w = part.strip().partition(":")
            if name not in JOB_CLASSES:
                raise UnknownClassError("job class", name, [*JOB_CLASSES, *MIXES, "alibaba"])
            try:
                weights[name] = float(w or 1.0)
            except ValueError:
                raise ConfigError("workload", f"{mix!r}: weight {w!r} of {name!r} is not a number") from None
    total = sum(weights.values())
    if not total > 0 or any(w < 0 for w in weights.values()):
        raise ConfigError("workload", f"{mix!r}: weights must be >= 0 with a positive sum")
    return {k: w / total for k, w in weights.items()}


def sample_mix(mix: dict[str, float], n: int, rng: np.random.Generator) -> list[JobSpec]:
    """Draw ``n`` jobs whose classes follow ``mix``, in random order."""
    names = list(mix)
    kinds = rng.choice(len(names), size=n, p=[mix[k] for k in names])
    pools = {i: iter(JOB_CLASSES[names[i]].sample(rng, int(np.sum(kinds == i)))) for i in range(len(names))}
    return [next(pools[int(k)]) for k in kinds]


def with_profiles(jobs: Sequence[JobSpec], profile: str, error: float, rng: np.random.Generator) -> list[JobSpec]:
    """Return ``jobs`` with ``expected`` filled by the ``profile`` rule (module doc)."""
    if profile not in PROFILES:
        raise UnknownClassError("profile", profile, PROFILES)
    if not error >= 0:
        raise ConfigError("profile_error", f"must be >= 0, got {error}")
    if not jobs:
        return []
    if profile in ("requests", "learned"):  # learned: the engine replaces this at decision time once trusted
        return [replace(j, expected=(j.requests[0], j.requests[1], 0.0, 0.0), demand_source=profile) for j in jobs]
    base = np.array([j.demand for j in jobs])
    if profile == "class":
        kinds = np.array([j.kind for j in jobs])
        for k in set(kinds.tolist()):
            base[kinds == k] = base[kinds == k].mean(axis=0)
    noisy = base * np.exp(error * rng.standard_normal(base.shape)) if error > 0 else base
    return [replace(j, expected=tuple(map(float, e))) for j, e in zip(jobs, noisy, strict=True)]


def without_profiles(jobs: Sequence[JobSpec], share: float, rng: np.random.Generator) -> list[JobSpec]:
    """Return ``jobs`` with each pod, with probability ``share``, left without a profile (scored from requests)."""
    if not 0 <= share <= 1:
        raise ConfigError("unprofiled", f"must be in [0, 1], got {share}")
    drop = rng.random(len(jobs)) < share
    return [replace(j, expected=(j.requests[0], j.requests[1], 0.0, 0.0), demand_source="requests") if d else j
            for j, d in zip(jobs, drop, strict=True)]
