"""Trace replay: jobs from CSV files, including the Alibaba-2018 batch sample shipped in PyPI ``spar``.

Why it exists: synthetic arrivals train the policy, traces test it on real request/usage/duration mixes.
Parsing is strict: a bad value raises ``TraceError`` naming file, line and field, unless ``skip_bad_rows`` is
set, in which case the row is skipped and counted in ``Trace.skipped``. The module owns one cache: the
parsed Alibaba tables (``_alibaba_table``), read once per process (spar's instance file has 3 M rows).

Windows. An episode replays ``limit`` consecutive pods (in submit order). With no ``start`` the first one
is drawn from the caller's generator, so each seed replays a different window of the trace rather than
the same first pods; submit times are shifted so the window starts at 0.

Generic format (a header row naming these columns, any order, extra columns ignored), one pod per row, in
``policy.state`` units:

    submit   seconds, >= 0              req_cpu  cores requested, >= 0       cpu   cores used alone, >= 0
    class    free label, non-empty      req_mem  GiB requested, >= 0         mem   GiB used, >= 0
    work     seconds alone, > 0                                              net   MB/s used, >= 0
                                                                             disk  MB/s used, >= 0

Alibaba-2018 adapter (spar's ``data/samples``, one hour, no header), two files joined on (job_id, task_name):
    sample_tasks.csv      arrival_s, job_id, task_name, duration_s, plan_cpu, plan_mem, instance_num
    sample_instances.csv  arrival_s, job_id, task_name, instance_name, duration_s, cpu_avg, mem_avg
One pod per instance, the first ``max_instances`` of each task in file order (default 1 per task):
    submit     = the task's arrival_s
    request    = the task's plan: plan_cpu / 100 × cpu_scale cores (100 = one core), plan_mem × mem_per_unit GiB
    demand     = the instance's measured usage: cpu_avg / 100 × cpu_scale cores, mem_avg × mem_per_unit GiB.
                 spar's sample carries averages only (no cpu_max / mem_max), so bursts above the average
                 are not modelled
    work       = clip(instance duration_s, min_work, max_work) (43 k of 3.06 M instances last 0 s)
    net, disk  = absent (0): the trace has none. Only as an explicit, labelled sensitivity axis
                 (``alibaba-io`` in ``policy.evaluate``), ``io_per_core`` = median (net, disk) MB/s per core of
                 cpu use, each pod's × lognormal(σ ``IO_SIGMA``) drawn from the episode's generator, so pods
                 differ in I/O intensity (proportional I/O would only rescale the cpu bottleneck)
Time: ``arrival`` is seconds; replay keeps it unless the engine rescales it to a target load
(``arrivals.rescale_to_load``, a time compression factor).
"""

from __future__ import annotations

import csv
import functools
import importlib.util
import math
from array import array
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from policy.sim.errors import ConfigError, TraceError
from policy.sim.jobs import JobSpec

GENERIC_FIELDS = ("submit", "class", "work", "req_cpu", "req_mem", "cpu", "mem", "net", "disk")
MAX_WORK = 900.0
"""Default cap on Alibaba instance work, seconds (its 25,000 s tail would dominate the load definition and
leave the cluster idle around one huge job)."""
ALIBABA_FIELDS = ("arrival_s", "job_id", "task_name", "duration_s", "plan_cpu", "plan_mem", "instance_num")
INSTANCE_FIELDS = ("arrival_s", "job_id", "task_name", "instance_name", "duration_s", "cpu_avg", "mem_avg")
TASKS_FILE, INSTANCES_FILE = "sample_tasks.csv", "sample_instances.csv"
IO_SIGMA = 1.0
"""Spread of the synthetic per-pod I/O intensity of the ``io_per_core`` sensitivity axis (off by default)."""


@dataclass(frozen=True, slots=True)
class Trace:
    """Jobs read from a trace, sorted by submit time, and how many bad rows were skipped."""

    jobs: tuple[JobSpec, ...]
    skipped: int = 0


def spar_sample_path() -> Path:
    """Where the installed ``spar`` package keeps ``sample_tasks.csv`` (found without importing spar)."""
    spec = importlib.util.find_spec("spar")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("trace", "the Alibaba sample needs PyPI package 'spar' (pip install spar)")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / "samples" / TASKS_FILE


