"""Fault injection on the real-node cluster, for the faults-under-load test: kill a control-plane process, a
container or a kubelet with SIGKILL, bring it back the way its supervisor would, and read what drsched said.

Host processes (etcd, kube-apiserver, kubelets) are the harness's `Component`s: killed with SIGKILL and
started again with the same command line and data, as systemd or a static-pod kubelet would. A container
(an extender replica, a monitor agent, the migration controller) is killed by SIGKILL to every process in its
cgroup (every node's cgroups are on this host); its kubelet restarts it in the same pod (restartPolicy
Always), as it would on any cluster. `Stream` submits drsched-scheduled checkpointed jobs all along, retrying
through an apiserver outage (a create that committed before the connection broke reads 409 and counts once).
"""

from __future__ import annotations

import os
import signal
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from kubernetes import client

from harness.errors import WaitTimeout
from harness.extender_proc import parse_metrics, sum_samples
from harness.nodes import CGROUP_FS
from harness.realcluster import RealCluster

from . import drsched

FAULT_LABEL = "drsched.io/fault-run"


def metrics_of(url: str) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310 (pod IPs on the node bridge)
            return parse_metrics(resp.read().decode())
    except OSError:
        return None


def live_pods(cluster: RealCluster, app: str) -> list[client.V1Pod]:
    return [p for p in drsched.pods_of(cluster, app) if p.metadata.deletion_timestamp is None]


def restarts(pod: client.V1Pod) -> int:
    return sum(c.restart_count for c in pod.status.container_statuses or [])


def container_pids(pod: client.V1Pod) -> list[int]:
    """Every process of the pod's first container, from its cgroup (kubelet's cgroupfs layout under the node's
    cgroup root, `/<node>/kubepods/<qos>/pod<uid>/<container id>`)."""
    status = (pod.status.container_statuses or [None])[0]
    if status is None or not status.container_id:
        raise AssertionError(f"{pod.metadata.name}: no container id yet")
    cid = status.container_id.split("://", 1)[1]
    for qos in ("burstable", "besteffort", ""):
        procs = CGROUP_FS / "cpuacct" / pod.spec.node_name / "kubepods" / qos / f"pod{pod.metadata.uid}" / cid
        procs = procs / "cgroup.procs"
        if procs.exists():
            pids = [int(p) for p in procs.read_text().split()]
            if pids:
                return pids
    raise AssertionError(f"{pod.metadata.name}: no processes found for container {cid[:12]} on {pod.spec.node_name}")


def kill_pids(pod: client.V1Pod) -> int:
    """SIGKILL every process of the pod's running container (``container_pids``); 1."""
    for pid in container_pids(pod):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return 1


def kill_container(cluster: RealCluster, pod: client.V1Pod, *, timeout: float = 90) -> client.V1Pod:
    """SIGKILL the pod's container; wait until its kubelet has restarted it and it is Ready again."""
    before = restarts(pod)
    kill_pids(pod)
    return restarted(cluster, pod, after=before, timeout=timeout)


def restarted(cluster: RealCluster, pod: client.V1Pod, *, after: int, timeout: float) -> client.V1Pod:
    """The pod once its kubelet has restarted its container more than ``after`` times and it is Ready."""
    def back() -> client.V1Pod | None:
        now = cluster.core.read_namespaced_pod(pod.metadata.name, pod.metadata.namespace)
        ready = all(c.ready for c in now.status.container_statuses or [])
        return now if restarts(now) > after and ready else None

    try:
        return cluster.poll(back, timeout=timeout, what=f"{pod.metadata.name} restarted by its kubelet and Ready")
    except WaitTimeout as exc:
        now = cluster.core.read_namespaced_pod(pod.metadata.name, pod.metadata.namespace)
        states = [(c.name, c.restart_count, c.ready, c.state, c.last_state)
                  for c in now.status.container_statuses or []]
        raise AssertionError(f"{exc}\n{cluster.describe_pod(pod.metadata.name, namespace=pod.metadata.namespace)}"
                             f"\n{states}") from exc


def kill_host_process(cluster: RealCluster, name: str, *, down_s: float = 0.0) -> None:
    """SIGKILL the harness component ``name`` and start it again after ``down_s`` seconds."""
    component = cluster.components[name]
    assert component.proc is not None and component.running, f"{name} is not running"
    os.kill(component.proc.pid, signal.SIGKILL)
    component.proc.wait(timeout=10)
    time.sleep(down_s)
    component.start()


def apiserver_back(cluster: RealCluster, *, timeout: float = 90) -> None:
    """A write goes through (a read may be served from the apiserver's cache while etcd is still away)."""
    def write() -> bool | None:
        cluster.core.patch_namespace("default", {"metadata": {"annotations": {"drsched.io/fault-probe":
                                                                              str(time.time())}}})
        return True

    cluster.poll(lambda: _ignoring_errors(write), timeout=timeout, what="the apiserver taking writes again")


def _ignoring_errors(fn):
    try:
        return fn()
    except Exception:  # noqa: BLE001 (an apiserver away for a moment: not yet)
        return None


@dataclass
class Stream:
    """Checkpointed `workloads cpu` jobs scheduled by drsched, one every ``every_s`` seconds until stopped."""

    cluster: RealCluster
    image: str
    run: str
    state_root: Path
    units: int
    work: int
    every_s: float = 4.0
    created: list[str] = field(default_factory=list)
    create_errors: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="fault-stream", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=120)

    def _loop(self) -> None:
        i = 0
        while not self._stop.is_set():
            name = f"{self.run}-s{i:03d}"
            pod = self._pod(name)
            while not self._stop.is_set():
                try:
                    self.cluster.core.create_namespaced_pod("default", pod)
                    break
                except client.ApiException as exc:
                    if exc.status == 409:  # it committed before the connection broke
                        break
                    self.create_errors += 1
                except Exception:  # noqa: BLE001 (connection refused or reset: the apiserver is away)
                    self.create_errors += 1
                self._stop.wait(0.5)
            else:
                return
            self.created.append(name)
            i += 1
            self._stop.wait(self.every_s)

    def _pod(self, name: str) -> client.V1Pod:
        state = drsched.state_dir(self.state_root, name)
        return client.V1Pod(
            metadata=client.V1ObjectMeta(name=name, labels={FAULT_LABEL: self.run, "drsched.io/workload": "cpu"}),
            spec=client.V1PodSpec(
                scheduler_name="drsched", restart_policy="Never", termination_grace_period_seconds=10,
                containers=[client.V1Container(
                    name="job", image=self.image, image_pull_policy="Never",
                    args=drsched.job_args("/state", units=self.units, work=self.work),
                    volume_mounts=[client.V1VolumeMount(name="state", mount_path="/state")],
                    resources=client.V1ResourceRequirements(requests={"cpu": "100m", "memory": "64Mi"}),
                )],
                volumes=[client.V1Volume(name="state", host_path=client.V1HostPathVolumeSource(
                    path=str(state), type="Directory"))],
            ),
        )  # fmt: skip


def extender_signal(cluster: RealCluster, name: str, **labels: str) -> dict[str, float]:
    """``name`` summed over ``labels``, per live extender replica (by pod name; a replica not answering: absent)."""
    out = {}
    for pod in live_pods(cluster, "drsched-extender"):
        metrics = metrics_of(f"http://{pod.status.pod_ip}:8888/metrics")
        if metrics is not None:
            out[pod.metadata.name] = sum_samples(metrics, name, **labels)
    return out
