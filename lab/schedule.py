"""The seeded schedule of real jobs every arm of an experiment runs: which job, when, with what demand.

Why it exists: arms are only comparable when they see the very same jobs at the very same offsets, so the
schedule is a pure function of (seed, size, regime, variant, world) and is written to ``schedule.csv`` before
the first arm runs. The jobs themselves -- templates, the worlds' mixes, job shapes and request variants -- are
the lab's world, described once in ``policy.labworld`` (the simulator replays the same); this module draws a
schedule from one world (``policy.labworld.WORLDS``: its nodes and mix) and owns the ``schedule.csv`` format
(one column per ``Job`` field). Each job's size is a few tens of seconds alone on the large node.
"""

from __future__ import annotations

import csv
import io
import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

from lab.errors import LabError
from policy.labworld import (
    ALIBABA_USE_PER_REQUEST,
    COMPUTE_KINDS,
    DEFAULT_WORLD,
    FLAT_REQUEST_M,
    HONEST_CAP_M,
    MIN_REQUEST_M,
    MISLEADING_LEVEL,
    MISLEADING_MAX_REQUEST_M,
    REQUEST_RATIO,
    RUN_JOBS,
    SHAPES,
    SOURCE_ENV,
    TEMPLATES,
    VARIANTS,
    WORLDS,
    RealNodeShape,
    World,
    compute_args,
    cpu_request_m,
    misleading_ratio,
    node_scale,
    scaled_template,
    scaled_units,
)
from policy.straggler import RULES, draw_fault
from policy.straggler import WINDOW_S as STRAGGLER_WINDOW_S
from policy.straggler import WORK as STRAGGLER_WORK

REGIMES = ("drs", "straggler")
STRAGGLER_NODE = "rn-large"
"""The node the straggler regime degrades unless told otherwise (the landed straggler runs')."""
SEEDED = "seed"
"""The straggler node named this (``--straggler-node seed``, a protocol's ``scenario.straggler_node``): each seed
draws its own degraded node, cut and whether the cut is transient, by the straggler pilot's rule
(``policy.straggler.RULES``, ``draw_straggler``)."""
SEEDED_RULES = tuple(RULES)
"""Every name that makes each seed draw its fault (``seed``, ``seed-loaded``: ``policy.straggler.RULES``)."""


@dataclass(frozen=True)
class Straggler:
    """The straggler regime's fault in one arm: ``node``'s cpu quota cut to ``quota_m`` at ``at_s`` seconds into
    the arm, back to the node's own at ``restore_s`` (None: permanent, until the arm ends)."""

    node: str
    at_s: float
    quota_m: int
    restore_s: float | None = None


def draw_straggler(seed: int, shapes: Sequence[RealNodeShape], *, at_s: float, rule: str = SEEDED) -> Straggler:
    """Issue #21's straggler as ``rule`` (``policy.straggler.RULES``) draws it for ``seed``: a seed-chosen node's
    quota cut 2-4x at ``at_s``, permanent in about half the seeds, restored later in the rest. ``shapes`` are the
    nodes the cluster really got (the cut follows their quotas). A generator of its own, keyed by the seed, so the
    schedule's draws do not move and every arm of a seed meets the same fault."""
    fault = draw_fault(rule, seed, [(s.name, s.cpu_millis) for s in shapes], at_s=at_s)
    cpu = {s.name: s.cpu_millis for s in shapes}[fault.node]
    return Straggler(fault.node, at_s, fault.quota_m(cpu, MIN_REQUEST_M), fault.restore_s)


@dataclass(frozen=True)
class Draw:
    """How a seed's schedule is drawn. ``DEFAULTS`` is the one record of what a run draws when nothing says
    otherwise: ``make_schedule``'s, ``lab.plan.Plan``'s and the ``lab run`` / ``lab schedule`` flags' defaults."""

    jobs: int = RUN_JOBS
    window_s: float = 60.0
    """Jobs arrive over about this long."""
    regime: str = "drs"
    variant: str = "under"
    scale: float | None = None
    """The work factor; None: the world's (``policy.labworld.World.scale``)."""
    shape: str = "core"
    world: str = DEFAULT_WORLD


DEFAULTS = Draw()


