"""The taint baseline (``--mode=taint``) against the real control plane: a degraded node is tainted NoSchedule,
its running job stays, new pods avoid it, the taint goes once the node recovers, and a clean stop clears it."""

from __future__ import annotations

import time

import pytest
from kubernetes import client

from harness.objects import FAKE_IMAGE
from tests.helpers import wait_for

from .helpers import job_pod

pytestmark = pytest.mark.e2e
KEY = "drsched.io/degraded"


def _taints(mig, name: str) -> list[tuple[str, str]]:
    return [(t.key, t.effect) for t in mig.core.read_node(name).spec.taints or []]


def _probe(name: str, tag: str) -> client.V1Pod:
    """A new pod for the scheduler, allowed on the test's nodes only."""
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"app": "probe"}),
        spec=client.V1PodSpec(node_selector={"drsched-e2e": tag}, containers=[client.V1Container(
            name="main", image=FAKE_IMAGE, resources=client.V1ResourceRequirements(requests={"cpu": "100m"}))]))


def test_taint_mode_taints_the_degraded_node_and_untaints_it_on_recovery(mig, dump):
    deg = mig.node("deg", cpu="2")
    ok = mig.node("ok", cpu="16")
    mig.core.create_namespaced_pod(mig.namespace, job_pod("job", node=deg))
    fake = mig.start_fake_jobs()
    ctl = mig.controller("--mode=taint", "--slow-checks=2", "--blocklist-s=2").start()

    wait_for(lambda: (KEY, "NoSchedule") in _taints(mig, deg), timeout=60, what=f"{deg} tainted", on_timeout=dump)
    assert _taints(mig, ok) == [], "only the degraded node"
    for i in range(3):
        mig.core.create_namespaced_pod(mig.namespace, _probe(f"probe-{i}", mig.tag))
    for i in range(3):
        bound = wait_for(lambda i=i: mig.core.read_namespaced_pod(f"probe-{i}", mig.namespace).spec.node_name,
                         timeout=30, what=f"probe-{i} bound", on_timeout=dump)
        assert bound == ok, "new pods avoid the tainted node"
    assert not mig.windows() and mig.live_copies() == {"job": ["job"]}, "nothing moved"
    assert [p.spec.node_name for p in mig.pods()] == [deg], "the running job stays"

    fake.rate_of["job"] = 10.0  # a transient cut is over: the job runs at its expected rate again
    wait_for(lambda: (KEY, "NoSchedule") not in _taints(mig, deg), timeout=60, what=f"{deg} untainted",
             on_timeout=dump)
    log = ctl.log_text()
    assert "reason=added" in log and "reason=removed" in log, dump()

    fake.rate_of["job"] = 1.0  # slow again, then the controller stops cleanly: it leaves no node tainted
    wait_for(lambda: (KEY, "NoSchedule") in _taints(mig, deg), timeout=60, what=f"{deg} tainted again",
             on_timeout=dump)
    ctl.stop()
    assert ctl.proc.returncode == 0, dump()
    assert (KEY, "NoSchedule") not in _taints(mig, deg), dump()
    time.sleep(0.5)
    assert mig.live_copies() == {"job": ["job"]}
