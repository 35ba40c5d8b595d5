"""Each job shape's runtime alone on each node type: measured on the real nodes once, then cached on disk.

Why it exists: slowdown is only meaningful against the same job alone on the same kind of node, and
measuring that costs minutes, so every measurement is kept in ``solo-<hash>.json`` under
``harness.cache.lab_dir()`` (``~/.cache/drsched/lab/``), the hash over the workloads image digest, the
node's shape and the job's arguments: a rebuilt image, a resized node or a different job is measured
again, anything else is reused. The nodes measure in
one job at a time on one node at a time by default, since the nodes share two cores (``parallel`` > 1 is
faster and noisier). Measured: from the job's first process start to its progress saying done
(``progress.json``), and the CPU the job's cgroup used over it.
"""

from __future__ import annotations

import hashlib
import json
import logging
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


def load(path: Path) -> Solo | None:
    try:
        doc = json.loads(path.read_text())
        return Solo(seconds=float(doc["seconds"]), cpu_m=float(doc["cpu_m"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def measure(lab: Lab, jobs: list[Job], *, shapes: tuple[RealNodeShape, ...], image: str, image_digest: str,
            progress: Callable[[str], None] = lambda _: None, timeout_s: float = 1800.0, parallel: int = 1
            ) -> dict[tuple[str, int, str], Solo]:
    """(template, units, node type) -> Solo for every job shape in ``jobs`` on every node; measures what the
    cache lacks, ``parallel`` nodes at a time (1: alone on the machine too, the default)."""
    shapes_by_node = {s.name: s for s in shapes}
    out: dict[tuple[str, int, str], Solo] = {}
    queue: dict[str, list[Job]] = {s.name: [] for s in shapes}
    examples = {solo_key(j): j for j in jobs}
    for key, job in sorted(examples.items()):
        for shape in shapes:
            found = load(cache_path(image_digest=image_digest, shape=shape, argv=job.argv()))
            if found is None:
                queue[shape.name].append(job)
            else:
                out[(*key, shape.node_type)] = found
    missing = sum(map(len, queue.values()))
    if not missing:
        return out
    progress(f"solo runtimes: measuring {missing} job/node pairs (cached in {lab_dir()})")
    lab_dir().mkdir(parents=True, exist_ok=True)
    running: dict[str, tuple[str, Job, str]] = {}  # node -> (run id, job, pod name)
    seen: dict[str, ArmResult] = {}  # pod -> its progress times
    cpu_seen: dict[str, float] = {}
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
                cache_path(image_digest=image_digest, shape=shape, argv=job.argv()).write_text(json.dumps(
                    {"seconds": solo.seconds, "cpu_m": round(solo.cpu_m, 1), "node": node, "argv": job.argv(),
                     "image": image_digest, "measured_at": time.time()}))
                out[(*solo_key(job), shape.node_type)] = solo
                progress(f"  solo {job.template} units={job.units} on {node}: {seconds:.0f} s, "
                         f"{solo.cpu_m:.0f} m cpu")
                lab.delete_run(run_id)
                del running[node]
        if time.monotonic() > deadline:
            raise RunError(f"solo measurements did not finish within {timeout_s:.0f} s")
        time.sleep(1.0)
    return out
