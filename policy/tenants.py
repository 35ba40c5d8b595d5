"""Long-running tenants: the ``tenants`` scenario's pods (issue #21 item 3), described once for the lab and the
simulator.

Why it exists: real clusters run batch work beside long-running services that were placed long before it, many
of them burstable: a small cpu request, no cpu limit, and a use far above the request that rises and falls with
their own traffic. Issue #21 names it as one of the two ways real clusters mislead the default scheduler
("long-running tenants that use far more than they request on some nodes"); it is what co-location schedulers
and load-aware plugins exist for (shared/reference/peers.md: Koordinator's load-aware scheduling of batch pods on
nodes that carry Alibaba's online services, section 1.2; Trimaran's LowRiskOverCommitment for burstable pods,
section 1.1). A scheduler that reads requests (the default's LeastAllocated) sees a tenant's node as almost
empty; one that reads the usage signal sees it busy, as it is.

A seed's tenants (``draw_tenants``): ``count`` distinct nodes drawn by the seed, one tenant on each, asking for
``TENANT_REQUEST_SHARE`` of its node's cpu and using, in a duty cycle of its own, a high level for part of each
period and a low one for the rest (both fractions of the node's cpu, so tenants follow the nodes when host
isolation scales them). Every number is rounded as the lab writes it, so the lab's pods and the simulator's
copies run the same cycle. The lab runs each as a pod bound to its node (``spec.nodeName``, bypassing every
scheduler) running ``workloads cpu --cores-cycle``; the simulator pins it before the batch jobs
(``policy.sim.fleet.Fleet.pin``). Neither counts it in the endpoint. The module owns no state.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

TENANTS = 2
"""Tenants a seed of the ``tenants`` scenario draws (on as many distinct nodes): half of the lab's four."""
TENANT_REQUEST_SHARE = 0.05
"""A tenant's cpu request, as a share of its node's cpu: what a burstable service's manifest asks for."""
TENANT_HIGH = (0.6, 0.9)
"""The range a tenant's busy level is drawn from, as a share of its node's cpu (12-18x its request)."""
TENANT_LOW = (0.15, 0.35)
"""The range a tenant's quiet level is drawn from, as a share of its node's cpu (3-7x its request)."""
TENANT_PERIOD_S = (30.0, 90.0)
"""The range a tenant's cycle length is drawn from, seconds: one to a few cycles in an arm's minutes, each longer
than the monitor's sampling, so the usage signal follows it with a lag, as it would."""
TENANT_HIGH_SHARE = (0.3, 0.7)
"""The range of the share of each period a tenant spends at its busy level."""
TENANT_MEM_MI = 64
"""A tenant's memory, requested and used (the cpu job's)."""
EDGE_S = 1e-6
"""Seconds within which a time counts as on a cycle's edge (float arithmetic puts a change's own time on either
side of it): ``next_change`` looks past it, and the simulator reads the new level this much after the change."""


@dataclass(frozen=True)
class Tenant:
    """One long-running tenant: on node ``node`` (an index into the world's nodes, in their order), asking for
    ``request_m`` of cpu, using ``high_m`` while ``(t + phase_s) mod period_s < high_s`` and ``low_m`` otherwise,
    ``t`` seconds after it started (the arm's start)."""

    node: int
    request_m: int
    high_m: int
    low_m: int
    period_s: float
    high_s: float
    phase_s: float
    mem_mi: int = TENANT_MEM_MI

    def busy(self, t: float) -> bool:
        """Whether it is at its high level ``t`` seconds in."""
        return (t + self.phase_s) % self.period_s < self.high_s

    def use_m(self, t: float) -> int:
        """Its cpu use, millicores, ``t`` seconds in (when alone on its node: contention may give it less)."""
        return self.high_m if self.busy(t) else self.low_m

    def next_change(self, t: float) -> float:
        """The first time after ``t`` at which its level changes."""
        into = (t + self.phase_s) % self.period_s
        step = (self.high_s if into < self.high_s else self.period_s) - into
        # At an edge, up to float error (a caller asking at the change it was given): the change after it.
        return self.next_change(t + EDGE_S) if step < EDGE_S else t + step


def draw_tenants(seed: int, cpu_m: Sequence[float], count: int = TENANTS) -> tuple[Tenant, ...]:
    """The tenants of ``seed`` on nodes of ``cpu_m`` millicores each (in the world's node order): ``count`` distinct
    nodes, each with one tenant (module doc). A generator of its own, keyed by the seed, so the schedule's draws do
    not move, every arm of a seed meets the same tenants, and the lab and the simulator draw alike."""
    if not 0 <= count <= len(cpu_m):
        raise ValueError(f"{count} tenants on {len(cpu_m)} nodes: each goes on a node of its own")
    rng = random.Random(f"drsched-tenants:{seed}")
    out = []
    for node in sorted(rng.sample(range(len(cpu_m)), count)):
        quota = cpu_m[node]
        period = round(rng.uniform(*TENANT_PERIOD_S), 1)
        high_s = round(period * rng.uniform(*TENANT_HIGH_SHARE), 1)
        out.append(Tenant(node=node, request_m=max(1, round(quota * TENANT_REQUEST_SHARE)),
                          high_m=math.floor(quota * rng.uniform(*TENANT_HIGH)),
                          low_m=math.floor(quota * rng.uniform(*TENANT_LOW)), period_s=period, high_s=high_s,
                          phase_s=round(rng.uniform(0.0, period), 1)))
    return tuple(out)
