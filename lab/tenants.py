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
monitor's node usage, as a real tenant's does. The host-interference gate counts what they want: each arm records
when each tenant's cycle began (``events.csv``, ``TENANT_STARTED``), and ``demand_rows`` turns the cycles into
rows of the shape the gate reads from ``jobs.csv`` (``lab.gates.demand_from_jobs``), at run time and in
``lab regate``. The module owns no state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields

from policy.labworld import RealNodeShape
from policy.tenants import (
    EDGE_S,
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
TENANT_STARTED = "tenant_started"
"""``events.csv``'s event for a tenant whose cycle began ``t_s`` seconds from the arm's start (negative: it runs
before the jobs' clock starts); its value is the cycle, as the job's ``--cores-cycle`` says it."""
TENANT_FILE = "tenants.csv"
"""One row per seed and tenant (``policy.labworld.TENANT_COLUMNS``), written before the first arm runs."""


@dataclass(frozen=True)
class LabTenant:
    """A tenant (``policy.tenants.Tenant``) on the cluster's node ``node_name``."""

    node_name: str
    tenant: Tenant

    def cycle(self) -> str:
        """Its cycle as the cpu job's ``--cores-cycle`` takes it (cores)."""
        t = self.tenant
        return f"{t.high_m / 1000:g}:{t.low_m / 1000:g}:{t.period_s:g}:{t.high_s:g}:{t.phase_s:g}"

    def argv(self) -> list[str]:
        """Its ``python -m workloads`` arguments: a cpu job capped by the tenant's cycle."""
        return ["cpu", "--state-dir=/state", f"--units={TENANT_UNITS}", f"--work={TENANT_WORK}",
                f"--cores-cycle={self.cycle()}", "--checkpoint-every=0"]

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
            "at each arm's end; no job: in no metric and not scored, but the host gate counts what they want")


def demand_rows(started: Sequence[tuple[LabTenant, float]], *, until_s: float) -> list[dict]:
    """What the tenants want, as ``jobs.csv``-shaped rows (``node``, ``start_s``, ``finish_s``, ``cpu_use_m``) for the
    host gate's demand: one row per stretch of each tenant's cycle, from its start (``started``: each tenant with
    the arm time its cycle began) to ``until_s``."""
    rows = []
    for placed, start in started:
        t, at = placed.tenant, start
        while at < until_s:
            end = min(start + t.next_change(at - start), until_s)
            rows.append({"node": placed.node_name, "start_s": at, "finish_s": end,
                         "cpu_use_m": t.use_m(at - start + EDGE_S)})
            at = end
    return rows


def tenants_from_rows(rows: Sequence[Mapping], nodes: Sequence[str]) -> dict[int, list[LabTenant]]:
    """Each seed's tenants from ``tenants.csv`` rows, on ``nodes`` (the run's, in ``nodes.csv``'s order)."""
    out: dict[int, list[LabTenant]] = {}
    for r in rows:
        numbers = {f.name: f.type for f in fields(Tenant) if f.name != "node"}
        values = {k: (int(r[k]) if kind == "int" else float(r[k])) for k, kind in numbers.items()}
        out.setdefault(int(r["seed"]), []).append(LabTenant(r["node"], Tenant(node=nodes.index(r["node"]), **values)))
    return out
