"""What one ``lab run`` runs: its ``Plan``, as data. Imports nothing heavier than the schedule's defaults.

Why it exists apart from ``lab.experiment`` (which runs a plan): the run's defaults are written once, here and in
``lab.schedule.DEFAULTS`` (the schedule's own), and ``lab.cli``'s flags take theirs from these fields, so
``python -m lab --help`` need not import the runner to say what a flagless run does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lab.gates import MAX_SHARE
from lab.schedule import DEFAULTS, SEEDED_RULES, STRAGGLER_NODE, Job, Straggler, draw_straggler
from lab.tenants import LabTenant
from policy.labworld import WORLDS
from policy.straggler import AT_S as STRAGGLER_AT_S


@dataclass
class Plan:
    """One run: every seed's schedule under every arm, into ``out`` (``lab.experiment.run``)."""

    out: Path
    seeds: list[int]
    arms: list[str]
    variant: str = DEFAULTS.variant
    regime: str = DEFAULTS.regime
    jobs: int = DEFAULTS.jobs
    window_s: float = DEFAULTS.window_s
    scale: float | None = DEFAULTS.scale
    """The work factor; None (the default): the world's (``policy.labworld.World.scale``), set on construction."""
    shape: str = DEFAULTS.shape
    arm_timeout_s: float = 600.0
    straggler_node: str = STRAGGLER_NODE
    """The node the straggler regime degrades; a rule of ``lab.schedule.SEEDED_RULES`` (``seed``, ``seed-loaded``):
    each seed draws its node, cut and transience by it (``lab.schedule.draw_straggler``, ``policy.straggler``),
    and ``straggler_quota_m`` is not used."""
    straggler_at_s: float = STRAGGLER_AT_S
    straggler_quota_m: int = 200

    def straggler(self, seed: int, shapes) -> Straggler:
        """The fault this plan's straggler regime puts into every arm of ``seed`` on nodes ``shapes``."""
        if self.straggler_node in SEEDED_RULES:
            return draw_straggler(seed, shapes, at_s=self.straggler_at_s, rule=self.straggler_node)
        return Straggler(self.straggler_node, self.straggler_at_s, self.straggler_quota_m)
    tenants: int = 0
    """Long-running tenants (the ``tenants`` scenario, ``lab.tenants``): this many distinct seed-chosen nodes each
    get one, bound there before every arm's jobs and removed at its end; 0: none."""
    workdir: Path | None = None
    order_key: str | None = None
    """None: the order that needs fewest rollouts; a key: a seeded random order per seed (a protocol's)."""
    solo_runs: int = 1
    """Solo runs per job shape and node; the median is used."""
    protocol: Path | None = None
    """The protocol file this plan came from, copied into ``out`` as protocol.yaml."""
    registration: str = ""
    """The commit that registered the protocol (``lab.cli.registration``), logged per start in protocol-runs.txt."""
    interference_max: float = MAX_SHARE
    """The host-interference gate's limit: the most starved / busy samples an arm may have."""
    require_scored: bool = True
    """Check the scored gate: every pod of a drsched arm scored by the extender (its decision log)."""
    isolate: bool = True
    """Start the cluster isolated where this machine allows it (``Isolation.for_this_machine``); off: never."""
    world: str = DEFAULTS.world
    """The world it runs on (``policy.labworld.WORLDS``): the cluster's nodes and links, the schedules' job mix."""
    schedules: dict[int, list[Job]] = field(default_factory=dict)
    tenant_draws: dict[int, list[LabTenant]] = field(default_factory=dict)
    """Each seed's tenants on the cluster's nodes (``lab.tenants.lab_tenants``), set with the schedules."""

    def __post_init__(self) -> None:
        if self.scale is None:
            self.scale = WORLDS[self.world].scale
