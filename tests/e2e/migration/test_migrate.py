"""A slow job moved end to end, and dry run, against the real control plane (KWOK nodes; the test plays the job)."""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from harness.procs import free_port
from tests.helpers import REPO, wait_for

from .helpers import CHECKPOINT, job_pod, required_fields

pytestmark = pytest.mark.e2e


def _metric(port: int, name: str) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()  # noqa: S310
    match = re.search(rf"^{re.escape(name)} ([0-9.e+]+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


def test_slow_job_is_migrated_end_to_end(mig, dump):
    src = mig.node("src", cpu="2")
    big = mig.node("big", cpu="16")
    mig.core.create_namespaced_pod(mig.namespace, job_pod("job", node=src))
    mig.start_fake_jobs()
    port = free_port()
    ctl = mig.controller(f"--metrics-port={port}").start()

    successor = wait_for(lambda: next((p for p in mig.pods() if p.metadata.name == "job-m1"
                                       and p.status.phase == "Running"), None),
                         timeout=60, what="job-m1 Running", on_timeout=dump)
    assert successor.spec.node_name == big
    wait_for(lambda: not mig.windows(), timeout=30, what="the window released", on_timeout=dump)
    assert mig.live_copies() == {"job": ["job-m1"]}, dump()
    assert all(p.metadata.name != "job" for p in mig.pods()), "the old pod is gone"
    ann = successor.metadata.annotations
    assert ann["drsched.io/migrated-from"] == "job"
    lineage = json.loads(ann["drsched.io/migration"])
    assert (lineage["source_node"], lineage["candidates"][0], lineage["attempt"]) == (src, big, 1)
    assert successor.metadata.labels["drsched.io/job"] == "job"
    assert "drsched.io/progress" not in ann or json.loads(ann["drsched.io/progress"])["resumed_from"] == 200
    assert required_fields(successor) == [[("metadata.name", "In", (big,)), ("metadata.name", "NotIn", (src,))]]

    assert wait_for(lambda: _metric(port, "drsched_migration_completed_total") == 1.0, timeout=10,
                    what="completed metric", on_timeout=dump)
    assert _metric(port, "drsched_migration_started_total") == 1.0
    assert _metric(port, 'drsched_migration_decisions_total{verdict="allowed"}') == 1.0
    reasons_old = {e.reason for e in mig.events("job")}
    assert {"MigrationDecision", "MigrationStarted"} <= reasons_old, reasons_old
    wait_for(lambda: "MigrationCompleted" in {e.reason for e in mig.events("job-m1")}, timeout=10,
             what="MigrationCompleted event", on_timeout=dump)
    assert ctl.proc.poll() is None, dump()
    log = ctl.log_text()
    assert f"[{mig.namespace}/job] migration decision" in log
    assert "reason=completed" in log


def test_dry_run_only_logs_and_emits_events(mig, dump):
    src = mig.node("src", cpu="2")
    mig.node("big", cpu="16")
    mig.core.create_namespaced_pod(mig.namespace, job_pod("job", node=src))
    mig.start_fake_jobs()
    ctl = mig.controller("--dry-run").start()

    wait_for(lambda: "MigrationDryRun" in {e.reason for e in mig.events("job")}, timeout=60,
             what="a MigrationDryRun event", on_timeout=dump)
    wait_for(lambda: ctl.log_text().count("migration decision") >= 2, timeout=20, what="two decision log lines",
             on_timeout=dump)
    assert mig.live_copies() == {"job": ["job"]}, dump()
    assert [p.spec.node_name for p in mig.pods()] == [src]
    assert not mig.windows()
    assert "reason=dry-run" in ctl.log_text()
    assert ctl.proc.poll() is None, dump()


def test_least_privilege_rbac_is_enough(mig, dump, tmp_path):
    """The controller, authenticated as its ServiceAccount bound to manifests/migration/rbac.yaml, moves a job."""
    import yaml
    from kubernetes import client

    sa = "drsched-migration"
    mig.cluster.create_service_account(mig.namespace, sa)
    rbac = client.RbacAuthorizationV1Api(mig.cluster.api)
    role, binding = yaml.safe_load_all((REPO / "manifests/migration/rbac.yaml").read_text())
    suffix = f"-{mig.tag}"
    role["metadata"]["name"] += suffix
    binding["metadata"]["name"] += suffix
    binding["roleRef"]["name"] = role["metadata"]["name"]
    binding["subjects"][0]["namespace"] = mig.namespace
    rbac.create_cluster_role(role)
    rbac.create_cluster_role_binding(binding)
    try:
        token = mig.core.create_namespaced_service_account_token(
            sa, mig.namespace, client.AuthenticationV1TokenRequest(
                spec=client.V1TokenRequestSpec(audiences=["https://kubernetes.default.svc.cluster.local"],
                                               expiration_seconds=3600))).status.token
        kubeconfig = tmp_path / "sa.kubeconfig"
        kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "sa",
            "clusters": [{"name": "e2e", "cluster": {"server": mig.cluster.api_url,
                                                     "certificate-authority": str(mig.cluster.pki.ca.cert)}}],
            "users": [{"name": "sa", "user": {"token": token}}],
            "contexts": [{"name": "sa", "context": {"cluster": "e2e", "user": "sa"}}]}))
        src = mig.node("src", cpu="2")
        big = mig.node("big", cpu="16")
        mig.core.create_namespaced_pod(mig.namespace, job_pod("job", node=src))
        mig.start_fake_jobs()
        ctl = mig.controller()
        ctl.argv = [a if not a.startswith("--kubeconfig=") else f"--kubeconfig={kubeconfig}" for a in ctl.argv]
        ctl.start()
        successor = wait_for(lambda: next((p for p in mig.pods() if p.metadata.name == "job-m1"
                                           and p.status.phase == "Running"), None),
                             timeout=60, what="job-m1 Running as the ServiceAccount", on_timeout=dump)
        assert successor.spec.node_name == big
        wait_for(lambda: not mig.windows(), timeout=30, what="the window released", on_timeout=dump)
        wait_for(lambda: "MigrationCompleted" in {e.reason for e in mig.events("job-m1")}, timeout=10,
                 what="MigrationCompleted event", on_timeout=dump)
        assert "403" not in ctl.log_text() and "forbidden" not in ctl.log_text().lower(), dump()
    finally:
        rbac.delete_cluster_role_binding(binding["metadata"]["name"])
        rbac.delete_cluster_role(role["metadata"]["name"])