def variant_text(variant: str) -> str:
    """How a variant sets cpu requests, in words (help texts and reports)."""
    return {"under": f"cpu request = {REQUEST_RATIO:g} x use, no cpu limit",
            "flat": f"cpu request = {FLAT_REQUEST_M} m for every pod (0.1 x use for cpu/train, 1 x for io/net), "
                    "no cpu limit",
            "honest": f"cpu request = use, at most {HONEST_CAP_M} m",
            "misleading": f"cpu request = {MISLEADING_LEVEL:.3f} x use / a per-workload ratio drawn per seed from the "
                          f"Alibaba 2018 sample's use / request ({min(ALIBABA_USE_PER_REQUEST):g}-"
                          f"{max(ALIBABA_USE_PER_REQUEST):g}), at most {MISLEADING_MAX_REQUEST_M} m, no cpu limit",
            }[variant]


class ScheduleError(LabError, ValueError):
    """A schedule or schedule file that cannot be used; the message names the file, line and field."""


@dataclass(frozen=True)
class Job:
    """One job of the schedule. ``submit_s`` is the offset from the arm's start."""

    job: str
    template: str
    kind: str
    submit_s: float
    units: int
    cpu_use_m: int
    mem_use_mi: int
    cpu_request_m: int
    mem_request_mi: int
    net_mbit: float
    io_mbps: float

    def argv(self) -> list[str]:
        """The job's ``python -m workloads`` arguments; a compute job's ``--cores`` cap follows its ``cpu_use_m``
        (so a job scaled to smaller nodes, ``policy.labworld.scaled_template``, is capped to match)."""
        t = TEMPLATES[self.template]
        args = compute_args(t.args, cpu_use_m=self.cpu_use_m) if t.kind in COMPUTE_KINDS else t.args
        return [t.kind, "--state-dir=/state", f"--units={self.units}", *args]


def make_schedule(*, seed: int, jobs: int = DEFAULTS.jobs, window_s: float = DEFAULTS.window_s,
                  regime: str = DEFAULTS.regime, variant: str = DEFAULTS.variant, scale: float | None = DEFAULTS.scale,
                  shape: str = DEFAULTS.shape, world: World = WORLDS[DEFAULTS.world],
                  shapes: Sequence[RealNodeShape] | None = None) -> list[Job]:
    """``jobs`` jobs drawn from ``world``'s mix, arriving as a Poisson process over about ``window_s`` seconds.

    The straggler regime submits everything within 30 s and makes each job 2.5x longer, so jobs are still
    running when a node slows down. ``scale`` shrinks or grows every job (None: the world's, ``World.scale``).
    ``shape`` ``core`` runs cpu and train jobs on a whole core, ``fraction`` caps them at a fraction of one (same
    draws, so the same seed gives the same kinds, sizes and times in both). ``world`` (``policy.labworld.WORLDS``)
    gives the mix the kinds are drawn from and the template sizes of each kind (``World.template_sizes``): the
    ``drs`` world draws exactly what this function drew before worlds existed. ``shapes`` are the nodes the
    cluster really got (None: ``world.nodes``): smaller than the world's (host isolation), every job follows by
    the same factor (``policy.labworld.node_scale``, ``scaled_template``; the same draws again), and a job that
    would then not fit where it fitted before is a ``ScheduleError`` (``check_fit``)."""
    if regime not in REGIMES:
        raise ScheduleError(f"regime {regime!r} is not one of {', '.join(REGIMES)}")
    if shape not in SHAPES:
        raise ScheduleError(f"shape {shape!r} is not one of {', '.join(SHAPES)}")
    if variant not in VARIANTS:
        raise ScheduleError(f"variant {variant!r} is not one of {', '.join(VARIANTS)}")
    scale = world.scale if scale is None else scale
    if jobs < 1 or window_s <= 0 or scale <= 0:
        raise ScheduleError("jobs must be >= 1, window_s and scale > 0")
    shapes = world.nodes if shapes is None else shapes
    rng = random.Random(f"drsched-lab:{seed}")
    if regime == "straggler":
        window_s, scale = min(window_s, STRAGGLER_WINDOW_S), scale * STRAGGLER_WORK
    kinds, weights = zip(*world.mix, strict=True)
    factor = node_scale(shapes)
    out: list[Job] = []
    t = 0.0
    for i in range(jobs):
        kind = rng.choices(kinds, weights=weights)[0]
        tpl = scaled_template(TEMPLATES[f"{kind}-{rng.choice(world.template_sizes(shape, kind))}"], factor)
        out.append(Job(
            job=f"j{i:03d}", template=tpl.key, kind=kind, submit_s=round(t, 2), units=scaled_units(tpl.units, scale),
            cpu_use_m=tpl.cpu_use_m, mem_use_mi=tpl.mem_use_mi,
            cpu_request_m=cpu_request_m(tpl.cpu_use_m, variant, node_scale=factor,
                                        ratio=_ratio(variant, seed, tpl.key)), mem_request_mi=tpl.mem_use_mi,
            net_mbit=tpl.net_mbit, io_mbps=tpl.io_mbps,
        ))  # fmt: skip
        t += rng.expovariate(jobs / window_s)
    check_fit(out, shapes, variant=variant, described=world.nodes, seed=seed)
    return out


