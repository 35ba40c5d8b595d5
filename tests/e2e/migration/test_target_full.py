"""The target fills up mid-migration: the successor goes to the next best node, or back to the source.

A PodDisruptionBudget holds the migration at 'evicting' (the Eviction API answers 429; no disruption
controller runs here, so the budget never allows one) while the test fills the chosen target; deleting the
budget lets the eviction through, and the successor must not be lost on the full node.
"""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from tests.helpers import wait_for

from .helpers import filler_pod, job_pod

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(("fill", "expect"), [(("big",), "mid"), (("big", "mid"), "src")], ids=["next-best", "source"])
def test_target_full_mid_migration(mig, dump, fill, expect):
    nodes = {"src": mig.node("src", cpu="4"), "big": mig.node("big", cpu="16"), "mid": mig.node("mid", cpu="8")}
    capacity = {"big": 16, "mid": 8}
    mig.core.create_namespaced_pod(mig.namespace, job_pod("job", node=nodes["src"], cpu="1"))
    policy = client.PolicyV1Api(mig.cluster.api)
    policy.create_namespaced_pod_disruption_budget(mig.namespace, client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name="job-pdb"),
        spec=client.V1PodDisruptionBudgetSpec(min_available=1,
                                              selector=client.V1LabelSelector(match_labels={"app": "job"}))))
    mig.start_fake_jobs()
    ctl = mig.controller("--max-per-node=5").start()

    def record():
        leases = mig.windows()
        return json.loads(leases[0].metadata.annotations["drsched.io/migration"]) if leases else None

    rec = wait_for(lambda: (r := record()) and r["step"] == "evicting" and r, timeout=60,
                   what="the migration held at evicting by the PDB", on_timeout=dump)
    assert rec["candidates"][:3] == [nodes["big"], nodes["mid"], nodes["src"]], rec
    for short in fill:  # leave less than the job's 1 cpu free
        mig.core.create_namespaced_pod(mig.namespace, filler_pod(f"fill-{short}", node=nodes[short],
                                                                 cpu=f"{capacity[short] - 0.5}"))
    assert mig.live_copies() == {"job": ["job"]}, "the PDB held the eviction"
    policy.delete_namespaced_pod_disruption_budget("job-pdb", mig.namespace)

    successor = wait_for(lambda: next((p for p in mig.pods() if p.metadata.name == "job-m1"
                                       and p.status.phase == "Running"), None),
                         timeout=90, what="job-m1 Running", on_timeout=dump)
    assert successor.spec.node_name == nodes[expect], dump()
    wait_for(lambda: not mig.windows(), timeout=30, what="the window released", on_timeout=dump)
    assert mig.live_copies() == {"job": ["job-m1"]}, dump()
    assert "cannot take it" in ctl.log_text()
