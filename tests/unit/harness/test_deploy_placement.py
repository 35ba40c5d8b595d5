"""harness.deploy under host isolation: the extender and migration controller go to the system node."""

from __future__ import annotations

from harness import deploy, nodes


def _docs() -> list[dict]:
    def workload(kind: str, name: str, args: list[str]) -> dict:
        return {"kind": kind, "metadata": {"name": name},
                "spec": {"template": {"spec": {"containers": [{"name": "c", "args": list(args)}]}}}}  # fmt: skip

    return [workload("Deployment", "drsched-extender", ["--port=8888"]),
            workload("Deployment", "drsched-migration", ["--interval-s=5"]),
            workload("DaemonSet", "drsched-monitor", [])]  # fmt: skip


def test_system_pods_tolerate_and_select_the_system_node_and_agents_select_the_job_nodes() -> None:
    docs = _docs()
    deploy.place_on_system_node(docs)
    extender, migration, monitor = (d["spec"]["template"]["spec"] for d in docs)
    for spec in (extender, migration):
        assert spec["nodeSelector"] == {nodes.ROLE_LABEL: nodes.SYSTEM_ROLE}
        assert spec["tolerations"] == [{**nodes.SYSTEM_TAINT, "operator": "Equal"}]
    assert migration["containers"][0]["args"][-1] == f"--node-selector={nodes.ROLE_LABEL}={nodes.JOB_ROLE}"
    assert extender["containers"][0]["args"] == ["--port=8888"]
    # the agents tolerate every taint (their manifest), so only the role keeps them off the system node
    assert monitor["nodeSelector"] == {nodes.ROLE_LABEL: nodes.JOB_ROLE} and "tolerations" not in monitor


def test_a_migration_node_selector_of_the_callers_is_kept() -> None:
    docs = _docs()
    args = docs[1]["spec"]["template"]["spec"]["containers"][0]["args"]
    args.append("--node-selector=pool=batch")
    deploy.place_on_system_node(docs)
    assert args == ["--interval-s=5", "--node-selector=pool=batch"]