def alibaba_paths(path=None, instances=None) -> tuple[str, str]:
    """(tasks, instances) files: ``path`` is a directory holding both, or the tasks file with
    ``sample_instances.csv`` beside it; None means spar's sample."""
    tasks = spar_sample_path() if path is None else Path(path)
    if tasks.is_dir():
        tasks = tasks / TASKS_FILE
    inst = tasks.parent / INSTANCES_FILE if instances is None else Path(instances)
    for p in (tasks, inst):
        if not p.is_file():
            raise ConfigError("trace", f"Alibaba trace file {p} does not exist")
    return str(tasks), str(inst)


def trace_kind(spec: str) -> tuple[str, str | None]:
    """``"alibaba"`` / ``"alibaba:PATH"`` -> ("alibaba", PATH or None); anything else is a generic CSV path."""
    if spec == "alibaba" or spec.startswith("alibaba:"):
        return "alibaba", spec.partition(":")[2] or None
    return "csv", spec


def check_trace(spec: str) -> int:
    """Parse the trace ``spec`` names (``SimConfig.trace``) and return how many pods it holds (Alibaba: one
    per task), so a command can refuse a bad file before any episode runs. Raises ``TraceError``,
    ``ConfigError`` or ``OSError``."""
    kind, path = trace_kind(spec)
    if kind == "alibaba":
        return int(np.count_nonzero(_alibaba_table(*alibaba_paths(path), False).count))
    return len(load_csv(path).jobs)


def window(n: int, limit: int | None, rng: np.random.Generator | None) -> slice:
    """The slice of ``n`` sorted pods an episode replays: ``limit`` consecutive ones from a drawn start."""
    if limit is None or limit >= n:
        return slice(0, n)
    start = int(rng.integers(0, n - limit + 1)) if rng is not None else 0
    return slice(start, start + limit)


