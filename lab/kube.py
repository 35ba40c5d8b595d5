"""Everything the lab does to a real-node cluster, in one module: deploy drsched, switch arms, submit job pods,
observe them, read the monitor agents, clean up.

Why it exists: the experiment's logic (``runner``) must read as submit / observe / record; the Kubernetes
object shapes, patches and HTTP reads live here. drsched is deployed by ``harness.deploy``, as the real-node
e2e tests deploy it (the local-images overlay, the drsched kube-scheduler on the host calling the extender
through its Service); what is the lab's own (one extender replica, its migration settings, its decision log
on a host directory the lab reads for the scored gate) is set here.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import urllib.request
from pathlib import Path

from kubernetes import client
from prometheus_client.parser import text_string_to_metric_families

from harness import deploy as harness_deploy
from harness.nodes import CGROUP_FS
from harness.realcluster import RealCluster
from lab.arms import TAINT_MODE
from lab.errors import RunError
from lab.observed import PodObs
from lab.schedule import Job, uses_source
from lab.source import pod_env
from lab.tenants import LabTenant
from migration.degraded import TAINT_KEY as DEGRADED_TAINT
from policy.decisionlog import SEGMENT_GLOB, LogError, read_log
from policy.migrate.knobs import LAB as LAB_KNOBS

log = logging.getLogger(__name__)

JOBS_NS = "lab"
PROGRESS_PORT = 8080
JOB_UID = 10001  # the workloads image's non-root user
STATE_ROOT = Path("/var/lib/drsched-lab")
RUN_LABEL = "drsched.io/lab-run"
JOB_LABEL = "drsched.io/lab-job"
TENANT_LABEL = "drsched.io/lab-tenant"
"""A tenant's label (``lab.tenants``), valued with its arm's run id: never ``RUN_LABEL``, so no tenant is observed
as a job, counted in the endpoint or asked for by the scored gate."""
MIGRATION_METRICS_PORT = 9848
DECISIONS_MOUNT = "/var/lib/drsched/decisions"  # in the extender's container
DECISIONS_KEPT = "decisions"
"""The results directory's copy of the extender's decision log (``Lab.keep_decision_log``)."""
SHADOW_ARGS = ("--shadow=true", f"--shadow-namespaces={JOBS_NS}", "--shadow-scheduler-names=default-scheduler")
"""Shadow mode on the lab's jobs (issue #23 D6): in a default-scheduler arm the extender records, at each
binding, what its policy would have chosen, with the pod's outcome; ``lab shadow`` compares that prediction
with what the drsched arm measured on the same schedule. It binds nothing (it runs beside the extender's
serving, on the system CPUs under isolation)."""
EXTENDER_UID = 65534  # the extender manifest's runAsUser: it writes the decision log
# The migration controller as the migration arm runs it: acting (no --dry-run), reading progress over HTTP,
# tuned to jobs of tens of seconds instead of the shipped minutes (policy.migrate.knobs.LAB, which the simulator's
# lab-straggler scenario moves jobs by too).
MIGRATION_ARGS = [
    "--policy=demand-aware", f"--interval-s={LAB_KNOBS.interval_s:g}", "--lease-namespace=drsched-system",
    "--metrics-host=0.0.0.0", f"--metrics-port={MIGRATION_METRICS_PORT}", "--progress-source=http",
    f"--progress-port={PROGRESS_PORT}", f"--min-running-s={LAB_KNOBS.min_running_s:g}",
    f"--slow-checks={LAB_KNOBS.slow_checks}", f"--cooldown-s={LAB_KNOBS.cooldown_s:g}",
    f"--max-fraction={LAB_KNOBS.max_fraction:g}", f"--restore-cost-s={LAB_KNOBS.restore_cost_s:g}",
    f"--namespace={JOBS_NS}",
    "--log-level=DEBUG",  # every skip with its reason: the lab keeps the log to say why a job was not moved
]  # fmt: skip


class Lab:
    """drsched deployed on one `RealCluster`; arms switch in place, every run's pods carry its run label."""

    def __init__(self, cluster: RealCluster):
        self.cluster = cluster
        self.token = secrets.token_hex(16)
        self.apps = client.AppsV1Api(cluster.api)
        self.policy = "model"  # the shipped extender's --policy
        self.hot_filter: str | None = None  # the extender's --hot-filter; None: none given, the shipped default
        self.migration_on = False  # `_lab_settings` deploys the controller scaled to 0
        self.controller: tuple[str, ...] = ()  # the arm's own controller args on top of MIGRATION_ARGS
        self.taint_rbac = False  # the taint baseline's nodes-patch binding applied (``_grant_taint``)
        # The extender's decision log, on the host (every node is this machine): one directory per deploy.
        self.decision_dir = STATE_ROOT / "decisions" / self.token[:12]
        self.source_port: int | None = None  # the lab's data source on the host (lab.source), where one runs

    # ---- deploy and switch arms -----------------------------------------------------------------

    def deploy(self, archives: list[Path]) -> None:
        """drsched deployed (`harness.deploy`) as the lab runs it: the arms start at policy model, no migration."""
        self.decision_dir.mkdir(parents=True, exist_ok=True)
        os.chown(self.decision_dir, EXTENDER_UID, EXTENDER_UID)
        harness_deploy.deploy(self.cluster, archives=archives, token=self.token,
                              customize=lambda docs: _lab_settings(docs, decision_dir=self.decision_dir))
        self.cluster.create_namespace(JOBS_NS)

    def undeploy(self, *, keep_log: Path | None = None) -> None:
        """Remove what deploy() made, waiting until it is gone, so a cluster shared with tests is left clean;
        the decision log is copied to ``keep_log`` first (once the extender has stopped and flushed it)."""
        harness_deploy.undeploy(self.cluster)
        self.cluster.kubectl("delete", "namespace", JOBS_NS, "--wait=true", "--ignore-not-found", timeout=180)
        if keep_log is not None:
            self.keep_decision_log(keep_log)
        self.remove_decision_log()

    def keep_decision_log(self, into: Path) -> None:
        """Copy the extender's decision log (its segment files) into ``into``, for ``lab shadow``; a log that
        cannot be copied is reported, never a reason to fail the run whose results are already written."""
        try:
            segments = sorted(self.decision_dir.glob(SEGMENT_GLOB)) if self.decision_dir.is_dir() else []
            if segments:
                into.mkdir(parents=True, exist_ok=True)
                for seg in segments:
                    shutil.copy2(seg, into / seg.name)
            log.info("decision log kept into=%s segments=%d", into, len(segments))
        except OSError as exc:
            log.warning("decision log not kept into=%s: %s", into, exc)

    def remove_decision_log(self) -> None:
        """This deploy's decision-log directory, and the decisions directory above it once no other deploy's
        log is in it (nothing of a run is left under STATE_ROOT)."""
        shutil.rmtree(self.decision_dir, ignore_errors=True)
        for empty in (self.decision_dir.parent, STATE_ROOT):
            try:
                empty.rmdir()
            except OSError:  # not empty: another deploy's log or a run's state is still there
                break

    # ---- what the gates read ----------------------------------------------------------------------

    def scored_uids(self) -> set[str]:
        """UIDs of the pods the extender scored since deploy (``scored_uids``)."""
        return scored_uids(self.decision_dir)

    def served_versions(self) -> dict[str, set[str]]:
        """UID -> the model versions of the serve rows that scored it (``served_versions``)."""
        return served_versions(self.decision_dir)

    def placed_pods(self) -> list[tuple[str, str]]:
        """(``namespace/name``, node) of every pod bound to a node and not ended."""
        return [(f"{p.metadata.namespace}/{p.metadata.name}", p.spec.node_name)
                for p in self.cluster.core.list_pod_for_all_namespaces().items
                if p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]

    def _patch_args(self, deployment: str, change) -> None:
        dep = self.apps.read_namespaced_deployment(deployment, harness_deploy.NS)
        args = change(list(dep.spec.template.spec.containers[0].args or []))
        patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/args", "value": args}]
        self.apps.patch_namespaced_deployment(deployment, harness_deploy.NS, patch)

    def set_arm(self, *, policy: str | None, migration: bool, hot_filter: str | None = None,
                controller: tuple[str, ...] = ()) -> None:
        """Extender policy and hot filter (through its container args and one rollout; a None hot filter drops
        the flag, leaving the shipped default) and the migration controller on or off (1 or 0 replicas), with
        the arm's ``controller`` args on top of ``MIGRATION_ARGS`` (a change is one more rollout where it runs);
        a None policy (the default-scheduler arm) leaves the extender as it is."""
        if policy is not None and (policy, hot_filter) != (self.policy, self.hot_filter):
            self._patch_args("drsched-extender", lambda args: extender_args(args, policy=policy,
                                                                            hot_filter=hot_filter))
            self.policy, self.hot_filter = policy, hot_filter
            self._rollout("drsched-extender")
        if migration and TAINT_MODE in controller and not self.taint_rbac:
            self._grant_taint()
        if migration and tuple(controller) != self.controller:
            self._patch_args("drsched-migration", lambda _args: migration_args(controller))
            self.controller = tuple(controller)
            if self.migration_on:
                self._rollout("drsched-migration")
        if migration != self.migration_on:
            self.apps.patch_namespaced_deployment_scale("drsched-migration", harness_deploy.NS,
                                                        {"spec": {"replicas": int(migration)}})
            self.migration_on = migration
            self._rollout("drsched-migration")
        log.info("arm set policy=%s hot_filter=%s migration=%s controller=%s", self.policy,
                 self.hot_filter or "shipped", self.migration_on, " ".join(self.controller) or "lab")

    def _grant_taint(self) -> None:
        """The taint baseline's one extra right, nodes patch (``manifests/migration/taint/rbac.yaml``, kept out of
        the controller's own RBAC), bound before its first arm: without it every taint failed with 403 and the
        baseline ran as drsched without migration (the straggler pilot's first taint arms, 2026-12-07)."""
        done = self.cluster.kubectl("apply", "-f", str(TAINT_RBAC), timeout=60)
        if done.returncode != 0:
            raise RunError(f"kubectl apply -f {TAINT_RBAC} failed: {done.stderr.strip()}")
        self.taint_rbac = True

    def clear_degraded_taints(self) -> list[str]:
        """Remove the taint baseline's ``drsched.io/degraded`` from every node (the nodes it was on): an arm's
        taint must not outlive it, and a controller scaled away or killed may leave one behind."""
        cleared = []
        for node in self.cluster.core.list_node().items:
            taints = node.spec.taints or []
            kept = [t for t in taints if t.key != DEGRADED_TAINT]
            if len(kept) != len(taints):
                self.cluster.core.patch_node(node.metadata.name, {"spec": {"taints": [  # None: the field dropped
                    {"key": t.key, "value": t.value, "effect": t.effect} for t in kept] or None}})
                cleared.append(node.metadata.name)
        if cleared:
            log.info("degraded taint cleared nodes=%s", ",".join(cleared))
        return cleared

    def _rollout(self, deployment: str) -> None:
        done = self.cluster.kubectl("-n", harness_deploy.NS, "rollout", "status", f"deployment/{deployment}",
                                    "--timeout=180s", timeout=200)
        if done.returncode != 0:
            raise RunError(f"rollout of {deployment} did not finish: {done.stderr.strip()}")
        # `rollout status` returns once the new pods are available, while the old ones may still be terminating
        # and answering kube-scheduler on its kept-alive connection: wait until they are gone, so an arm's first
        # pod is not scored by the previous arm's policy (the scored gate's off_policy check).
        selector = f"app.kubernetes.io/name={deployment}"
        self.cluster.poll(lambda: True if not any(
            p.metadata.deletion_timestamp for p in self.cluster.core.list_namespaced_pod(
                harness_deploy.NS, label_selector=selector).items) else None,
            timeout=120, what=f"the old pods of {deployment} gone")

    # ---- jobs -----------------------------------------------------------------------------------

    def state_dir(self, run_id: str, job: str) -> Path:
        path = STATE_ROOT / run_id / job
        path.mkdir(parents=True, exist_ok=True)
        os.chown(path, JOB_UID, JOB_UID)
        return path

    def submit(self, job: Job, *, run_id: str, image: str, scheduler: str | None, expected_s: float,
               node: str | None = None) -> str:
        """Create the job's pod; ``node`` pins it (solo runs); a job that pulls its data is told where the
        source is (``lab.source.pod_env``). Returns the pod name."""
        name = f"{run_id}-{job.job}"
        env = None
        if uses_source([job]):
            if self.source_port is None:
                raise RunError(f"job {job.job} ({job.template}) pulls from the lab's source, and none runs")
            env = pod_env(self.source_port)
        profile = (f"cpu={job.cpu_use_m / 1000:g},mem={job.mem_use_mi / 1024:.3f},"
                   f"net={job.net_mbit / 8:.2f},disk={job.io_mbps:.2f}")
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(
                name=name, labels={RUN_LABEL: run_id, JOB_LABEL: job.job, "drsched.io/workload": job.template,
                                   "drsched.io/migrate": "true"},
                annotations={"drsched.io/profile": profile, "drsched.io/progress-port": str(PROGRESS_PORT),
                             "drsched.io/expected-duration": f"{expected_s:.1f}"}),
            spec=client.V1PodSpec(
                scheduler_name=scheduler, restart_policy="Never", termination_grace_period_seconds=30,
                node_selector={"kubernetes.io/hostname": node} if node else None,
                containers=[client.V1Container(
                    name="job", image=image, image_pull_policy="Never", env=env,
                    args=[*job.argv(), "--checkpoint-every=5", f"--progress-port={PROGRESS_PORT}",
                          "--log-level=WARNING"],
                    volume_mounts=[client.V1VolumeMount(name="state", mount_path="/state")],
                    resources=client.V1ResourceRequirements(
                        requests={"cpu": f"{job.cpu_request_m}m", "memory": f"{job.mem_request_mi}Mi"},
                        limits={"memory": f"{job.mem_request_mi * 2}Mi"}),
                )],
                volumes=[client.V1Volume(name="state", host_path=client.V1HostPathVolumeSource(
                    path=str(self.state_dir(run_id, job.job)), type="Directory"))],
            ),
        )  # fmt: skip
        self.cluster.create_pod(pod, namespace=JOBS_NS)
        return name

    def start_tenants(self, tenants: list[LabTenant], *, run_id: str, image: str) -> list[float]:
        """Create the arm's tenants, each bound to its node (``tenant_pod``), and wait until every one runs, so the
        arm's clock starts with them in place. Returns when each one's container started (unix seconds, whole
        from the API): its cycle's time 0."""
        names = [tenant_name(run_id, k) for k in range(len(tenants))]
        for name, tenant in zip(names, tenants, strict=True):
            self.cluster.create_pod(tenant_pod(tenant, name=name, run_id=run_id, image=image), namespace=JOBS_NS)

        def running() -> dict[str, float] | None:
            pods = self.cluster.core.list_namespaced_pod(JOBS_NS, label_selector=f"{TENANT_LABEL}={run_id}").items
            started = {p.metadata.name: _running_since(p) for p in pods if p.status.phase == "Running"}
            return started if len(started) == len(tenants) and None not in started.values() else None

        if not tenants:
            return []
        started = self.cluster.poll(running, timeout=120, what=f"the {len(tenants)} tenants of run {run_id} running")
        log.info("tenants running run=%s nodes=%s", run_id, ",".join(t.node_name for t in tenants))
        return [started[name] for name in names]

    def delete_tenants(self, run_id: str) -> None:
        """Remove the arm's tenants (at its end, or when it was interrupted), waiting until they are gone."""
        selector = f"{TENANT_LABEL}={run_id}"
        self.cluster.core.delete_collection_namespaced_pod(JOBS_NS, label_selector=selector, grace_period_seconds=0)
        self.cluster.poll(lambda: True if not self.cluster.core.list_namespaced_pod(
            JOBS_NS, label_selector=selector).items else None, timeout=90, what=f"tenants of run {run_id} deleted")

    def observe(self, run_id: str) -> list[PodObs]:
        pods = self.cluster.core.list_namespaced_pod(JOBS_NS, label_selector=f"{RUN_LABEL}={run_id}").items
        return [_obs(p) for p in pods]

    def delete_run(self, run_id: str) -> None:
        self.cluster.core.delete_collection_namespaced_pod(JOBS_NS, label_selector=f"{RUN_LABEL}={run_id}",
                                                           grace_period_seconds=0)
        self.cluster.poll(lambda: True if not self.observe(run_id) else None, timeout=90,
                          what=f"pods of run {run_id} deleted")
        self.remove_run_state(run_id)

    @staticmethod
    def remove_run_state(run_id: str) -> None:
        """The host directories a run's jobs kept their state in (their pods gone, or going with the cluster)."""
        shutil.rmtree(STATE_ROOT / run_id, ignore_errors=True)

    def progress(self, run_id: str, job: str) -> dict | None:
        try:
            return json.loads((STATE_ROOT / run_id / job / "progress.json").read_text())
        except (OSError, ValueError):
            return None

    def pod_cpu_seconds(self, node: str, uid: str) -> float | None:
        """CPU seconds the pod's cgroup has used so far (read on the host: every node's cgroups are local)."""
        for qos in ("burstable", "besteffort", ""):
            path = CGROUP_FS / "cpuacct" / node / "kubepods" / qos / f"pod{uid}" / "cpuacct.usage"
            try:
                return int(path.read_text()) / 1e9
            except (OSError, ValueError):
                continue
        return None

    # ---- what the migration controller decided -------------------------------------------------

    def controller_report(self) -> tuple[list[tuple[str, str, float]], str]:
        """The running migration controller's counters (name, labels, value) from its /metrics, and its log.
        Each migration arm scales the controller up from 0, so both cover that arm alone."""
        samples: list[tuple[str, str, float]] = []
        pods = self.cluster.core.list_namespaced_pod(
            harness_deploy.NS, label_selector="app.kubernetes.io/name=drsched-migration").items
        for pod in pods:
            if not pod.status.pod_ip or pod.metadata.deletion_timestamp is not None:
                continue
            text = _get_text(f"http://{pod.status.pod_ip}:{MIGRATION_METRICS_PORT}/metrics")
            for family in text_string_to_metric_families(text or ""):
                for sample in family.samples:
                    if sample.name.startswith("drsched_migration_") and not sample.name.endswith(
                            ("_bucket", "_created")):
                        labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                        samples.append((sample.name, labels, float(sample.value)))
        logs = self.cluster.kubectl("-n", harness_deploy.NS, "logs", "deployment/drsched-migration",
                                    "--tail=-1", timeout=60)
        return samples, logs.stdout if logs.returncode == 0 else f"kubectl logs failed: {logs.stderr.strip()}"

    # ---- usage from the monitor agents ----------------------------------------------------------

    def usage(self, uids: set[str]) -> dict[str, dict[str, float]]:
        """Per node, the summed usage of the given pods as its agent reports it: cpu_m, mem_mi, net_mbit,
        io_mbps; and the node's own cpu in use and measured capacity (node_cpu_m, capacity_m). A node whose
        agent does not answer is left out."""
        out: dict[str, dict[str, float]] = {}
        agents = self.cluster.core.list_namespaced_pod(
            harness_deploy.NS, label_selector="app.kubernetes.io/name=drsched-monitor").items
        for agent in agents:
            if not agent.status.pod_ip:
                continue
            url = f"http://{agent.status.pod_ip}:{harness_deploy.MONITOR_PORT}/usage"
            report = harness_deploy.get_json(url, self.token)
            if report is None:
                continue
            total = {"cpu_m": 0.0, "mem_mi": 0.0, "net_mbit": 0.0, "io_mbps": 0.0}
            for uid, pod in (report.get("pods") or {}).items():
                if uid not in uids:
                    continue
                total["cpu_m"] += 1000 * _cur(pod, "cpu_cores")
                total["mem_mi"] += _cur(pod, "memory_bytes") / 2**20
                total["net_mbit"] += 8e-6 * (_cur(pod, "net_rx_bytes_per_second")
                                             + _cur(pod, "net_tx_bytes_per_second"))
                total["io_mbps"] += 1e-6 * (_cur(pod, "disk_read_bytes_per_second")
                                            + _cur(pod, "disk_write_bytes_per_second"))
            # What the extender reads for the node: its cpu in use (the ewma) and the capacity the agent measured.
            node_units = ((report.get("scheduler_units") or {}).get("ewma") or {})
            total["node_cpu_m"] = 1000 * float(node_units.get("cpu_cores") or 0.0)
            total["capacity_m"] = 1000 * float((report.get("node") or {}).get("capacity_cores") or 0.0)
            out[agent.spec.node_name] = total
        return out


