"""Trace replay: jobs from CSV files, including the Alibaba-2018 batch sample shipped in PyPI ``spar``.

Why it exists: synthetic arrivals train the policy, traces test it on real request/duration mixes. Parsing
is strict: a bad value raises ``TraceError`` naming file, line and field, unless ``skip_bad_rows`` is set,
in which case the row is skipped and counted in ``Trace.skipped``. The module owns one cache: the parsed
numeric columns of each Alibaba file (``_alibaba_columns``), read once per process.

Generic format (header required, any column order): ``submit,class,work,req_cpu,req_mem,cpu,mem,net,disk``
in ``policy.state`` units; ``class`` is a free label.

Alibaba-2018 adapter (``spar/data/samples/sample_tasks.csv``, one hour, no header). Columns, as read from
the file: ``arrival_s, job_id, task_name, duration_s, plan_cpu, plan_mem, instance_num``. Mapping:
    work       = clip(duration_s, min_work=1, max_work=900) (2.5 k of 67.6 k tasks have duration 0; p99 741 s)
    req cpu    = plan_cpu / 100 × cpu_scale (100 = one core)
    req mem    = plan_mem × mem_per_unit GiB (plan_mem is % of a machine's memory; default 1 unit = 1 GiB)
    cpu use    = req cpu × lognormal(median 0.68, σ 0.8), ratio clipped to [0.05, 3]. Measured on the
                 first 300 k rows of spar's sample_instances.csv: cpu_avg/plan_cpu p10 0.19, p50 0.68, p90 1.82
    mem use    = req mem × lognormal(median 0.5, σ 0.5), clipped to [0.05, 2] (instances' mem_avg is mostly
                 far below plan_mem; we keep memory pressure meaningful)
    net, disk  = cpu use × 5 MB/s and × 10 MB/s, each × lognormal(σ 0.5): not in the trace, synthetic
    pods       = min(instance_num, max_instances) copies with the task's arrival (default 1 per task)
Time: ``arrival`` is seconds; replay keeps it unless the engine rescales it to a target load
(``arrivals.rescale_to_load``, a time compression factor).
"""

from __future__ import annotations

import csv
import functools
import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from policy.sim.errors import ConfigError, TraceError
from policy.sim.jobs import JobSpec

GENERIC_FIELDS = ("submit", "class", "work", "req_cpu", "req_mem", "cpu", "mem", "net", "disk")
MAX_WORK = 900.0
"""Default cap on Alibaba task work, seconds (p99 of the sample is 741 s; its 25,000 s tail would dominate
the load definition and leave the cluster idle around one huge job)."""
ALIBABA_FIELDS = ("arrival_s", "job_id", "task_name", "duration_s", "plan_cpu", "plan_mem", "instance_num")


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
    return Path(list(spec.submodule_search_locations)[0]) / "data" / "samples" / "sample_tasks.csv"


