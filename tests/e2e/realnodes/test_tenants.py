"""The lab's ``tenants`` scenario on real nodes: a tenant pod (``lab.kube.tenant_pod``) is bound to its node with no
scheduler, asks for little and uses its cycle's levels, far above its request, in turn (``workloads cpu
--cores-cycle``). Measured from its pod cgroup's cpuacct, as the node's counters and the monitor see it."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from harness import nodes
from harness.realcluster import RealCluster
from lab.kube import tenant_pod
from lab.tenants import LabTenant
from policy.tenants import Tenant

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes]
PERIOD_S, HIGH_S = 24.0, 12.0


def _cpu_s(cgroup: str) -> float:
    return int((nodes.CGROUP_FS / "cpuacct" / cgroup.strip("/") / "cpuacct.usage").read_text()) / 1e9


def _mean_cores(cgroup: str, seconds: float) -> float:
    start, t0 = _cpu_s(cgroup), time.monotonic()
    time.sleep(seconds)
    return (_cpu_s(cgroup) - start) / (time.monotonic() - t0)


@pytest.mark.timeout(300)
def test_a_tenant_is_bound_to_its_node_and_uses_its_cycle_far_above_its_request(
    rcluster: RealCluster, workloads_image: str, unique: Callable[[str], str]
) -> None:
    shape = max(rcluster.shapes, key=lambda s: s.cpu_millis)
    quota = shape.cpu_millis
    tenant = Tenant(node=rcluster.shapes.index(shape), request_m=max(1, quota // 20), high_m=quota * 6 // 10,
                    low_m=quota * 2 // 10, period_s=PERIOD_S, high_s=HIGH_S, phase_s=0.0)
    name = unique("tenant")
    rcluster.create_pod(tenant_pod(LabTenant(shape.name, tenant), name=name, run_id="e2e", image=workloads_image))
    pod = rcluster.wait_pod_phase(name, "Running", timeout=90)
    assert pod.spec.node_name == shape.name  # bound by name: no scheduler decided it
    cgroup = f"/{shape.name}/kubepods/burstable/pod{pod.metadata.uid}"
    started = pod.status.container_statuses[0].state.running.started_at.timestamp()
    # The next busy phase, from its start: skip the rest of this cycle and a second each side of the edges.
    into = (time.time() - started) % PERIOD_S
    time.sleep(PERIOD_S - into + 1.0)
    busy = _mean_cores(cgroup, HIGH_S - 2.0)
    time.sleep(2.0)
    quiet = _mean_cores(cgroup, PERIOD_S - HIGH_S - 2.0)
    rcluster.core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
    assert busy == pytest.approx(tenant.high_m / 1000, rel=0.25), (busy, quiet, tenant)
    assert quiet == pytest.approx(tenant.low_m / 1000, rel=0.35), (busy, quiet, tenant)
    assert quiet > 2 * tenant.request_m / 1000  # it uses far more than it asks for, even when quiet
