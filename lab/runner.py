"""One arm on one schedule: submit each job at its offset, poll every pod and the monitor agents, and turn what
was observed into per-job records once every job has ended.

Why it exists: the measuring loop is the part every number depends on, so it is one small module. Times are
unix seconds from the API (container start / finish, whole seconds) and from this process (submission);
everything is written relative to the arm's t0. A job's pods share its ``drsched.io/lab-job`` label, so a
job the migration controller moved is still one job: started by its first pod, finished by its last.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import replace

from lab.gates import NodeSample, PodSample, SystemSample
from lab.kube import Lab
from lab.observed import ArmResult
from lab.schedule import Job

log = logging.getLogger(__name__)

POLL_S = 1.0
USAGE_EVERY_S = 2.0
QUIET_S = 60.0  # how long a job with no running pod may wait for a successor before the arm ends


def _ended(result: ArmResult, jobs: list[Job]) -> bool:
    """Every job has a pod and none of its pods is still pending or running."""
    return all((pods := result.job_pods(j.job)) and all(p.phase in ("Succeeded", "Failed", "Gone") for p in pods)
               for j in jobs)


def run_arm(lab: Lab, jobs: list[Job], *, run_id: str, image: str, scheduler: str | None,
            expected_s: Callable[[Job], float], timeout_s: float,
            actions: list[tuple[float, Callable[[], tuple[str, str, str]]]] = (),
            progress: Callable[[str], None] = lambda _: None,
            counters: Callable[[float], list[NodeSample]] | None = None,
            system: Callable[[float], list[SystemSample]] | None = None,
            pods: Callable[[float], list[PodSample]] | None = None) -> ArmResult:
    """Run the schedule; ``actions`` are (offset, fn) fired once at their offset (fn returns an event row);
    ``counters`` (``lab.counters.sampler``), where given, reads every node's cgroup counters each poll,
    ``system`` (``lab.counters.system_sampler``) the system CPU set's use and ``pods``
    (``lab.counters.pod_sampler``) every pod cgroup's."""
    pending = sorted(jobs, key=lambda j: j.submit_s)
    todo = sorted(actions, key=lambda a: a[0])
    result = ArmResult(t0=time.time())
    start = time.monotonic()
    last_usage = -USAGE_EVERY_S
    last_line = 0.0
    failed_quiet_since: float | None = None
    while True:
        now = time.monotonic() - start
        while pending and pending[0].submit_s <= now:
            job = pending.pop(0)
            lab.submit(job, run_id=run_id, image=image, scheduler=scheduler, expected_s=expected_s(job))
            result.submitted[job.job] = round(time.time() - result.t0, 3)
        while todo and todo[0][0] <= now:
            _, fn = todo.pop(0)
            node, event, value = fn()
            result.events.append((round(now, 2), node, event, value))
            progress(f"  t={now:5.1f}s {event} {node} {value}")
        listed = {obs.name: obs for obs in lab.observe(run_id)}
        for name, obs in listed.items():
            if obs.deleting:
                # Evicted (the migration controller): SIGTERM makes the job checkpoint and exit 0, so the pod
                # may read Succeeded until it is gone. It stopped; the job goes on in its successor.
                seen = result.pods.get(name)
                stopped = seen.finished if seen is not None and seen.phase == "Gone" else None
                listed[name] = replace(obs, phase="Gone", finished=obs.finished or stopped or time.time())
        for name, obs in result.pods.items():
            if name not in listed and obs.phase not in ("Succeeded", "Failed", "Gone"):
                # Deleted while running (the migration controller stops a slow job's pod): it ended about now.
                result.pods[name] = replace(obs, phase="Gone", finished=obs.finished or time.time())
        result.pods.update(listed)
        for job in {p.job for p in result.pods.values()} - set(result.proc_done):
            result.see_progress(job, lab.progress(run_id, job))
        if counters is not None:
            result.counters += counters(round(time.time() - result.t0, 3))
        if system is not None:
            result.system += system(round(time.time() - result.t0, 3))
        if pods is not None:
            result.pod_counters += pods(round(time.time() - result.t0, 3))
        if now - last_usage >= USAGE_EVERY_S:
            last_usage = now
            uids = {p.uid for p in result.pods.values() if p.phase == "Running"}
            result.load.append((round(time.time() - result.t0, 2), os.getloadavg()[0]))
            for node, usage in sorted(lab.usage(uids).items()):
                result.usage.append((round(time.time() - result.t0, 2), node, usage))
        if now - last_line >= 10:
            last_line = now
            phases = [p.phase for p in result.pods.values()]
            progress(f"  t={now:5.0f}s submitted={len(result.submitted)}/{len(jobs)} "
                     f"running={phases.count('Running')} done={phases.count('Succeeded')} "
                     f"failed={phases.count('Failed')} pending={phases.count('Pending')}")
        if not pending and _ended(result, jobs):
            if all(any(p.phase == "Succeeded" for p in result.job_pods(j.job)) for j in jobs):
                break
            # A migrated job's predecessor ends Failed before its successor exists: give the successor time.
            failed_quiet_since = failed_quiet_since or now
            if now - failed_quiet_since > QUIET_S:
                break
        else:
            failed_quiet_since = None
        if now > timeout_s:
            result.timed_out = True
            log.warning("arm timed out run=%s seconds=%.0f", run_id, timeout_s)
            break
        time.sleep(POLL_S)
    for job in jobs:
        if len(result.job_pods(job.job)) > 1:
            doc = lab.progress(run_id, job.job)
            if doc is not None:
                result.restore.append({"job": job.job, **doc})
    return result