def _number(path, line: int, field: str, text: str, *, low: float = 0.0, strict: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise TraceError(path, line, field, f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < low or (strict and value <= low):
        raise TraceError(path, line, field, f"must be {'>' if strict else '>='} {low}, got {text!r}")
    return value


def load_csv(path, *, skip_bad_rows: bool = False) -> Trace:
    """Read a generic-format trace (module doc)."""
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
    return Trace(tuple(jobs), skipped)


@functools.lru_cache(maxsize=4)
def _alibaba_columns(path: str, skip_bad_rows: bool) -> tuple[np.ndarray, int]:
    """(n, 5) array of arrival, duration, plan_cpu, plan_mem, instance_num, and the count of skipped rows."""
    rows, skipped = [], 0
    with open(path, newline="") as f:
        for line, parts in enumerate(csv.reader(f), start=1):
            try:
                if len(parts) != len(ALIBABA_FIELDS):
                    raise TraceError(path, line, ALIBABA_FIELDS[min(len(parts), 6)],
                                     f"expected {len(ALIBABA_FIELDS)} columns, got {len(parts)}")
                inst = _number(path, line, "instance_num", parts[6], low=1.0)
                if inst != int(inst):
                    raise TraceError(path, line, "instance_num", f"not an integer: {parts[6]!r}")
                rows.append((_number(path, line, "arrival_s", parts[0]), _number(path, line, "duration_s", parts[3]),
                             _number(path, line, "plan_cpu", parts[4], strict=True),
                             _number(path, line, "plan_mem", parts[5], strict=True), inst))
            except TraceError:
                if not skip_bad_rows:
                    raise
                skipped += 1
    return np.array(rows, dtype=np.float64).reshape(-1, 5), skipped


def _alibaba_jobs(cols: np.ndarray, rng: np.random.Generator, *, cpu_scale: float, mem_per_unit: float,
                  min_work: float, max_work: float) -> list[JobSpec]:
    n = len(cols)
    req_cpu = cols[:, 2] / 100.0 * cpu_scale
    req_mem = cols[:, 3] * mem_per_unit
    cpu = req_cpu * np.clip(0.68 * np.exp(0.8 * rng.standard_normal(n)), 0.05, 3.0)
    mem = req_mem * np.clip(0.5 * np.exp(0.5 * rng.standard_normal(n)), 0.05, 2.0)
    net = cpu * 5.0 * np.exp(0.5 * rng.standard_normal(n))
    disk = cpu * 10.0 * np.exp(0.5 * rng.standard_normal(n))
    work = np.clip(cols[:, 1], min_work, max_work)
    return [JobSpec("batch", float(work[i]), (float(req_cpu[i]), float(req_mem[i])),
                    (float(cpu[i]), float(mem[i]), float(net[i]), float(disk[i])), submit=float(cols[i, 0]))
            for i in range(n)]


def load_alibaba(path=None, *, rng: np.random.Generator, start: float = 0.0, end: float = math.inf,
                 limit: int | None = None, max_instances: int = 1, cpu_scale: float = 1.0,
                 mem_per_unit: float = 1.0, min_work: float = 1.0, max_work: float = MAX_WORK,
                 skip_bad_rows: bool = False) -> Trace:
    """Replay the Alibaba-2018 sample (default: spar's) between ``start`` and ``end`` seconds, at most
    ``limit`` pods, submit times shifted so the window starts at 0."""
    if max_instances < 1 or cpu_scale <= 0 or mem_per_unit <= 0 or not 0 < min_work <= max_work:
        raise ConfigError("trace", "need max_instances >= 1, cpu_scale > 0, mem_per_unit > 0, 0 < min_work <= max_work")
    path = str(spar_sample_path() if path is None else path)
    cols, skipped = _alibaba_columns(path, skip_bad_rows)
    cols = cols[(cols[:, 0] >= start) & (cols[:, 0] < end)]
    cols = np.repeat(cols, np.minimum(cols[:, 4], max_instances).astype(np.int64), axis=0)
    cols = cols[np.argsort(cols[:, 0], kind="stable")][:limit]
    cols[:, 0] -= start
    jobs = _alibaba_jobs(cols, rng, cpu_scale=cpu_scale, mem_per_unit=mem_per_unit, min_work=min_work, max_work=max_work)
    return Trace(tuple(jobs), skipped)


def sample_alibaba(n: int, rng: np.random.Generator, path=None, **kwargs) -> list[JobSpec]:
    """``n`` tasks drawn with replacement from the Alibaba sample (the ``alibaba`` workload mix); submit 0."""
    path = str(spar_sample_path() if path is None else path)
    cols, _ = _alibaba_columns(path, False)
    pick = cols[rng.integers(0, len(cols), size=n)].copy()
    pick[:, 0] = 0.0
    return _alibaba_jobs(pick, rng, cpu_scale=kwargs.get("cpu_scale", 1.0), mem_per_unit=kwargs.get("mem_per_unit", 1.0),
                         min_work=kwargs.get("min_work", 1.0), max_work=kwargs.get("max_work", MAX_WORK))
