"""The ``straggler`` scenario's fault (issue #21): a seed-chosen node's cpu cut 2-4x mid-run, permanent or
transient, described once for the lab and the simulator.

Why it exists: the lab cuts a node's cgroup quota (``lab.schedule.draw_straggler``, ``lab.plan.Plan.straggler``)
and the simulator slows the same node by the same factor (``policy.sim.events.Straggler``, through
``policy.migration_eval``'s ``lab-straggler`` scenario); a prediction is only about the lab's run when both draw
the very same fault, so the rule is data here and ``draw_fault`` is the one draw. The module owns no state.

Rules (``RULES``, named as a protocol's ``scenario.straggler_node`` names them):

* ``seed``: the straggler pilot's (registered 2026-12-07, seeds 501-503): any node with equal odds, a cut drawn
  in [2, 4], permanent with odds 1/2, else restored 30-90 s after the cut. Kept draw for draw, so the pilot's
  faults stay what they were. The pilot showed what it leaves the migration controller
  (results/lab/straggler-pilot-2026-12-07/NOTE.md): the least-used node drawn for good, or a larger node for
  41-49 s, about the time the controller takes to see a slow job and move it; 1-2 of 48 jobs moved an arm.
* ``seed-loaded``: the main protocol's. The node is drawn among all but the smallest, with odds in proportion to
  its cpu (the share of the work it carries when requests fill the cluster: in the pilot rn-large ran 51-54 %
  of the compute jobs' time, the two medium nodes 18-24 % each, rn-small 1-7 %); the cut is drawn in
  [2.5, 4], where the controller can see it (``CUT_SEEN``); permanent with odds 1/2, else restored 90-150 s
  after the cut, several times as long as a move takes to pay off (``break_even_s``).

A cut is a divisor of the node's cpu (quota / cut), so the draw is the same on nodes scaled by host isolation
and the lab and the simulator, on nodes of different sizes but the same proportions, meet the same fault.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

WINDOW_S = 30.0
"""The straggler regime submits every job within this many seconds (SpeCon's: all jobs at about once) ..."""
WORK = 2.5
"""... and makes each job this many times longer, so jobs are still running when a node slows down."""
AT_S = 20.0
"""Seconds into an arm of the cut, unless a run says otherwise (``lab run --straggler-at-s``)."""


@dataclass(frozen=True)
class FaultRule:
    """How a seed draws its fault (module docstring). Ranges are drawn uniformly."""

    key: str
    """The random generator's key: a generator of its own per seed, so the schedule's draws do not move."""
    smallest: bool
    """Whether the node with the least cpu may be drawn."""
    by_cpu: bool
    """Odds of each node in proportion to its cpu; otherwise equal."""
    cut: tuple[float, float]
    """The range the cut (node cpu / cpu left) is drawn from."""
    permanent: float
    """Odds that the cut lasts until the arm ends."""
    restore_after_s: tuple[float, float]
    """The range a transient cut's length is drawn from, seconds after the cut."""


RULES: dict[str, FaultRule] = {
    "seed": FaultRule(key="drsched-straggler", smallest=True, by_cpu=False, cut=(2.0, 4.0), permanent=0.5,
                      restore_after_s=(30.0, 90.0)),
    "seed-loaded": FaultRule(key="drsched-straggler-loaded", smallest=False, by_cpu=True, cut=(2.5, 4.0),
                             permanent=0.5, restore_after_s=(90.0, 150.0)),
}
"""The seed-drawn fault rules by name (module docstring)."""

CUT_SEEN = 2.5
"""The least cut ``seed-loaded`` draws. The migration rule calls a job slow below ``slow_ratio`` (0.5) of its
expected rate (``policy.migrate.RuleParams``); on a node cut by ``c`` whose jobs want a share ``u`` of its cpu a
job runs at ``1 / (c u)``, so a cut is seen only where ``c u > 2``: never below 2x, and at 2.5x wherever the
node's jobs want at least 80 % of it (with honest requests a full node's do)."""


@dataclass(frozen=True)
class Fault:
    """One seed's fault: ``node``'s cpu divided by ``cut`` at ``at_s`` seconds into the arm, back at ``restore_s``
    (None: permanent)."""

    node: str
    at_s: float
    cut: float
    restore_s: float | None

    def quota_m(self, cpu_m: float, floor_m: int = 0) -> int:
        """The node's cpu quota during the cut, whole millicores, at least ``floor_m``."""
        return max(floor_m, round(cpu_m / self.cut))


def draw_fault(rule: str, seed: int, nodes: Sequence[tuple[str, float]], *, at_s: float) -> Fault:
    """The fault ``RULES[rule]`` draws for ``seed`` on ``nodes`` ((name, cpu) in the world's order; any unit of cpu,
    scaled or not). ``KeyError`` for an unknown rule."""
    r = RULES[rule]
    rng = random.Random(f"{r.key}:{seed}")
    least = min(cpu for _, cpu in nodes)
    pool = [(name, cpu) for name, cpu in nodes if r.smallest or cpu > least]
    if r.by_cpu:
        top = max(cpu for _, cpu in pool)
        node = rng.choices(pool, weights=[cpu / top for _, cpu in pool])[0][0]  # shares, so scaled nodes draw alike
    else:
        node = rng.choice(pool)[0]
    cut = rng.uniform(*r.cut)
    transient = rng.random() < 1.0 - r.permanent
    restore = round(at_s + rng.uniform(*r.restore_after_s), 1) if transient else None
    return Fault(node, at_s, cut, restore)


def break_even_s(*, check_s: float, slow_checks: int, rate_lag_s: float, restart_s: float, checkpoint_s: float,
                 cut: float) -> float:
    """The shortest transient cut a move can pay off in. The controller sees a job slow ``rate_lag_s`` after the
    cut at the soonest and moves it after ``slow_checks`` checks ``check_s`` apart: at ``d = slow_checks * check_s
    + rate_lag_s``. The move costs ``c = restart_s`` (stop to restart) plus the work since the last checkpoint,
    at most ``checkpoint_s`` of wall time at the cut's speed. Staying, the job makes ``1/cut`` progress a second
    until the cut ends at ``D``; moved, full progress from ``d + c`` on. Moving gains ``(D - d)(1 - 1/cut) - c``,
    positive once ``D > d + c / (1 - 1/cut)``."""
    d = slow_checks * check_s + rate_lag_s
    c = restart_s + checkpoint_s / cut
    return d + c / (1.0 - 1.0 / cut)