def tenant_name(run_id: str, k: int) -> str:
    """The pod name of an arm's ``k``-th tenant: not prefixed by the run id, which names the arm's jobs
    (``lab shadow`` matches those by it)."""
    return f"tenant-{run_id}-{k}"


def tenant_pod(tenant: LabTenant, *, name: str, run_id: str, image: str) -> client.V1Pod:
    """A tenant's pod: bound to its node by ``spec.nodeName`` (placed before the jobs, by no scheduler: kubelet
    admits it and kube-scheduler's cache counts its request like any bound pod's), burstable as a long-running
    service often is (its small cpu request, memory requested as used and limited at twice that, no cpu limit),
    running the workloads image's cpu job under its cycle (``lab.tenants.LabTenant.argv``). No profile annotation:
    drsched knows its use only from the usage signal, as a real tenant's. State in an emptyDir: it never moves."""
    t = tenant.tenant
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={TENANT_LABEL: run_id, "drsched.io/workload": "lab-tenant"}),
        spec=client.V1PodSpec(
            node_name=tenant.node_name, restart_policy="Always", termination_grace_period_seconds=0,
            containers=[client.V1Container(
                name="tenant", image=image, image_pull_policy="Never", args=[*tenant.argv(), "--log-level=WARNING"],
                volume_mounts=[client.V1VolumeMount(name="state", mount_path="/state")],
                resources=client.V1ResourceRequirements(
                    requests={"cpu": f"{t.request_m}m", "memory": f"{t.mem_mi}Mi"},
                    limits={"memory": f"{t.mem_mi * 2}Mi"}),
            )],
            volumes=[client.V1Volume(name="state", empty_dir=client.V1EmptyDirVolumeSource())],
        ),
    )  # fmt: skip


