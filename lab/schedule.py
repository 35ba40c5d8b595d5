"""The seeded schedule of real jobs every arm of an experiment runs: which job, when, with what demand.

Why it exists: arms are only comparable when they see the very same jobs at the very same offsets, so the
schedule is a pure function of (seed, size, regime, variant) and is written to ``schedule.csv`` before the
first arm runs. Jobs are ``python -m workloads`` kinds with DRS-like demands: cpu and train are single-
threaded compute (they use a whole core when the node has one, the node's quota otherwise), io copies
through a bandwidth cap on the state volume, net streams through a capped socket (to an in-pod sink, so
its traffic never crosses a shaped node link: see the README). Each job's size is a few tens of seconds
alone on the large node.

Requests: ``under`` (the default) asks for ``REQUEST_RATIO`` of the CPU a job uses and no CPU limit, as
batch pods commonly do; ``flat`` asks every pod for ``FLAT_REQUEST_M`` whatever it uses, as pods that leave
their request to a namespace's LimitRange default do (so the request tells the scheduler nothing about which
job is heavy); ``honest`` asks for what it uses, up to ``HONEST_CAP_M``. Memory is requested as used in all
three (limit: twice that).
"""

from __future__ import annotations

import csv
import io
import math
import random
from dataclasses import asdict, dataclass, fields

from lab.errors import LabError

REQUEST_RATIO = 0.2  # cpu request / cpu use of every job in the 'under' variant
# 'honest' requests are capped here: the most CPU a medium node has free next to the drsched agents, so that a
# single-threaded job asking for its whole core still fits three of the four nodes.
HONEST_CAP_M = 450
FLAT_REQUEST_M = 100  # every pod's cpu request in the 'flat' variant
VARIANTS = ("under", "flat", "honest")
REGIMES = ("drs", "straggler")
# The DRS mix: mostly compute, a tail of io and net jobs.
MIX = (("cpu", 0.4), ("train", 0.2), ("io", 0.2), ("net", 0.2))


@dataclass(frozen=True)
class Template:
    """One job shape: its workloads arguments and its demand when it runs alone (cpu in millicores)."""

    kind: str
    size: str
    units: int
    args: tuple[str, ...]
    cpu_use_m: int
    mem_use_mi: int
    net_mbit: float
    io_mbps: float

    @property
    def key(self) -> str:
        return f"{self.kind}-{self.size}"

    def argv(self, *, scale: float = 1.0) -> list[str]:
        return [self.kind, "--state-dir=/state", f"--units={scaled_units(self.units, scale)}", *self.args]


def scaled_units(units: int, scale: float) -> int:
    return max(1, int(round(units * scale)))


# About 13-27 s alone on a whole core (cpu: 6.7 ms a unit at --work=20000; train: ~8 ms a unit), io and net
# ~15 s at their cap whatever the node.
TEMPLATES: dict[str, Template] = {t.key: t for t in (
    Template("cpu", "s", 2000, ("--work=20000",), 1000, 64, 0.0, 0.0),
    Template("cpu", "l", 4000, ("--work=20000",), 1000, 64, 0.0, 0.0),
    Template("train", "m", 2000, (), 1000, 128, 0.0, 0.0),
    Template("io", "m", 60, ("--chunk-bytes=1048576", "--bandwidth=4"), 100, 96, 0.0, 4.0 * 1.048576),
    Template("net", "m", 240, ("--start-sink", "--chunk-bytes=262144", "--bandwidth=4"), 100, 96,
             4.0 * 1.048576 * 8, 0.0),
)}  # fmt: skip
SIZES = {"cpu": ("s", "l"), "train": ("m",), "io": ("m",), "net": ("m",)}