def test_a_second_move_goes_to_a_third_node_never_back_where_it_just_was(mig, dump):
    """The lab's rn-large -> rn-large: the first move's 'In [b]' stayed on the template, the second successor
    needed 'In [b]' and 'In [c]', fit nowhere, and the chain ended on its source b."""
    a, b, c = mig.node("a", cpu="2"), mig.node("b", cpu="16"), mig.node("c", cpu="8")
    mig.core.create_namespaced_pod(mig.namespace, job_pod("job", node=a, tag=mig.tag))
    fake = mig.start_fake_jobs()
    ctl = mig.controller().start()
    first = wait_for(lambda: next((p for p in mig.pods() if p.metadata.name == "job-m1"
                                   and p.status.phase == "Running"), None),
                     timeout=60, what="job-m1 Running", on_timeout=dump)
    assert first.spec.node_name == b, dump()
    wait_for(lambda: not mig.windows(), timeout=30, what="the first window released", on_timeout=dump)
    fake.rate_of["job-m1"] = 1.0  # b turns slow for it: a straggler

    second = wait_for(lambda: next((p for p in mig.pods() if p.metadata.name == "job-m2"
                                    and p.status.phase == "Running"), None),
                      timeout=60, what="job-m2 Running", on_timeout=dump)
    assert second.spec.node_name in (a, c), dump()
    (fields,) = required_fields(second)
    assert fields == [("metadata.name", "In", (second.spec.node_name,)), ("metadata.name", "NotIn", (b,))], fields
    assert json.loads(second.metadata.annotations["drsched.io/migration"])["attempt"] == 2
    wait_for(lambda: not mig.windows(), timeout=30, what="the second window released", on_timeout=dump)
    assert mig.live_copies() == {"job": ["job-m2"]}, dump()
    assert "cannot take it" not in ctl.log_text(), "pinned to a node it can go to at the first try"


def test_resume_scratch_hands_over_no_state(mig, dump):
    """The no-checkpoint baseline: the successor's state volume is an empty emptyDir; resumed from 0 is complete."""
    from kubernetes import client

    src = mig.node("src", cpu="2")
    mig.node("big", cpu="16")
    state = client.V1Volume(name="state", host_path=client.V1HostPathVolumeSource(path="/srv/job", type="Directory"))
    mig.core.create_namespaced_pod(mig.namespace, job_pod("job", node=src, volumes=[state]))
    mig.start_fake_jobs(successor_resumes_from=0)
    port = free_port()
    ctl = mig.controller("--resume=scratch", f"--metrics-port={port}").start()
    successor = wait_for(lambda: next((p for p in mig.pods() if p.metadata.name == "job-m1"
                                       and p.status.phase == "Running"), None),
                         timeout=60, what="job-m1 Running", on_timeout=dump)
    (volume,) = [v for v in successor.spec.volumes if v.name == "state"]  # admission adds the token volume
    assert volume.name == "state" and volume.host_path is None and volume.empty_dir is not None, volume
    assert successor.spec.containers[0].volume_mounts[0].mount_path == "/state"
    lineage = json.loads(successor.metadata.annotations["drsched.io/migration"])
    assert lineage["resume"] == "scratch" and lineage["checkpoint_units"] == CHECKPOINT
    assert wait_for(lambda: _metric(port, 'drsched_migration_released_total{outcome="completed"}') == 1.0,
                    timeout=20, what="outcome completed (resumed from 0)", on_timeout=dump)
    assert "started from scratch as asked" in ctl.log_text()