def scored_uids(directory: Path) -> set[str]:
    """UIDs of the pods the extender scored, or had nothing to score for: its decision log's serve rows in
    ``directory`` (one per prioritize it answered) and its filter rows (a filter that left the pod at most one
    node, after which kube-scheduler binds without calling prioritize). A log that does not read proves
    nothing: logged, and no pod counts as scored."""
    try:
        contents = read_log(directory)
    except LogError as exc:
        log.warning("decision log unreadable: no pod counts as scored error=%s", exc)
        return set()
    return ({r.data["uid"] for r in contents.decisions if r.data.get("mode") == "serve"}
            | {r.data["uid"] for r in contents.filters})


def served_versions(directory: Path) -> dict[str, set[str]]:
    """UID -> the model versions of the decision log's serve rows in ``directory`` that scored it ({} for a log
    that does not read: ``scored_uids`` already counts none of its pods as scored)."""
    try:
        contents = read_log(directory)
    except LogError:
        return {}
    out: dict[str, set[str]] = {}
    for r in contents.decisions:
        if r.data.get("mode") == "serve":
            out.setdefault(r.data["uid"], set()).add(str(r.data.get("model_version")))
    return out


TAINT_RBAC = harness_deploy.OVERLAY.parents[1] / "migration" / "taint" / "rbac.yaml"


