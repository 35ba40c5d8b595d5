"""Helpers for the migration e2e tests: the controller as a real subprocess, a fake job that reports
progress through the ``drsched.io/progress`` annotation (KWOK runs no processes), and the invariants.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from kubernetes import client

from harness.objects import FAKE_IMAGE
from tests.helpers import REPO

SHA = "ab" * 32
UNITS_TOTAL = 1000
CHECKPOINT = 200


def progress_doc(*, units_done: int, rate: float, started_at: float, resumed_from: int = 0,
                 checkpoint: int | None = CHECKPOINT, state: str = "running") -> str:
    ckpt = None if checkpoint is None else {"units_done": checkpoint, "path": f"/state/ckpt-{checkpoint:010d}.json",
                                            "sha256": SHA, "at": started_at}
    return json.dumps({"schema": 1, "kind": "cpu", "units_done": units_done, "units_total": UNITS_TOTAL,
                       "progress": units_done / UNITS_TOTAL, "rate": rate, "started_at": started_at,
                       "updated_at": time.time(), "resumed_from": resumed_from, "checkpoint": ckpt,
                       "state": state, "pid": 42})


def job_pod(name: str, *, node: str, cpu: str = "500m", labels: dict | None = None, tag: str | None = None,
            volumes: list[client.V1Volume] | None = None) -> client.V1Pod:
    """A bare, opted-in job pod pinned to ``node``, slow unless its progress says otherwise. ``tag``: its own
    required node affinity ``drsched-e2e In [tag]`` (keeps its successors on the test's nodes, and is a term
    the controller's affinity must be merged into)."""
    affinity = None if tag is None else client.V1Affinity(node_affinity=client.V1NodeAffinity(
        required_during_scheduling_ignored_during_execution=client.V1NodeSelector(node_selector_terms=[
            client.V1NodeSelectorTerm(match_expressions=[client.V1NodeSelectorRequirement(
                key="drsched-e2e", operator="In", values=[tag])])])))
    mounts = [client.V1VolumeMount(name=v.name, mount_path=f"/{v.name}") for v in volumes or []] or None
    return client.V1Pod(
        metadata=client.V1ObjectMeta(
            name=name, labels={"drsched.io/migrate": "true", "app": name, **(labels or {})},
            annotations={"drsched.io/expected-duration": "100", "drsched.io/restore-cost": "1"}),
        spec=client.V1PodSpec(
            node_name=node, termination_grace_period_seconds=5, affinity=affinity, volumes=volumes,
            containers=[client.V1Container(name="main", image=FAKE_IMAGE, volume_mounts=mounts,
                                           resources=client.V1ResourceRequirements(
                                               requests={"cpu": cpu, "memory": "256Mi"}))]))


def required_fields(pod: client.V1Pod) -> list[list[tuple[str, str, tuple[str, ...]]]]:
    """Per node-selector term of ``pod``'s required node affinity: its matchFields as (key, operator, values)."""
    affinity = pod.spec.affinity
    required = affinity and affinity.node_affinity and \
        affinity.node_affinity.required_during_scheduling_ignored_during_execution
    return [[(f.key, f.operator, tuple(f.values or ())) for f in t.match_fields or []]
            for t in (required.node_selector_terms if required else [])]


def filler_pod(name: str, *, node: str, cpu: str) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"app": "filler"}),
        spec=client.V1PodSpec(node_name=node, containers=[client.V1Container(
            name="main", image=FAKE_IMAGE, resources=client.V1ResourceRequirements(requests={"cpu": cpu}))]))


_SUCCESSOR = re.compile(r"^(?P<base>.+)-m\d+$")


def base_of(pod: client.V1Pod) -> str:
    labels = pod.metadata.labels or {}
    if labels.get("drsched.io/job"):
        return labels["drsched.io/job"]
    match = _SUCCESSOR.match(pod.metadata.name)
    return match.group("base") if match else pod.metadata.name


def live(pod: client.V1Pod) -> bool:
    return pod.metadata.deletion_timestamp is None and (pod.status.phase or "Pending") not in ("Succeeded", "Failed")


@dataclass
class FakeJobs:
    """Plays the jobs: writes a progress document on every Running job pod of ``namespace`` every ``period_s``.

    The original pod (no ``-m<k>``) is slow (1 unit/s, expected 10); a successor reports a fast rate (10) and
    that it resumed from ``successor_resumes_from`` (the checkpoint; 0 plays a restart from scratch),
    ``resume_delay_s`` after it became Running (so the 'running' step lasts). ``rate_of`` overrides the rate of
    a pod by name (a test makes a job fast, or a successor slow, mid-test).
    """

    core: client.CoreV1Api
    namespace: str
    period_s: float = 0.4
    resume_delay_s: float = 1.0
    successor_resumes_from: int = CHECKPOINT
    rate_of: dict[str, float] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _seen_running: dict[str, float] = field(default_factory=dict)
    _thread: threading.Thread | None = None

    def start(self) -> FakeJobs:
        self._thread = threading.Thread(target=self._loop, name="fake-jobs", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:  # the API may be busy; the next tick writes again
                pass
            self._stop.wait(self.period_s)

    def tick(self) -> None:
        now = time.time()
        for pod in self.core.list_namespaced_pod(self.namespace, label_selector="drsched.io/migrate=true").items:
            if not live(pod) or pod.status.phase != "Running":
                continue
            name = pod.metadata.name
            if _SUCCESSOR.match(name):
                first = self._seen_running.setdefault(pod.metadata.uid, now)
                if now - first < self.resume_delay_s:
                    continue
                doc = progress_doc(units_done=CHECKPOINT + 50, rate=self.rate_of.get(name, 10.0), started_at=first,
                                   resumed_from=self.successor_resumes_from)
            else:
                doc = progress_doc(units_done=CHECKPOINT, rate=self.rate_of.get(name, 1.0), started_at=now - 100)
            try:
                self.core.patch_namespaced_pod(name, self.namespace,
                                               {"metadata": {"annotations": {"drsched.io/progress": doc}}})
            except client.ApiException:
                continue


class ControllerProcess:
    """``python -m migration`` as a real subprocess (killed with SIGKILL by the kill test)."""

    def __init__(self, *, kubeconfig: Path, namespace: str, selector: str, log_path: Path, extra: list[str]) -> None:
        self.argv = [sys.executable, "-m", "migration", f"--kubeconfig={kubeconfig}", f"--namespace={namespace}",
                     f"--node-selector={selector}", "--policy=default-k8s", "--interval-s=0.5", "--slow-checks=1",
                     "--min-running-s=0", "--blocklist-s=0", "--cooldown-s=0", "--max-fraction=1",
                     "--restore-cost-s=1", "--stale-after-s=30", f"--lease-namespace={namespace}", "--identity=e2e",
                     "--lease-s=4", "--renew-s=3", "--retry-s=1", "--log-format=text", "--progress-source=annotation",
                     *extra]
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self, *extra: str) -> ControllerProcess:
        """Start a new life of the controller; ``extra`` flags apply to this life only."""
        self.starts += 1
        log = open(self.log_path, "a")  # noqa: SIM115 -- the child owns it
        log.write(f"\n{self._marker()}\n")
        log.flush()
        self.proc = subprocess.Popen([*self.argv, *extra], cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True)
        log.close()
        return self

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill9()

    def log_text(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def life_log(self) -> str:
        """What the current life has logged so far."""
        return self.log_text().rpartition(self._marker())[2]

    def _marker(self) -> str:
        return f"===== start {self.starts} ====="