def _number(path, line: int, field: str, text: str, *, low: float = 0.0, strict: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise TraceError(path, line, field, f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < low or (strict and value <= low):
        raise TraceError(path, line, field, f"must be {'>' if strict else '>='} {low}, got {text!r}")
    return value


def load_csv(path, *, skip_bad_rows: bool = False, limit: int | None = None,
             rng: np.random.Generator | None = None) -> Trace:
    """Read a generic-format trace (module doc); with ``limit``, one window of it (drawn by ``rng``)."""
    jobs, skipped = [], 0
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in GENERIC_FIELDS if c not in (reader.fieldnames or ())]
        if missing:
            raise TraceError(path, 1, missing[0], f"header lacks column(s) {', '.join(missing)}")
        for row in reader:
            line = reader.line_num
            try:
                vals = {k: _number(path, line, k, row[k] or "", strict=k == "work")
                        for k in GENERIC_FIELDS if k != "class"}
                if not row["class"]:
                    raise TraceError(path, line, "class", "empty")
            except TraceError:
                if not skip_bad_rows:
                    raise
                skipped += 1
                continue
            jobs.append(JobSpec(row["class"], vals["work"], (vals["req_cpu"], vals["req_mem"]),
                                (vals["cpu"], vals["mem"], vals["net"], vals["disk"]), submit=vals["submit"]))
    jobs.sort(key=lambda j: j.submit)
    jobs = jobs[window(len(jobs), limit, rng)]
    t0 = jobs[0].submit if jobs else 0.0
    return Trace(tuple(replace(j, submit=j.submit - t0) for j in jobs), skipped)


@dataclass(frozen=True, eq=False)
class _Table:
    """The joined Alibaba sample. Tasks sorted by arrival; instances grouped by task, in file order."""

    tasks: np.ndarray   # (T, 3) arrival_s, plan_cpu, plan_mem
    first: np.ndarray   # (T,) index of each task's first instance
    count: np.ndarray   # (T,) instances of each task
    inst: np.ndarray    # (I, 3) duration_s, cpu_avg, mem_avg
    skipped: int


def _read_tasks(path: str, skip: bool) -> tuple[list, dict, int]:
    rows, index, skipped = [], {}, 0
    with open(path, newline="") as f:
        for line, parts in enumerate(csv.reader(f), start=1):
            try:
                if len(parts) != len(ALIBABA_FIELDS):
                    raise TraceError(path, line, ALIBABA_FIELDS[min(len(parts), 6)],
                                     f"expected {len(ALIBABA_FIELDS)} columns, got {len(parts)}")
                inst = _number(path, line, "instance_num", parts[6], low=1.0)
                if inst != int(inst):
                    raise TraceError(path, line, "instance_num", f"not an integer: {parts[6]!r}")
                _number(path, line, "duration_s", parts[3])
                row = (_number(path, line, "arrival_s", parts[0]),
                       _number(path, line, "plan_cpu", parts[4], strict=True),
                       _number(path, line, "plan_mem", parts[5], strict=True))
                if (parts[1], parts[2]) in index:
                    raise TraceError(path, line, "task_name", f"task {parts[1]}/{parts[2]} listed twice")
            except TraceError:
                if not skip:
                    raise
                skipped += 1
                continue
            index[(parts[1], parts[2])] = len(rows)
            rows.append(row)
    return rows, index, skipped


def _read_instances(path: str, index: dict, skip: bool) -> tuple[array, array, int]:
    owner, values, skipped = array("q"), array("d"), 0  # compact: spar's file has 3 M rows
    with open(path, newline="") as f:
        for line, parts in enumerate(csv.reader(f), start=1):
            try:
                if len(parts) != len(INSTANCE_FIELDS):
                    raise TraceError(path, line, INSTANCE_FIELDS[min(len(parts), 6)],
                                     f"expected {len(INSTANCE_FIELDS)} columns, got {len(parts)}")
                task = index.get((parts[1], parts[2]))
                if task is None:
                    raise TraceError(path, line, "task_name", f"no task {parts[1]}/{parts[2]} in the tasks file")
                try:  # the fast path; the slow one names the bad field
                    row = (float(parts[4]), float(parts[5]), float(parts[6]))
                    ok = min(row) >= 0 and math.isfinite(sum(row))
                except ValueError:
                    ok = False
                if not ok:
                    row = tuple(_number(path, line, INSTANCE_FIELDS[k], parts[k]) for k in (4, 5, 6))
            except TraceError:
                if not skip:
                    raise
                skipped += 1
                continue
            owner.append(task)
            values.extend(row)
    return owner, values, skipped


@functools.lru_cache(maxsize=4)
def _alibaba_table(tasks_path: str, instances_path: str, skip_bad_rows: bool) -> _Table:
    rows, index, skipped = _read_tasks(tasks_path, skip_bad_rows)
    owner, values, skipped_inst = _read_instances(instances_path, index, skip_bad_rows)
    tasks = np.array(rows, dtype=np.float64).reshape(-1, 3)
    order = np.argsort(tasks[:, 0], kind="stable")  # tasks by arrival; rank[t] = new position of task t
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    owner_new = rank[np.frombuffer(owner, dtype=np.int64)] if owner else np.zeros(0, dtype=np.int64)
    by_task = np.argsort(owner_new, kind="stable")
    count = np.bincount(owner_new, minlength=len(tasks))
    first = (np.cumsum(count) - count).astype(np.int64)
    inst = np.frombuffer(values, dtype=np.float64).reshape(-1, 3)[by_task]
    return _Table(tasks[order], first, count, inst, skipped + skipped_inst)


def _pods(table: _Table, max_instances: int) -> tuple[np.ndarray, np.ndarray]:
    """(task index, instance index) of every pod: each task's first ``max_instances`` instances, by arrival."""
    k = np.minimum(table.count, max_instances)
    task = np.repeat(np.arange(len(k)), k)
    within = np.arange(len(task)) - np.repeat(np.cumsum(k) - k, k)
    return task, table.first[task] + within


def _jobs(table: _Table, task: np.ndarray, inst: np.ndarray, *, cpu_scale: float, mem_per_unit: float,
          min_work: float, max_work: float, io_per_core: tuple[float, float],
          rng: np.random.Generator | None) -> list[JobSpec]:
    t, i = table.tasks[task], table.inst[inst]
    req_cpu, req_mem = t[:, 1] / 100.0 * cpu_scale, t[:, 2] * mem_per_unit
    cpu, mem = i[:, 1] / 100.0 * cpu_scale, i[:, 2] * mem_per_unit
    io = np.zeros((len(task), 2))
    if any(io_per_core):
        spread = np.exp(IO_SIGMA * rng.standard_normal((len(task), 2))) if rng is not None else 1.0
        io = cpu[:, None] * np.asarray(io_per_core, dtype=np.float64) * spread
    net, disk = io[:, 0], io[:, 1]
    work = np.clip(i[:, 0], min_work, max_work)
    return [JobSpec("batch", float(work[k]), (float(req_cpu[k]), float(req_mem[k])),
                    (float(cpu[k]), float(mem[k]), float(net[k]), float(disk[k])), submit=float(t[k, 0]))
            for k in range(len(task))]


def _check(max_instances: int, cpu_scale: float, mem_per_unit: float, min_work: float, max_work: float,
           io_per_core: tuple[float, float]) -> None:
    if max_instances < 1 or cpu_scale <= 0 or mem_per_unit <= 0 or not 0 < min_work <= max_work:
        raise ConfigError("trace", "need max_instances >= 1, cpu_scale > 0, mem_per_unit > 0, 0 < min_work <= max_work")
    if len(io_per_core) != 2 or not all(math.isfinite(v) and v >= 0 for v in io_per_core):
        raise ConfigError("trace_io", f"need two finite values >= 0 (net, disk MB/s per core), got {io_per_core}")


def load_alibaba(path=None, *, instances=None, rng: np.random.Generator | None = None, start: float | None = None,
                 end: float = math.inf, limit: int | None = None, max_instances: int = 1, cpu_scale: float = 1.0,
                 mem_per_unit: float = 1.0, min_work: float = 1.0, max_work: float = MAX_WORK,
                 io_per_core: tuple[float, float] = (0.0, 0.0), skip_bad_rows: bool = False) -> Trace:
    """Replay the Alibaba-2018 sample (``alibaba_paths``; default spar's): ``limit`` pods from ``start``
    seconds (up to ``end``), or, with no ``start``, a window drawn by ``rng``; submit times start at 0."""
    _check(max_instances, cpu_scale, mem_per_unit, min_work, max_work, io_per_core)
    table = _alibaba_table(*alibaba_paths(path, instances), skip_bad_rows)
    task, inst = _pods(table, max_instances)
    arrival = table.tasks[task, 0]
    if start is None:
        keep = window(len(task), limit, rng)
    else:
        lo, hi = np.searchsorted(arrival, start, "left"), np.searchsorted(arrival, end, "left")
        keep = slice(lo, hi if limit is None else min(hi, lo + limit))
    task, inst = task[keep], inst[keep]
    jobs = _jobs(table, task, inst, cpu_scale=cpu_scale, mem_per_unit=mem_per_unit, min_work=min_work,
                 max_work=max_work, io_per_core=io_per_core, rng=rng)
    t0 = jobs[0].submit if jobs else 0.0
    return Trace(tuple(replace(j, submit=j.submit - t0) for j in jobs), table.skipped)


USE_PER_REQUEST_QUANTILES = tuple(round(0.05 + 0.1 * k, 2) for k in range(10))
"""The quantiles ``alibaba_use_per_request`` reports: 0.05, 0.15, ..., 0.95, ten equally likely values."""


def alibaba_use_per_request(path=None, *, instances=None,
                            quantiles: tuple[float, ...] = USE_PER_REQUEST_QUANTILES) -> tuple[float, ...]:
    """The sample's ratio of a task's CPU use to its request at ``quantiles``, rounded to 3 places: per task with
    instances, the mean ``cpu_avg`` of its instances over its ``plan_cpu`` (tasks that used nothing left out).
    ``policy.labworld.ALIBABA_USE_PER_REQUEST`` is this on spar's sample, the lab's ``misleading`` requests."""
    table = _alibaba_table(*alibaba_paths(path, instances), False)
    has = table.count > 0
    use = np.add.reduceat(table.inst[:, 1], table.first[has]) / table.count[has]
    ratio = use / table.tasks[has, 1]
    ratio = ratio[ratio > 0]
    if not len(ratio):
        raise ConfigError("trace", "no Alibaba task with instances that used any CPU")
    return tuple(round(float(q), 3) for q in np.quantile(ratio, quantiles))


def sample_alibaba(n: int, rng: np.random.Generator, path=None, *, instances=None, max_work: float = MAX_WORK,
                   io_per_core: tuple[float, float] = (0.0, 0.0)) -> list[JobSpec]:
    """``n`` pods drawn with replacement (a task uniformly, then one of its instances; the ``alibaba``
    workload mix); submit 0."""
    _check(1, 1.0, 1.0, 1.0, max_work, io_per_core)
    table = _alibaba_table(*alibaba_paths(path, instances), False)
    has = np.flatnonzero(table.count > 0)
    task = has[rng.integers(0, len(has), size=n)]
    inst = table.first[task] + (rng.random(n) * table.count[task]).astype(np.int64)
    jobs = _jobs(table, task, inst, cpu_scale=1.0, mem_per_unit=1.0, min_work=1.0, max_work=max_work,
                 io_per_core=io_per_core, rng=rng)
    return [replace(j, submit=0.0) for j in jobs]