def migration_args(controller: tuple[str, ...]) -> list[str]:
    """The migration controller's container args in an arm: the lab's (``MIGRATION_ARGS``), then the arm's own
    (``lab.arms.Arm.controller``: flags the lab's never set, the baselines' ``--mode`` and ``--resume``)."""
    return [*MIGRATION_ARGS, *controller]


def extender_args(args: list[str], *, policy: str, hot_filter: str | None) -> list[str]:
    """The extender's container args with ``--policy`` replaced and ``--hot-filter`` set (None: removed)."""
    out = [f"--policy={policy}" if a.startswith("--policy=") else a for a in args
           if not a.startswith("--hot-filter=")]
    return out if hot_filter is None else [*out, f"--hot-filter={hot_filter}"]


def _lab_settings(docs: list[dict], *, decision_dir: Path) -> None:
    """One extender replica (on two shared cores a second one only adds noise inside the nodes' quotas), its
    decision log in ``decision_dir`` on the host; the migration controller with the lab's settings, scaled to 0
    until an arm turns it on. (Under isolation ``harness.deploy.place_on_system_node`` keeps the monitor agents on
    the job nodes, for the lab and ``realnodes up --isolate`` alike.)"""
    for doc in docs:
        if doc["kind"] != "Deployment":
            continue
        if doc["metadata"]["name"] == "drsched-extender":
            doc["spec"]["replicas"] = 1
            spec = doc["spec"]["template"]["spec"]
            container = spec["containers"][0]
            container.setdefault("args", []).extend([f"--decision-log-dir={DECISIONS_MOUNT}", *SHADOW_ARGS])
            container.setdefault("volumeMounts", []).append({"name": "lab-decisions", "mountPath": DECISIONS_MOUNT})
            spec.setdefault("volumes", []).append(
                {"name": "lab-decisions", "hostPath": {"path": str(decision_dir), "type": "Directory"}})
        elif doc["metadata"]["name"] == "drsched-migration":
            doc["spec"]["replicas"] = 0
            doc["spec"]["template"]["spec"]["containers"][0]["args"] = list(MIGRATION_ARGS)


