"""Rows of the lab's CSV files, made from what an arm observed. Pure: no cluster, no files.

Why it exists: ``jobs.csv`` is read by other tools (the simulator's calibration), so every row is built the same
way, here; the files' columns are part of the lab's world (``policy.labworld.FILES``), fixed there once for
writers and readers alike. Times are seconds from the arm's t0: start is when the job's first process started
and finish when its progress said done (``progress.json``, sub-second), falling back to the pod's container
times (whole seconds) where no progress was seen. ``solo_s`` is the job's template measured alone on the node
type where the job finished; ``run_slowdown`` = (finish - start) / solo, ``slowdown`` = (finish - submit) /
solo; ``jct_s`` = finish - submit. Those two never penalise a slow node (a job on the smallest node is compared
with itself there), so ``best_solo_s`` is the job's template alone on its fastest node type and
``best_slowdown`` = (finish - submit) / best_solo_s: what placement cost the job. The job's own measured
migration costs (``progress.json``): ``ckpt_writes`` and ``ckpt_write_mean_s`` / ``ckpt_write_last_s`` over all
its processes, ``restore_s`` the seconds its resumed processes took to load and apply their checkpoints.
usage.csv: the job pods' usage per node, and the node's own cpu in use and measured capacity as its agent
reports them (``node_cpu_m``, ``capacity_m``): capacity below the node's quota is what the extender counts as
used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lab.observed import ArmResult
from lab.schedule import Job
from policy.labworld import RealNodeShape


def _rel(t: float | None, t0: float) -> float | None:
    return None if t is None else round(t - t0, 3)


def _ratio(num: float | None, den: float | None) -> float | str:
    return round(num / den, 4) if num is not None and den else ""


def best_solo_s(job: Job, node_types: Iterable[str],
                solo: Callable[[Job, str], tuple[float, float] | None]) -> float | None:
    """The job's shortest solo time over ``node_types`` (None when none was measured)."""
    times = [found[0] for t in node_types if (found := solo(job, t)) is not None and found[0] > 0]
    return min(times) if times else None


def job_rows(result: ArmResult, jobs: list[Job], *, seed: int, arm: str, variant: str,
             node_type: Callable[[str], str], solo: Callable[[Job, str], tuple[float, float] | None],
             node_types: Iterable[str] = ()) -> list[dict]:
    """One row per job. ``solo(job, node_type)`` is (seconds, cpu millicores) of the job alone on that node
    type, from the solo cache; ``node_types`` are the cluster's, for ``best_solo_s`` (none: left empty); a
    job that never ran has empty times and ratios."""
    node_types = tuple(node_types)
    rows = []
    for job in jobs:
        pods = result.job_pods(job.job)
        last = pods[-1] if pods else None
        node = last.node if last and last.node else ""
        ntype = node_type(node) if node else ""
        submit = result.submitted.get(job.job)
        start = _rel(result.proc_start.get(job.job) or (pods[0].started if pods else None), result.t0)
        finish = None
        if last is not None and last.phase == "Succeeded":
            finish = _rel(result.proc_done.get(job.job) or last.finished, result.t0)
        solo_s, used = (solo(job, ntype) if ntype else None) or (None, None)
        best = best_solo_s(job, node_types, solo)
        jct = None if finish is None or submit is None else finish - submit
        rows.append({
            "seed": seed, "arm": arm, "variant": variant, "job": job.job, "kind": job.kind, "node": node,
            "node_type": ntype, "cpu_request_m": job.cpu_request_m, "mem_request_mi": job.mem_request_mi,
            "cpu_use_m": round(used) if used is not None else job.cpu_use_m, "mem_use_mi": job.mem_use_mi,
            "net_mbit": job.net_mbit, "io_mbps": job.io_mbps, "work": job.units,
            "submit_s": submit if submit is not None else "", "start_s": "" if start is None else start,
            "finish_s": "" if finish is None else finish,
            "exit_code": "" if last is None or last.exit_code is None else last.exit_code,
            "solo_s": "" if solo_s is None else round(solo_s, 3),
            "jct_s": "" if finish is None or submit is None else round(finish - submit, 3),
            "run_slowdown": _ratio(None if finish is None or start is None else finish - start, solo_s),
            "slowdown": _ratio(None if finish is None or submit is None else finish - submit, solo_s),
            "migrations": max(len(pods) - 1, 0),
            **_costs(result, job.job),
            "best_solo_s": "" if best is None else round(best, 3), "best_slowdown": _ratio(jct, best),
        })  # fmt: skip
    return rows


