"""manifests/ (kustomize) rendered by kubectl and applied to the real apiserver, RBAC checked per ServiceAccount.

The base grants no binding right; examples/bind-mtls (the base plus components/bind-mtls) adds bind, mTLS
and that right together: it and the NetworkPolicies pass a server-side dry run, and once applied the
authorizer says the extender may bind (then the base is applied again).

No controller-manager runs, so Deployments and the DaemonSet make no pods: the tests check that every
object is accepted and exists, ask the apiserver's authorizer what each ServiceAccount may do
(`kubectl auth can-i --as=system:serviceaccount:...`), and then run the real extender and the drsched
kube-scheduler *as their ServiceAccounts*, with the scheduler config from the ConfigMap, to place the
sample workloads: the granted rights are enough, not just plausible.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from harness.cluster import ControlPlane
from harness.extender_proc import Extenders
from harness.schedconfig import CONFIG_DIR

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "manifests"
NS = "drsched-system"
SAMPLES_NS = "drsched-samples"
SA = "system:serviceaccount:drsched-system:{}"

EXPECTED = {
    ("Namespace", None, NS),
    ("ServiceAccount", NS, "drsched-extender"), ("ServiceAccount", NS, "drsched-scheduler"),
    ("ServiceAccount", NS, "drsched-monitor"), ("ServiceAccount", NS, "drsched-migration"),
    ("ClusterRole", None, "drsched-extender"), ("ClusterRole", None, "drsched-migration"),
    ("ClusterRoleBinding", None, "drsched-extender"), ("ClusterRoleBinding", None, "drsched-migration"),
    ("ClusterRoleBinding", None, "drsched-scheduler-as-kube-scheduler"),
    ("ClusterRoleBinding", None, "drsched-scheduler-as-volume-scheduler"),
    ("Role", NS, "drsched-scheduler-leader-election"), ("RoleBinding", NS, "drsched-scheduler-leader-election"),
    ("Deployment", NS, "drsched-extender"), ("Service", NS, "drsched-extender"),
    ("Deployment", NS, "drsched-scheduler"), ("Deployment", NS, "drsched-migration"),
    ("DaemonSet", NS, "drsched-monitor"), ("ConfigMap", NS, "drsched-dashboards"),
    ("NetworkPolicy", NS, "drsched-default-deny-ingress"), ("NetworkPolicy", NS, "drsched-extender-ingress"),
    ("NetworkPolicy", NS, "drsched-monitor-ingress"), ("NetworkPolicy", NS, "drsched-metrics-ingress"),
}  # fmt: skip
BIND_OVERLAY = REPO / "examples" / "bind-mtls"
BIND_ONLY = {("ClusterRole", None, "drsched-extender-bind"), ("ClusterRoleBinding", None, "drsched-extender-bind")}

# (ServiceAccount, verb, resource[/subresource], namespace or None for all, allowed); a lease's name follows ':'.
CAN_I = [
    ("drsched-extender", "list", "nodes", None, True),
    ("drsched-extender", "watch", "nodes", None, True),
    ("drsched-extender", "list", "pods", None, True),
    ("drsched-extender", "watch", "pods", None, True),
    # no binding right in the base: the stock scheduler binds (components/bind-mtls adds it, see below)
    ("drsched-extender", "create", "bindings", "default", False),
    ("drsched-extender", "create", "pods/binding", "default", False),
    ("drsched-extender", "create", "events", "default", True),
    ("drsched-extender", "delete", "pods", "default", False),
    ("drsched-extender", "patch", "pods", "default", False),
    ("drsched-extender", "create", "pods", "default", False),
    ("drsched-extender", "patch", "nodes", None, False),
    ("drsched-extender", "get", "secrets", NS, False),
    ("drsched-extender", "list", "configmaps", NS, False),
    ("drsched-scheduler", "list", "pods", None, True),
    ("drsched-scheduler", "create", "pods/binding", "default", True),
    ("drsched-scheduler", "create", "events.events.k8s.io", "default", True),
    ("drsched-scheduler", "list", "persistentvolumeclaims", None, True),
    ("drsched-scheduler", "list", "storageclasses.storage.k8s.io", None, True),
    ("drsched-scheduler", "create", "leases.coordination.k8s.io", NS, True),
    ("drsched-scheduler", "get", "leases.coordination.k8s.io:drsched-scheduler", NS, True),
    ("drsched-scheduler", "update", "leases.coordination.k8s.io:drsched-scheduler", NS, True),
    ("drsched-scheduler", "update", "leases.coordination.k8s.io:drsched-migration-controller", NS, False),
    ("drsched-scheduler", "get", "secrets", NS, False),
    # the stock scheduler's own rights: delete pods is preemption (victims), pods/status its conditions
    ("drsched-scheduler", "delete", "pods", "default", True),
    ("drsched-scheduler", "create", "pods", "default", False),
    ("drsched-scheduler", "patch", "pods", "default", False),
    ("drsched-scheduler", "patch", "nodes", None, False),
    ("drsched-monitor", "get", "pods", NS, False),
    ("drsched-monitor", "list", "nodes", None, False),
    ("drsched-monitor", "create", "events", NS, False),
    ("drsched-monitor", "get", "secrets", NS, False),
    ("drsched-migration", "create", "pods", "default", True),
    ("drsched-migration", "create", "pods/eviction", "default", True),
    ("drsched-migration", "create", "pods/binding", "default", False),
    ("drsched-migration", "delete", "pods", "default", True),
    ("drsched-migration", "list", "nodes", None, True),
    ("drsched-migration", "update", "leases.coordination.k8s.io", "default", True),
    ("drsched-migration", "patch", "nodes", None, False),
    ("drsched-migration", "patch", "pods", "default", False),
    ("drsched-migration", "get", "secrets", NS, False),
]


def _kustomize(cluster: ControlPlane, path: Path) -> list[dict]:
    done = cluster.kubectl("kustomize", str(path))
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def _key(obj: dict) -> tuple[str, str | None, str]:
    return obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"]


def test_scheduler_configmap_is_the_shipped_config_with_only_in_cluster_fields_changed() -> None:
    shipped = yaml.safe_load((CONFIG_DIR / "drsched-scheduler.yaml").read_text())
    in_cluster = yaml.safe_load((MANIFESTS / "scheduler" / "drsched-scheduler.yaml").read_text())
    assert in_cluster["clientConnection"]["kubeconfig"] == ""
    assert in_cluster["leaderElection"]["resourceNamespace"] == NS
    assert in_cluster["extenders"][0]["urlPrefix"] == "http://drsched-extender.drsched-system.svc:8888/"
    for doc in (shipped, in_cluster):
        del doc["clientConnection"]["kubeconfig"], doc["leaderElection"]["resourceNamespace"]
        del doc["extenders"][0]["urlPrefix"]
    assert in_cluster == shipped


@pytest.mark.e2e
def test_kustomize_renders_every_component_in_its_namespace(cluster: ControlPlane) -> None:
    objects = _kustomize(cluster, MANIFESTS)
    keys = {_key(o) for o in objects}
    assert EXPECTED <= {(k, ns, n) for k, ns, n in keys if k != "ConfigMap" or n == "drsched-dashboards"}
    cluster_scoped = {"Namespace", "ClusterRole", "ClusterRoleBinding"}
    assert all(ns == NS for kind, ns, _ in keys if kind not in cluster_scoped), keys
    for binding in (o for o in objects if o["kind"] in ("ClusterRoleBinding", "RoleBinding")):
        assert all(s["namespace"] == NS for s in binding["subjects"]), binding
    config_map = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith(
        "drsched-scheduler-config"))
    scheduler = next(o for o in objects if _key(o) == ("Deployment", NS, "drsched-scheduler"))
    volume = scheduler["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"]
    assert volume == config_map["metadata"]["name"]  # the hashed name is wired through
    dashboards = next(o for o in objects if _key(o) == ("ConfigMap", NS, "drsched-dashboards"))
    json.loads(dashboards["data"]["drsched.json"])

    samples = _kustomize(cluster, MANIFESTS / "samples")
    pods = [o for o in samples if o["kind"] == "Pod"]
    assert {p["spec"]["containers"][0]["args"][0] for p in pods} == {"cpu", "net", "io"}
    for pod in pods:
        assert pod["metadata"]["namespace"] == SAMPLES_NS
        assert pod["spec"]["schedulerName"] == "drsched"
        assert pod["metadata"]["labels"]["drsched.io/migrate"] == "true"
        assert "drsched.io/profile" in pod["metadata"]["annotations"]


@pytest.fixture(scope="module")
def applied(control_plane: ControlPlane) -> ControlPlane:
    """`kubectl apply --server-side -k manifests` (twice: re-applying is a no-op), then the samples."""
    for _ in range(2):
        done = control_plane.kubectl("apply", "--server-side", "-k", str(MANIFESTS), timeout=60)
        assert done.returncode == 0, done.stderr
    done = control_plane.kubectl("apply", "--server-side", "-k", str(MANIFESTS / "samples"), timeout=60)
    assert done.returncode == 0, done.stderr
    return control_plane


@pytest.mark.e2e
def test_apply_creates_every_object(applied: ControlPlane) -> None:
    for kind, ns, name in sorted(EXPECTED, key=str):
        args = ["get", kind.lower(), name, "-o", "name"] + (["-n", ns] if ns else [])
        done = applied.kubectl(*args)
        assert done.returncode == 0, f"{kind} {ns}/{name}: {done.stderr}"
    pods = applied.core.list_namespaced_pod(SAMPLES_NS).items
    assert {p.metadata.name for p in pods} == {"sample-cpu-job", "sample-net-job", "sample-io-job"}


@pytest.mark.e2e
@pytest.mark.parametrize("sa, verb, resource, namespace, allowed", CAN_I,
                         ids=[f"{c[0].removeprefix('drsched-')}-{c[1]}-{c[2]}" for c in CAN_I])
def test_service_account_rights(applied: ControlPlane, sa: str, verb: str, resource: str, namespace: str | None,
                                allowed: bool) -> None:
    scope = ["-n", namespace] if namespace else ["--all-namespaces"]
    resource, _, subresource = resource.partition("/")
    resource = resource.replace(":", "/")  # kubectl's resource/name
    sub = [f"--subresource={subresource}"] if subresource else []
    done = applied.kubectl("auth", "can-i", verb, resource, *sub, *scope, f"--as={SA.format(sa)}")
    assert done.stdout.strip() == ("yes" if allowed else "no"), (done.stdout, done.stderr)


def _sa_kubeconfig(cluster: ControlPlane, sa: str, path: Path) -> Path:
    token = cluster.core.create_namespaced_service_account_token(sa, NS, client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=["https://kubernetes.default.svc.cluster.local"],
                                       expiration_seconds=3600))).status.token
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "sa",
        "clusters": [{"name": "e2e", "cluster": {"server": cluster.api_url,
                                                 "certificate-authority": str(cluster.pki.ca.cert)}}],
        "users": [{"name": "sa", "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": "e2e", "user": "sa"}}]}))
    return path


@pytest.mark.e2e
@pytest.mark.timeout(180)
def test_extender_and_scheduler_as_their_service_accounts_place_the_samples(
    applied: ControlPlane, drsched_scheduler, extenders: Extenders, tmp_path: Path
) -> None:
    cluster = applied
    ext = extenders.start(kubeconfig=_sa_kubeconfig(cluster, "drsched-extender", tmp_path / "extender.kubeconfig"))
    # The ConfigMap's config, as the pod would read it, with the local kubeconfig and extender URL; leader
    # election stays on (the Role's Lease); the stock binder binds, as the scheduler's ServiceAccount.
    config = yaml.safe_load((MANIFESTS / "scheduler" / "drsched-scheduler.yaml").read_text())
    config["clientConnection"]["kubeconfig"] = str(_sa_kubeconfig(cluster, "drsched-scheduler",
                                                                  tmp_path / "scheduler.kubeconfig"))
    config["extenders"][0].update(urlPrefix=ext.url + "/")
    config_path = tmp_path / "drsched-scheduler.yaml"
    config_path.write_text(yaml.safe_dump(config))
    scheduler = drsched_scheduler(config_path)
    try:
        for name in ("sample-cpu-job", "sample-net-job", "sample-io-job"):
            cluster.wait_pod_bound(name, namespace=SAMPLES_NS, timeout=60)
            decision = cluster.poll(lambda n=name: (ext.explain(n, SAMPLES_NS) or {}).get("last_decision"),
                                    timeout=10, what=f"decision for {name}")
            assert "bound_to" not in decision, decision  # the extender scored; the scheduler bound
            assert decision["demand_source"] == "annotation"
        lease = client.CoordinationV1Api(cluster.api).read_namespaced_lease("drsched-scheduler", NS)
        assert lease.spec.holder_identity
        for log_path in (ext.log_path, scheduler.log_path):
            assert "forbidden" not in log_path.read_text().lower(), log_path
    finally:
        cluster.core.delete_collection_namespaced_pod(SAMPLES_NS, grace_period_seconds=0)


def _can_i(cluster: ControlPlane, sa: str, verb: str, resource: str, namespace: str) -> str:
    resource, _, sub = resource.partition("/")
    done = cluster.kubectl("auth", "can-i", verb, resource, *([f"--subresource={sub}"] if sub else []),
                           "-n", namespace, f"--as={SA.format(sa)}")
    return done.stdout.strip()


@pytest.mark.e2e
def test_networkpolicies_and_the_bind_component_pass_a_server_side_dry_run(applied: ControlPlane) -> None:
    for path in (MANIFESTS / "network", BIND_OVERLAY):
        done = applied.kubectl("apply", "--server-side", "--dry-run=server", "-k", str(path), timeout=60)
        assert done.returncode == 0, done.stderr
    assert "networkpolicy.networking.k8s.io/drsched-extender-ingress serverside-applied" in done.stdout
    assert "clusterrole.rbac.authorization.k8s.io/drsched-extender-bind serverside-applied" in done.stdout
    objects = {_key(o): o for o in _kustomize(applied, BIND_OVERLAY)}
    assert BIND_ONLY <= set(objects) and EXPECTED <= set(objects)
    args = objects[("Deployment", NS, "drsched-extender")]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert {"--bind-enabled=true", "--tls-client-ca-file=/etc/drsched/tls/client-ca.crt"} <= set(args)
    config_map = next(o for k, o in objects.items() if k[2].startswith("drsched-scheduler-config"))
    config = yaml.safe_load(config_map["data"]["config.yaml"])
    assert config["extenders"][0]["bindVerb"] == "bind" and config["extenders"][0]["enableHTTPS"] is True
    for kind, _, name in BIND_ONLY:  # a dry run creates nothing
        assert applied.kubectl("get", kind.lower(), name).returncode != 0


def test_bind_component_config_is_the_shipped_bind_config_with_only_in_cluster_fields_changed() -> None:
    shipped = yaml.safe_load((CONFIG_DIR / "drsched-scheduler-bind.yaml").read_text())
    in_cluster = yaml.safe_load((MANIFESTS / "components" / "bind-mtls" / "drsched-scheduler-bind.yaml").read_text())
    assert in_cluster["extenders"][0]["urlPrefix"] == "https://drsched-extender.drsched-system.svc:8888/"
    for doc in (shipped, in_cluster):
        del doc["clientConnection"]["kubeconfig"], doc["leaderElection"]["resourceNamespace"]
        del doc["extenders"][0]["urlPrefix"]
    assert in_cluster == shipped


@pytest.mark.e2e
def test_only_the_bind_component_lets_the_extender_bind(applied: ControlPlane) -> None:
    """Runs last in this module: it applies the overlay, then puts the base back."""
    for resource in ("bindings", "pods/binding"):
        assert _can_i(applied, "drsched-extender", "create", resource, "default") == "no"
    try:
        done = applied.kubectl("apply", "--server-side", "-k", str(BIND_OVERLAY), timeout=60)
        assert done.returncode == 0, done.stderr
        for resource in ("bindings", "pods/binding"):
            assert _can_i(applied, "drsched-extender", "create", resource, "default") == "yes"
        assert _can_i(applied, "drsched-scheduler", "create", "bindings", "default") == "yes"  # unchanged
        assert _can_i(applied, "drsched-extender", "delete", "pods", "default") == "no"  # nothing else added
    finally:
        for kind, _, name in BIND_ONLY:
            applied.kubectl("delete", kind.lower(), name, "--ignore-not-found")
        done = applied.kubectl("apply", "--server-side", "-k", str(MANIFESTS), timeout=60)
        assert done.returncode == 0, done.stderr
    assert _can_i(applied, "drsched-extender", "create", "bindings", "default") == "no"