# The 'fraction' job shape: cpu and train jobs capped at a fraction of a core (workloads --cores), so a node
# holds several of them, as in the simulator the policy was trained in (a job at most about one small node);
# units chosen for about the same time alone as the whole-core templates. io and net are already small.
FRACTION_CPU, FRACTION_TRAIN = 0.3, 0.5
TEMPLATES.update({t.key: t for t in (
    Template("cpu", "fs", 600, ("--work=20000", f"--cores={FRACTION_CPU}"), 300, 64, 0.0, 0.0),
    Template("cpu", "fl", 1200, ("--work=20000", f"--cores={FRACTION_CPU}"), 300, 64, 0.0, 0.0),
    Template("train", "fm", 1000, (f"--cores={FRACTION_TRAIN}",), 500, 128, 0.0, 0.0),
)})  # fmt: skip
SHAPES = {"core": SIZES, "fraction": {"cpu": ("fs", "fl"), "train": ("fm",), "io": ("m",), "net": ("m",)}}


def variant_text(variant: str) -> str:
    """How a variant sets cpu requests, in words (help texts and reports)."""
    return {"under": f"cpu request = {REQUEST_RATIO:g} x use, no cpu limit",
            "flat": f"cpu request = {FLAT_REQUEST_M} m for every pod (0.1 x use for cpu/train, 1 x for io/net), "
                    "no cpu limit",
            "honest": f"cpu request = use, at most {HONEST_CAP_M} m"}[variant]


def cpu_request_m(template: Template, variant: str) -> int:
    if variant == "under":
        request = template.cpu_use_m * REQUEST_RATIO
    elif variant == "flat":
        request = FLAT_REQUEST_M
    else:
        request = min(template.cpu_use_m, HONEST_CAP_M)
    return max(10, int(math.ceil(request)))


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
        t = TEMPLATES[self.template]
        return [t.kind, "--state-dir=/state", f"--units={self.units}", *t.args]


def make_schedule(*, seed: int, jobs: int = 12, window_s: float = 60.0, regime: str = "drs",
                  variant: str = "under", scale: float = 1.0, shape: str = "core") -> list[Job]:
    """``jobs`` jobs drawn from the DRS mix, arriving as a Poisson process over about ``window_s`` seconds.

    The straggler regime submits everything within 30 s and makes each job 2.5x longer, so jobs are still
    running when a node slows down. ``scale`` shrinks or grows every job (the demo uses < 1). ``shape``
    ``core`` runs cpu and train jobs on a whole core, ``fraction`` caps them at a fraction of one (same
    draws, so the same seed gives the same kinds, sizes and times in both)."""
    if regime not in REGIMES:
        raise ScheduleError(f"regime {regime!r} is not one of {', '.join(REGIMES)}")
    if shape not in SHAPES:
        raise ScheduleError(f"shape {shape!r} is not one of {', '.join(SHAPES)}")
    if variant not in VARIANTS:
        raise ScheduleError(f"variant {variant!r} is not one of {', '.join(VARIANTS)}")
    if jobs < 1 or window_s <= 0 or scale <= 0:
        raise ScheduleError("jobs must be >= 1, window_s and scale > 0")
    rng = random.Random(f"drsched-lab:{seed}")
    if regime == "straggler":
        window_s, scale = min(window_s, 30.0), scale * 2.5
    kinds, weights = zip(*MIX, strict=True)
    out: list[Job] = []
    t = 0.0
    for i in range(jobs):
        kind = rng.choices(kinds, weights=weights)[0]
        tpl = TEMPLATES[f"{kind}-{rng.choice(SHAPES[shape][kind])}"]
        out.append(Job(
            job=f"j{i:03d}", template=tpl.key, kind=kind, submit_s=round(t, 2), units=scaled_units(tpl.units, scale),
            cpu_use_m=tpl.cpu_use_m, mem_use_mi=tpl.mem_use_mi,
            cpu_request_m=cpu_request_m(tpl, variant), mem_request_mi=tpl.mem_use_mi,
            net_mbit=tpl.net_mbit, io_mbps=tpl.io_mbps,
        ))  # fmt: skip
        t += rng.expovariate(jobs / window_s)
    return out


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
