"""What an arm observed, as plain records: each pod's last known state, submissions, usage samples, events.

Why it exists: the cluster side (``lab.kube``, ``lab.runner``) fills these and the pure side
(``lab.records``, tests) reads them, so neither needs the other's imports.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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

    def job_pods(self, job: str) -> list[PodObs]:
        return sorted((p for p in self.pods.values() if p.job == job), key=lambda p: (p.started or 1e18, p.name))


