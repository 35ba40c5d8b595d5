"""What an arm observed, as plain records: each pod's last known state, submissions, usage samples, events.

Why it exists: the cluster side (``lab.kube``, ``lab.runner``) fills these and the pure side
(``lab.records``, tests) reads them, so neither needs the other's imports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lab.gates import NodeSample, PodSample, SystemSample


@dataclass(frozen=True)
class PodObs:
    """What the pod API says about one pod of a job at one poll (times are unix seconds, None if not yet)."""

    name: str
    job: str
    uid: str
    node: str | None
    phase: str
    started: float | None
    finished: float | None
    exit_code: int | None
    deleting: bool = False  # being deleted (an eviction: the job checkpoints on SIGTERM and exits 0)
    unschedulable: bool = False  # Pending, and the scheduler said no node fits it (PodScheduled False, Unschedulable)


@dataclass
class ArmResult:
    """What one arm measured: per job its pods as last seen and its submit offset; usage samples; events."""

    t0: float
    submitted: dict[str, float] = field(default_factory=dict)       # job -> submit offset (s)
    pods: dict[str, PodObs] = field(default_factory=dict)            # pod name -> last observation
    usage: list[tuple[float, str, dict[str, float]]] = field(default_factory=list)  # (t_s, node, usage)
    events: list[tuple[float, str, str, str]] = field(default_factory=list)       # (t_s, node, event, value)
    restore: list[dict] = field(default_factory=list)                  # progress documents of resumed pods
    load: list[tuple[float, float]] = field(default_factory=list)      # (t_s, host 1-min load average)
    proc_start: dict[str, float] = field(default_factory=dict)  # job -> unix start of its first process
    proc_done: dict[str, float] = field(default_factory=dict)   # job -> unix time its progress said "done"
    costs: dict[str, dict[tuple, dict]] = field(default_factory=dict)  # job -> (pid, start) -> measured costs
    counters: list[NodeSample] = field(default_factory=list)  # each node's cgroup cpu counters, t_s from t0
    system: list[SystemSample] = field(default_factory=list)  # the system cgroups' and every CPU's use, t_s from t0
    pod_counters: list[PodSample] = field(default_factory=list)  # every pod cgroup's cpu counters, t_s from t0
    timed_out: bool = False

    def see_progress(self, job: str, doc: dict | None) -> None:
        """Note a job's progress.json: sub-second start and finish times, where the pod API has whole seconds."""
        if not doc:
            return
        started = doc.get("started_at")
        if isinstance(started, int | float) and job not in self.proc_start and doc.get("resumed_from", 0) == 0:
            self.proc_start[job] = float(started)
        if doc.get("state") == "done" and isinstance(doc.get("updated_at"), int | float):
            self.proc_done[job] = float(doc["updated_at"])
        pid = doc.get("pid")
        if isinstance(pid, int):  # each process's latest word on its checkpoint writes and its restore
            # A job's process is pid 1 in every pod: its start time tells a successor from its source.
            self.costs.setdefault(job, {})[(pid, doc.get("started_at"))] = {
                "writes": doc.get("checkpoint_writes") or 0, "write_s": doc.get("checkpoint_write_s") or {},
                "restore_s": doc.get("restore_s")}

    def checkpoint_costs(self, job: str) -> tuple[int, float | None, float | None, float | None]:
        """Over every process of the job seen: (checkpoints written, their mean write seconds, the seconds of
        the newest process's last write, restore seconds summed over the resumed processes)."""
        procs = list(self.costs.get(job, {}).values())
        writes = sum(int(p["writes"]) for p in procs)
        timed = [(int(p["writes"]), p["write_s"]) for p in procs
                 if p["writes"] and isinstance(p["write_s"], dict) and p["write_s"].get("mean") is not None]
        mean = sum(n * w["mean"] for n, w in timed) / sum(n for n, _ in timed) if timed else None
        last = timed[-1][1].get("last") if timed else None
        restores = [float(p["restore_s"]) for p in procs if isinstance(p["restore_s"], int | float)]
        return writes, mean, last, (sum(restores) if restores else None)

    def job_pods(self, job: str) -> list[PodObs]:
        return sorted((p for p in self.pods.values() if p.job == job), key=lambda p: (p.started or 1e18, p.name))


