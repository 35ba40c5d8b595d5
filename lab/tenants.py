"""The ``tenants`` scenario on real nodes: where a seed's long-running tenants go, what they run, and their record.

Why it exists: issue #21's ``tenants`` scenario puts long-running pods on seed-chosen nodes before the batch jobs,
pods that ask for little cpu and use much more, in a cycle of their own. What a seed's tenants are is described
once, for the lab and the simulator, in ``policy.tenants`` (``draw_tenants``); this module maps them onto the
nodes the cluster really got (under host isolation their quotas are scaled, and the tenants' levels with them),
gives each its ``python -m workloads cpu --cores-cycle`` argv and owns ``tenants.csv`` (one row per seed and
tenant, written before the first arm runs). ``lab.kube`` creates the pods (bound by ``spec.nodeName``: no
scheduler decides them), ``lab.experiment`` starts them before each arm's jobs and removes them at its end. Pure:
no cluster.

They are not the experiment's jobs: no run label, so no row in ``jobs.csv``, no part of the endpoint, and no part
of the scored gate (drsched never scores them). Their cpu shows in their node's cgroup counters and in the
monitor's node usage, as a real tenant's does. The module owns no state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from policy.labworld import RealNodeShape
from policy.tenants import (
    TENANT_HIGH,
    TENANT_LOW,
    TENANT_PERIOD_S,
    TENANT_REQUEST_SHARE,
    Tenant,
    draw_tenants,
)

TENANT_UNITS = 10**9
"""A tenant's ``--units``: more than it can do in any arm (about 75 days on a whole core); the lab deletes it."""
TENANT_WORK = 20000
"""SHA-256 rounds per unit, the cpu jobs' (about 6.5 ms on a whole core): the cap is checked after each unit."""
TENANT_FILE = "tenants.csv"
"""One row per seed and tenant (``policy.labworld.TENANT_COLUMNS``), written before the first arm runs."""


@dataclass(frozen=True)
class LabTenant:
    """A tenant (``policy.tenants.Tenant``) on the cluster's node ``node_name``."""

    node_name: str
    tenant: Tenant

    def argv(self) -> list[str]:
        """Its ``python -m workloads`` arguments: a cpu job capped by the tenant's cycle, in cores."""
        t = self.tenant
        cycle = f"{t.high_m / 1000:g}:{t.low_m / 1000:g}:{t.period_s:g}:{t.high_s:g}:{t.phase_s:g}"
        return ["cpu", "--state-dir=/state", f"--units={TENANT_UNITS}", f"--work={TENANT_WORK}",
                f"--cores-cycle={cycle}", "--checkpoint-every=0"]

    def row(self, seed: int) -> dict:
        """Its ``tenants.csv`` row (``policy.labworld.TENANT_COLUMNS``): the node by name."""
        return {"seed": seed, **asdict(self.tenant), "node": self.node_name}


def lab_tenants(seed: int, shapes: Sequence[RealNodeShape], count: int) -> list[LabTenant]:
    """Seed ``seed``'s ``count`` tenants on the nodes ``shapes`` (the cluster's, in the world's order)."""
    return [LabTenant(shapes[t.node].name, t) for t in draw_tenants(seed, [s.cpu_millis for s in shapes], count)]


def describe() -> str:
    """The scenario in words (help texts, reports)."""
    (hi0, hi1), (lo0, lo1), (p0, p1) = TENANT_HIGH, TENANT_LOW, TENANT_PERIOD_S
    return (f"a long-running tenant on each of N distinct seed-chosen nodes, bound there before every arm's jobs (by "
            f"no scheduler), asking for {TENANT_REQUEST_SHARE:.0%} of its node's cpu and using {hi0:.0%}-{hi1:.0%} "
            f"of it, then {lo0:.0%}-{lo1:.0%}, in a seeded duty cycle of {p0:g}-{p1:g} s (policy.tenants); removed "
            "at each arm's end, in no metric or gate")