def _get_text(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310 (a pod IP of our own cluster)
            return resp.read().decode()
    except (OSError, UnicodeDecodeError):
        return None


def _running_since(pod: client.V1Pod) -> float | None:
    """When the pod's (first) container started running, unix seconds; None while it is not running."""
    for status in pod.status.container_statuses or []:
        if status.state is not None and status.state.running is not None and status.state.running.started_at:
            return status.state.running.started_at.timestamp()
    return None


def _cur(pod: dict, key: str) -> float:
    return float(((pod.get(key) or {}).get("current")) or 0.0)


def _obs(pod: client.V1Pod) -> PodObs:
    started = finished = exit_code = None
    for status in pod.status.container_statuses or []:
        state = status.state
        if state.running is not None and state.running.started_at is not None:
            started = state.running.started_at.timestamp()
        if state.terminated is not None:
            term = state.terminated
            started = term.started_at.timestamp() if term.started_at else None
            finished = term.finished_at.timestamp() if term.finished_at else None
            exit_code = term.exit_code
    unschedulable = any(c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
                        for c in pod.status.conditions or [])
    return PodObs(name=pod.metadata.name, job=(pod.metadata.labels or {}).get(JOB_LABEL, ""), uid=pod.metadata.uid,
                  node=pod.spec.node_name, phase=pod.status.phase or "", started=started, finished=finished,
                  exit_code=exit_code, deleting=pod.metadata.deletion_timestamp is not None,
                  unschedulable=unschedulable)  # fmt: skip
