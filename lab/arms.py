"""The lab's arms: what an arm name sets on the cluster, how arms sort, and the order that needs fewest rollouts.

Why it exists: an arm is a base -- ``default`` (the stock default-scheduler), ``model`` (drsched, shipped
model), ``demand-aware`` (drsched with that heuristic), ``migration`` (drsched model + the migration
controller), the straggler regime's two baselines for it -- ``taint`` (the controller moves nothing and taints
the nodes its rule judges degraded, ``--mode=taint``) and ``restart`` (it moves slow jobs but they start from
zero, ``--resume=scratch``) --, ``worst-fit`` (drsched serving ``policy.baselines.worst_fit``: the positive
control, a policy the lab must tell from the default) -- optionally followed by ``@<mode>``, the extender's
hot-node filter for that arm (``model@prefer-fit``, ``demand-aware@off``; a plain base keeps the shipped
filter), and then by ``#<n>``, a replicate: ``default#2`` runs exactly what ``default`` runs, as a second arm
of its own (the A/A check: two arms that differ in nothing must come out equal within the interval). The
runner, the CLI and the report all read arm names, so they are parsed and ordered here once. Pure: no
cluster, no files.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from lab.errors import LabError
from policy.served import HOT_FILTERS

TAINT_MODE = "--mode=taint"  # the taint baseline's controller flag (it needs nodes patch: lab.kube binds it)

BASES = {  # base arm -> (schedulerName, extender policy, the migration controller's own args: None = not running)
    "default": (None, None, None),
    "model": ("drsched", "model", None),
    "demand-aware": ("drsched", "demand-aware", None),
    "migration": ("drsched", "model", ()),
    "taint": ("drsched", "model", (TAINT_MODE,)),
    "restart": ("drsched", "model", ("--resume=scratch",)),
    "worst-fit": ("drsched", "worst-fit", None),
}
SEPARATOR = "@"
REPLICATE = "#"


class ArmError(LabError, ValueError):
    """An arm name that is not a base, a mode that is not a hot-filter mode, or a replicate that is not an
    integer >= 2 (the message says which)."""


@dataclass(frozen=True, slots=True)
class Arm:
    name: str
    base: str
    scheduler: str | None
    policy: str | None
    """The extender's --policy; None: the arm does not use the extender (it is left as it is)."""
    migration: bool
    """The migration controller runs (scaled to one replica) in this arm."""
    hot_filter: str | None
    """The extender's --hot-filter; None: the shipped default (no flag)."""
    replicate: int = 1
    """1 for the arm itself, n for its n-th copy (``default#2``): the same settings, recorded apart."""
    controller: tuple[str, ...] = ()
    """With ``migration``: the arguments this arm adds to the controller's (``lab.kube.MIGRATION_ARGS``)."""

    @property
    def extender(self) -> tuple[str, str | None] | None:
        """What the extender must run for this arm (None: anything); a change costs one rollout."""
        return None if self.policy is None else (self.policy, self.hot_filter)


def parse(name: str) -> Arm:
    setting, hash_, copy = name.partition(REPLICATE)
    if hash_ and not (copy.isdigit() and int(copy) >= 2):
        raise ArmError(f"arm {name!r}: the replicate after {REPLICATE!r} must be an integer >= 2 "
                       f"(e.g. default{REPLICATE}2)")
    base, sep, mode = setting.partition(SEPARATOR)
    if base not in BASES:
        raise ArmError(f"unknown arm {name!r}: the part before {SEPARATOR!r} must be one of {', '.join(BASES)}")
    scheduler, policy, controller = BASES[base]
    if sep and mode not in HOT_FILTERS:
        raise ArmError(f"arm {name!r}: hot-filter mode after {SEPARATOR!r} must be one of {', '.join(HOT_FILTERS)}")
    if sep and policy is None:
        raise ArmError(f"arm {name!r}: the {base} arm runs without the extender, so it has no hot filter")
    return Arm(name=name, base=base, scheduler=scheduler, policy=policy, migration=controller is not None,
               hot_filter=mode if sep else None, replicate=int(copy) if hash_ else 1, controller=controller or ())


def sort_key(name: str) -> tuple:
    """Report order: bases in ``BASES`` order, each plain base before its ``@mode`` arms, each arm before its
    replicates; unknown names last."""
    setting, _, copy = name.partition(REPLICATE)
    base, _, mode = setting.partition(SEPARATOR)
    rank = list(BASES).index(base) if base in BASES else len(BASES)
    return (rank, mode, int(copy) if copy.isdigit() else 1, name)


def run_order(names: list[str], current: tuple[str, str | None], migration_on: bool = False) -> list[str]:
    """A seed's arms in run order: those the extender as it is (``current`` policy and hot filter) already
    serves first, then one group per other extender setting, so each setting costs one rollout; inside a
    group the migration controller stays in its current state first, then the other (one scale at most)."""
    def key(name: str) -> tuple:
        arm = parse(name)
        ext = arm.extender
        change = ext is not None and ext != current
        group = (ext[0], ext[1] or "") if change else ("", "")
        return (change, group, arm.migration != migration_on, sort_key(name))

    return sorted(names, key=key)


def random_order(names: list[str], *, seed: int, key: str) -> list[str]:
    """A seed's arms in a seeded random order, the same for the same ``key`` (a protocol's ``order_key``) and
    seed whatever order ``names`` come in, so a resumed run keeps it. A protocol runs arms this way: a slow
    spell of the shared machine, or an arm that leaves the cluster warm, then favours no arm systematically
    (at the cost of more extender rollouts than ``run_order``)."""
    order = sorted(dict.fromkeys(names), key=sort_key)
    random.Random(f"drsched-lab-order:{key}:{seed}").shuffle(order)
    return order


def file_part(name: str) -> str:
    """The arm as part of a file name: ``@`` becomes ``+`` (``usage-model+prefer-fit.png``), because a name
    like ``usage-model@prefer-fit.png`` is autolinked as an e-mail address by GitHub's markdown, and ``#``
    becomes ``_`` (a ``#`` in a link starts its fragment)."""
    return name.replace(SEPARATOR, "+").replace(REPLICATE, "_")