def _costs(result: ArmResult, job: str) -> dict:
    writes, mean, last, restore = result.checkpoint_costs(job)
    return {"ckpt_writes": writes, "ckpt_write_mean_s": "" if mean is None else round(mean, 4),
            "ckpt_write_last_s": "" if last is None else round(last, 4),
            "restore_s": "" if restore is None else round(restore, 4)}


def node_rows(shapes: tuple[RealNodeShape, ...]) -> list[dict]:
    """One ``nodes.csv`` row per node: its shape."""
    return [{"node": s.name, "node_type": s.node_type, "cpu_quota_m": s.cpu_millis, "mem_mi": s.memory_mib,
             "net_mbit": s.net_mbit} for s in shapes]


def usage_rows(result: ArmResult, *, seed: int, arm: str, variant: str) -> list[dict]:
    return [{"seed": seed, "arm": arm, "variant": variant, "t_s": t, "node": node,
             **{k: round(v, 2) for k, v in usage.items()}} for t, node, usage in result.usage]


def event_rows(result: ArmResult, *, seed: int, arm: str) -> list[dict]:
    rows = [{"seed": seed, "arm": arm, "t_s": t, "node": node, "event": event, "value": value}
            for t, node, event, value in result.events]
    for job in sorted({p.job for p in result.pods.values()}):
        pods = result.job_pods(job)
        for before, after in zip(pods, pods[1:], strict=False):  # migrations: stop-to-restart gap, measured
            if before.finished is not None and after.started is not None:
                rows.append({"seed": seed, "arm": arm, "t_s": _rel(before.finished, result.t0),
                             "node": f"{before.node}->{after.node}", "event": f"migration {job}",
                             "value": round(after.started - before.finished, 3)})
    for doc in result.restore:
        ckpt = doc.get("checkpoint") or {}
        rows.append({"seed": seed, "arm": arm, "t_s": "", "node": "", "event": f"resumed {doc['job']}",
                     "value": f"resumed_from={doc.get('resumed_from')} checkpoint_units={ckpt.get('units_done')}"})
    return rows


def controller_rows(samples: list[tuple[str, str, float]], *, seed: int, arm: str, variant: str) -> list[dict]:
    """The migration controller's counters at the end of an arm (skip reasons, verdicts, steps, outcomes)."""
    return [{"seed": seed, "arm": arm, "variant": variant, "metric": name.removeprefix("drsched_migration_"),
             "labels": labels, "value": round(value, 3)} for name, labels, value in samples]


def pod_counter_rows(result: ArmResult, *, seed: int, arm: str, variant: str) -> list[dict]:
    """``pod-counters.csv``: each pod cgroup's cpu counters as sampled during the arm, named where the pod is one
    of the arm's (its name ``<run_id>-<job>...``); others (the monitor agent, tenants) keep an empty name."""
    names = {p.uid: p.name for p in result.pods.values()}
    return [{"seed": seed, "arm": arm, "variant": variant, "t_s": s.t_s, "node": s.node, "pod": names.get(s.uid, ""),
             "uid": s.uid, "nr_periods": s.stat.nr_periods, "nr_throttled": s.stat.nr_throttled,
             "throttled_ns": s.stat.throttled_ns, "usage_ns": s.usage_ns} for s in result.pod_counters]


def counter_rows(result: ArmResult, *, seed: int, arm: str, variant: str) -> list[dict]:
    """``counters.csv``: each node's cgroup cpu counters as sampled during the arm."""
    return [{"seed": seed, "arm": arm, "variant": variant, "t_s": s.t_s, "node": s.node,
             "nr_periods": s.stat.nr_periods, "nr_throttled": s.stat.nr_throttled,
             "throttled_ns": s.stat.throttled_ns, "usage_ns": s.usage_ns,
             "nr_bursts": "" if s.stat.nr_bursts is None else s.stat.nr_bursts,
             "burst_ns": "" if s.stat.burst_ns is None else s.stat.burst_ns} for s in result.counters]
