"""The taint baseline's decision (the migration controller's ``mode=taint``): which nodes to taint as degraded,
when to untaint. Pure; the Kubernetes controller (``migration.controller``, through ``migration.degraded``'s
taint helpers) and the simulator (``Tainter``, ``policy.migration_eval``'s ``taint`` arm) both decide by it.

Why it exists: the issue's second straggler baseline moves no job; it marks a node the migration rule judges
degraded with the NoSchedule taint ``drsched.io/degraded``, so new pods avoid it while the running ones stay,
and removes the mark once the node has recovered (a transient cut).

Judgement: ``policy.migrate.rule.straggler_nodes``, the very test the rule blocklists a target by (a job there
is slow against its expected rate *and* against the speed model's prediction for it next to that node's
load), so the two baselines and the migration arm see the same degraded nodes.

Hysteresis (the rule's own knobs, so one setting means one thing):
* taint a node after ``slow_checks`` consecutive checks judged degraded (a check without that judgement,
  including one without any judged job there, resets the count);
* untaint a tainted node once ``blocklist_for`` seconds have passed since its last degraded judgement: the
  jobs still running there (a taint does not move them) show it recovered, or, when none is left to judge
  it, new pods are let back in to probe it (a still-slow node is tainted again after ``slow_checks``).
A taint found on a node without a remembered judgement (the controller restarted) counts as judged now.

State owned: none by ``decide_taints``; ``TaintState`` goes in and comes out. ``Tainter`` (the simulator's
controller) keeps the last one and the set of tainted nodes.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from policy.migrate.budget import BudgetState
from policy.migrate.records import MigrationIntent, RunningJob
from policy.migrate.rule import RuleParams, straggler_nodes
from policy.state import ClusterSnapshot


@dataclass(frozen=True)
class TaintIntent:
    """Add (``taint=True``) or remove the degraded taint on ``node``, with the reason for the log line."""

    node: str
    taint: bool
    reason: str


@dataclass(frozen=True)
class TaintState:
    """Consecutive degraded checks per node, and when each node was last judged degraded."""

    streak: Mapping[str, int] = field(default_factory=dict)
    last_degraded: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class TaintResult:
    intents: tuple[TaintIntent, ...]
    state: TaintState
    degraded: Mapping[str, tuple[str, ...]]
    """Nodes judged degraded this check → the jobs that show it."""


def decide_taints(jobs: Sequence[RunningJob], snap: ClusterSnapshot, params: RuleParams, state: TaintState,
                  tainted: Collection[str]) -> TaintResult:
    """Taint / untaint intents for this check (module docstring); ``tainted``: nodes that carry the taint now."""
    now = snap.now
    degraded = straggler_nodes(jobs, snap, params)
    streak = {n: state.streak.get(n, 0) + 1 for n in degraded}
    last = {**{n: state.last_degraded.get(n, now) for n in tainted}, **state.last_degraded,
            **dict.fromkeys(degraded, now)}
    intents = []
    for node in sorted(set(snap.names) | set(tainted)):
        if node not in tainted and streak.get(node, 0) >= params.slow_checks:
            intents.append(TaintIntent(node, True, f"degraded in {streak[node]} consecutive checks: jobs "
                                                   f"{','.join(degraded[node])} slower than predicted there"))
        elif node in tainted and node not in degraded and now - last[node] >= params.blocklist_for:
            intents.append(TaintIntent(node, False, f"not judged degraded for {now - last[node]:.0f}s "
                                                    f">= {params.blocklist_for:g}s"))
    keep = set(degraded) | set(tainted)  # forget nodes neither degraded nor tainted (an untaint that failed is
    last = {n: t for n, t in last.items() if n in keep}  # still tainted next check: tried again at once)
    return TaintResult(tuple(intents), TaintState(streak=streak, last_degraded=last), degraded)


class Tainter:
    """The taint baseline as the simulator's migration controller (``policy.sim.migration.Controller``): each
    ``check`` decides taints on the snapshot and applies them to ``tainted`` at once (the simulator closes those
    nodes to new pods), and asks for no move."""

    def __init__(self, params: RuleParams | None = None) -> None:
        self.params = params or RuleParams()
        self.reset()

    def reset(self) -> None:
        self.state = TaintState()
        self.tainted: frozenset[str] = frozenset()
        self.changes = 0

    def check(self, snap: ClusterSnapshot, jobs: Sequence[RunningJob],
              budget_state: BudgetState) -> tuple[MigrationIntent, ...]:
        result = decide_taints(jobs, snap, self.params, self.state, self.tainted)
        self.state = result.state
        on = {it.node for it in result.intents if it.taint}
        off = {it.node for it in result.intents if not it.taint}
        self.tainted = frozenset((self.tainted | on) - off)
        self.changes += len(result.intents)
        return ()