def _ratio(variant: str, seed: int, workload: str) -> float | None:
    """The workload's use / request where the variant has one (``misleading``), else None."""
    return misleading_ratio(seed, workload) if variant == "misleading" else None


def check_fit(jobs: Sequence[Job], shapes: Sequence[RealNodeShape], *, variant: str,
              described: Sequence[RealNodeShape] = WORLDS[DEFAULT_WORLD].nodes, seed: int = 0) -> None:
    """Every job must fit, by its cpu request, each node its template fits in the world as described (the same
    template and variant on the world's nodes ``described``, matched by node type); the smallest such node,
    since quotas only grow from there; ``seed`` is the schedule's, for the ``misleading`` variant's ratios. Raises
    ``ScheduleError`` naming the job and the node."""
    sizes = {s.node_type: s.cpu_millis for s in described}
    for job in jobs:
        asked = cpu_request_m(TEMPLATES[job.template].cpu_use_m, variant, ratio=_ratio(variant, seed, job.template))
        room = [s for s in shapes if s.node_type in sizes and asked <= sizes[s.node_type]]
        if not room:
            continue  # a job that fits no described node either: the world's own choice, not the scaling's
        smallest = min(room, key=lambda s: s.cpu_millis)
        if job.cpu_request_m > smallest.cpu_millis:
            raise ScheduleError(f"job {job.job} ({job.template}) asks for {job.cpu_request_m} m cpu, more than node "
                                f"{smallest.name} has ({smallest.cpu_millis} m), where it fits at the described "
                                "sizes: the jobs were not scaled with the nodes")


def uses_source(jobs: Sequence[Job]) -> bool:
    """Whether any job pulls its data from the lab's source (a template reading ``SOURCE_ENV``)."""
    return any(f"--source-env={SOURCE_ENV}" in TEMPLATES[j.template].args for j in jobs)


COLUMNS = tuple(f.name for f in fields(Job))
_TYPES = {f.name: f.type for f in fields(Job)}


def schedule_csv(schedule: list[Job]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for job in schedule:
        writer.writerow(asdict(job))
    return buf.getvalue()


def parse_schedule(text: str, *, path: str) -> list[Job]:
    """The jobs of a ``schedule.csv``; a bad header, row or field raises ``ScheduleError`` naming where."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or tuple(rows[0]) != COLUMNS:
        raise ScheduleError(f"{path}:1: header must be {','.join(COLUMNS)}")
    out, seen = [], set()
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(COLUMNS):
            raise ScheduleError(f"{path}:{line}: expected {len(COLUMNS)} fields, got {len(row)}")
        values: dict[str, object] = {}
        for name, raw in zip(COLUMNS, row, strict=True):
            kind = _TYPES[name]
            try:
                value = int(raw) if kind == "int" else float(raw) if kind == "float" else raw
            except ValueError:
                raise ScheduleError(f"{path}:{line}: field {name!r}: {raw!r} is not a {kind}") from None
            if isinstance(value, int | float) and (not math.isfinite(value) or value < 0):
                raise ScheduleError(f"{path}:{line}: field {name!r}: {raw!r} must be a finite number >= 0")
            values[name] = value
        if values["template"] not in TEMPLATES:
            raise ScheduleError(f"{path}:{line}: field 'template': unknown {values['template']!r} "
                                f"(known: {', '.join(TEMPLATES)})")
        if values["job"] in seen or not str(values["job"]).replace("-", "").isalnum():
            raise ScheduleError(f"{path}:{line}: field 'job': {values['job']!r} is repeated or not a DNS label")
        seen.add(values["job"])
        out.append(Job(**values))  # type: ignore[arg-type]
    if not out:
        raise ScheduleError(f"{path}: no jobs")
    return out
