"""Each job shape's runtime alone on each node type: measured on the real nodes once, then cached on disk.

Why it exists: slowdown is only meaningful against the same job alone on the same kind of node, and
measuring that costs minutes, so every measurement is kept in ``solo-<hash>.json`` under
``harness.cache.lab_dir()`` (``~/.cache/drsched/lab/``), the hash over the workloads image digest, the
node's shape and the job's arguments: a rebuilt image, a resized node or a different job is measured
again, anything else is reused. The nodes measure in
one job at a time on one node at a time by default, since the nodes share two cores (``parallel`` > 1 is
faster and noisier). Measured: from the job's first process start to its progress saying done
(``progress.json``), and the CPU the job's cgroup used over it. ``runs`` > 1 measures each pair that many
times and uses the median (identical quotas were measured 11 % apart in single runs, issue #21); the cache
file keeps every run (``runs``) beside their median (``seconds``, ``cpu_m``: what a one-run reader sees), and a
file from before keeps counting as one run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.cache import lab_dir
from lab.errors import RunError
from lab.kube import Lab
from lab.observed import ArmResult
from lab.schedule import Job
from policy.labworld import RealNodeShape

log = logging.getLogger(__name__)

UNSCHEDULABLE_S = 30.0
"""How long a solo pod may stay unschedulable before its node is judged too small for it."""


@dataclass(frozen=True)
class Solo:
    seconds: float
    cpu_m: float


def solo_key(job: Job) -> tuple[str, int]:
    return job.template, job.units


def cache_path(*, image_digest: str, shape: RealNodeShape, argv: list[str]) -> Path:
    key = json.dumps({"method": 2, "image": image_digest, "node": [shape.name, shape.cpu_millis, shape.memory_mib,
                                                      shape.net_mbit], "argv": argv}, sort_keys=True)
    return lab_dir() / f"solo-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def median_solo(runs: list[Solo]) -> Solo:
    """The median of each of seconds and cpu over the runs (the mean of the middle two for an even count)."""
    if not runs:
        raise ValueError("median_solo needs at least one run")
    return Solo(seconds=statistics.median(r.seconds for r in runs), cpu_m=statistics.median(r.cpu_m for r in runs))


def load_runs(path: Path) -> list[Solo]:
    """Every run the cache file holds (a file from before ``runs`` existed: its one run); [] if none reads."""
    try:
        doc = json.loads(path.read_text())
        runs = doc.get("runs") or [doc]
        return [Solo(seconds=float(r["seconds"]), cpu_m=float(r["cpu_m"])) for r in runs]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def load(path: Path) -> Solo | None:
    runs = load_runs(path)
    return median_solo(runs) if runs else None


def _store(path: Path, runs: list[Solo], *, node: str, argv: list[str], image_digest: str) -> Solo:
    median = median_solo(runs)
    path.write_text(json.dumps({"seconds": median.seconds, "cpu_m": round(median.cpu_m, 1), "node": node,
                                "argv": argv, "image": image_digest, "measured_at": time.time(),
                                "runs": [{"seconds": r.seconds, "cpu_m": round(r.cpu_m, 1)} for r in runs]}))
    return median


def measure(lab: Lab, jobs: list[Job], *, shapes: tuple[RealNodeShape, ...], image: str, image_digest: str,
            progress: Callable[[str], None] = lambda _: None, timeout_s: float = 1800.0, parallel: int = 1,
            runs: int = 1) -> dict[tuple[str, int, str], Solo]:
    """(template, units, node type) -> Solo (the median of ``runs`` runs) for every job shape in ``jobs`` on
    every node; measures the runs the cache lacks, ``parallel`` nodes at a time (1: alone on the machine too,
    the default)."""
    shapes_by_node = {s.name: s for s in shapes}
    out: dict[tuple[str, int, str], Solo] = {}
    queue: dict[str, list[Job]] = {s.name: [] for s in shapes}
    examples = {solo_key(j): j for j in jobs}
    for key, job in sorted(examples.items()):
        for shape in shapes:
            found = load_runs(cache_path(image_digest=image_digest, shape=shape, argv=job.argv()))
            queue[shape.name] += [job] * max(runs - len(found), 0)
            if len(found) >= runs:
                out[(*key, shape.node_type)] = median_solo(found)
    missing = sum(map(len, queue.values()))
    if not missing:
        return out
    progress(f"solo runtimes: measuring {missing} job/node pairs (cached in {lab_dir()})")
    lab_dir().mkdir(parents=True, exist_ok=True)
    running: dict[str, tuple[str, Job, str]] = {}  # node -> (run id, job, pod name)
    seen: dict[str, ArmResult] = {}  # pod -> its progress times
    cpu_seen: dict[str, float] = {}
    unschedulable_since: dict[str, float] = {}
    deadline = time.monotonic() + timeout_s
    counter = 0
    while any(queue.values()) or running:
        for node, todo in queue.items():
            if node not in running and todo and len(running) < parallel:
                job = todo.pop(0)
                counter += 1
                run_id = f"solo-{counter}"
                pod = lab.submit(job, run_id=run_id, image=image, scheduler=None, expected_s=60.0, node=node)
                running[node] = (run_id, job, pod)
        for node, (run_id, job, pod) in list(running.items()):
            (obs,) = lab.observe(run_id) or (None,)
            if obs is None:
                continue
            if obs.phase == "Pending" and obs.unschedulable:
                # No node has room for its request (honest requests of the largest jobs on the smallest node):
                # its solo time there is not measured, and best_solo_s looks only at the nodes that were. Judged
                # after UNSCHEDULABLE_S, so a verdict from a scheduler cache still holding the last pod passes.
                since = unschedulable_since.setdefault(pod, time.monotonic())
                if time.monotonic() - since >= UNSCHEDULABLE_S:
                    progress(f"  solo {job.template} units={job.units} on {node}: does not fit (the scheduler "
                             f"found no room for its {job.cpu_request_m} m request for {UNSCHEDULABLE_S:.0f} s); "
                             "not measured")
                    lab.delete_run(run_id)
                    del running[node]
                    queue[node] = [j for j in queue[node] if solo_key(j) != solo_key(job)]
                continue
            times = seen.setdefault(pod, ArmResult(t0=0.0))
            times.see_progress(job.job, lab.progress(run_id, job.job))
            if obs.phase == "Running":
                cpu_seen[pod] = lab.pod_cpu_seconds(node, obs.uid) or cpu_seen.get(pod, 0.0)
            elif obs.phase in ("Succeeded", "Failed"):
                if obs.phase == "Failed" or obs.started is None or obs.finished is None:
                    raise RunError(f"solo run of {job.template} on {node} failed (exit {obs.exit_code})")
                times.see_progress(job.job, lab.progress(run_id, job.job))
                begin = times.proc_start.get(job.job, obs.started)
                seconds = max(times.proc_done.get(job.job, obs.finished) - begin, 0.1)
                solo = Solo(seconds=seconds, cpu_m=1000 * cpu_seen.get(pod, 0.0) / seconds)
                shape = shapes_by_node[node]
                path = cache_path(image_digest=image_digest, shape=shape, argv=job.argv())
                done = [*load_runs(path), solo]
                median = _store(path, done, node=node, argv=job.argv(), image_digest=image_digest)
                if len(done) >= runs:
                    out[(*solo_key(job), shape.node_type)] = median
                progress(f"  solo {job.template} units={job.units} on {node} (run {len(done)} of {runs}): "
                         f"{seconds:.0f} s, {solo.cpu_m:.0f} m cpu")
                lab.delete_run(run_id)
                del running[node]
        if time.monotonic() > deadline:
            raise RunError(f"solo measurements did not finish within {timeout_s:.0f} s")
        time.sleep(1.0)
    return out
