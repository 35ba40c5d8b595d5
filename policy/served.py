"""Scoring as the deployment serves it: hot-node filter, the extender's 0-10 score x weight, kube-scheduler's own.

Why it exists: a pure argmax of a scorer is not what a pod meets in a cluster. There, kube-scheduler keeps
the nodes that fit by requests, the extender's filter drops *hot* nodes (fresh estimated usage at or above
``HOT_THRESHOLDS`` of capacity; a node with stale or missing usage passes), the extender maps its raw values
to integers 0..10 over the remaining nodes, and kube-scheduler adds ``score x weight x 10`` to its default
resource scoring (NodeResourcesFit LeastAllocated + NodeResourcesBalancedAllocation, 0..100 each; the
other default plugins give every node of the simulator the same score). The highest total wins, ties at
random. ``Served`` wraps any ``Scorer`` into that total, so ``policy.sim.episode`` evaluates what is served.

The 0..10 rule and the hot filter (``heat`` judges, ``hot_refused`` applies the mode) live here and the
extender's ``filter_reasons`` calls them, so the simulator cannot drift from what is served; the defaults
are the extender's settings'.

Hot-filter modes (the extender's ``hot_filter`` setting, ``python -m policy.evaluate --hot-filter``):
``prefer-cool`` judges the node as it is and filters hot nodes only while some fit node is cool;
``prefer-fit`` judges the node as it would be with the pod on it (usage + the pod's expected demand), with
the same prefer rule, so an idle node too small for the pod is not "cool" for it; ``strict`` always
filters (as it is); ``off`` never does.

Value-to-score mappings (``ScoreMapping``, the extender's ``score_mapping`` setting, ``python -m
policy.evaluate --mapping``), over the allowed nodes, the best raw value ``best``:

    minmax      round(10 * (raw - min) / (best - min))          all equal -> 10
    band:B      10 where raw >= best - B, else                   near-ties all get 10
                round(9 * (raw - min) / (best - B - min))
    linear:B    max(0, round(10 - (best - raw) / B))             one point per B below the best

``minmax`` stretches any spread, however small, to 0 vs 10, so at a high weight a near-tie of Q-values
overrides kube-scheduler's own resource scoring; the other two keep nodes the policy is (nearly)
indifferent between at the same score. ``DEFAULT_MAPPING`` and ``DEFAULT_WEIGHT`` were chosen on the
validation split (``python -m policy.served_sweep``; ``results/policy/served-sweep/``) and are the
defaults of the extender, of ``--served`` and, as numbers that YAML cannot import, of the shipped
scheduler configs (a test keeps those equal).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from policy.baselines.default_k8s import DefaultK8s
from policy.baselines.koord import USAGE_THRESHOLDS
from policy.features import DEFAULT_MAX_USAGE_AGE, estimated_usage, feasible_mask, usage_is_fresh
from policy.model import Scorer
from policy.state import RESOURCES, ClusterSnapshot, PodView

HOT_FILTERS = ("prefer-cool", "prefer-fit", "strict", "off")
DEFAULT_HOT_FILTER = HOT_FILTERS[0]  # what the extender ships with (extender.settings)
"""Hot-filter modes (module docstring); the extender's default is the first."""

HOT_THRESHOLDS = (*USAGE_THRESHOLDS, np.inf, np.inf)
"""Estimated usage / capacity at which a fresh node is filtered, per resource: the extender's defaults,
Koordinator's for cpu and memory, none for net and disk. Defined here once; the extender's settings and
``extender.decide.Thresholds`` take their defaults from it."""


def parse_hot_thresholds(text: str) -> tuple[float, ...]:
    """``CPU,MEM[,NET,DISK]`` (``none`` for no check of a resource; net and disk unset: none) -> the four
    thresholds ``heat`` takes, as the extender's ``hot_cpu`` .. ``hot_disk`` settings; ``ValueError`` naming what
    is wrong. ``python -m policy.evaluate --hot-thresholds`` reads this."""
    parts = [t.strip() for t in str(text).split(",")]
    if len(parts) not in (2, 4):
        raise ValueError(f"hot thresholds are CPU,MEM or CPU,MEM,NET,DISK, got {text!r}")
    out = []
    for name, part in zip(RESOURCES, parts + ["none"] * (len(RESOURCES) - len(parts)), strict=True):
        try:
            value = np.inf if part.lower() == "none" else float(part)
        except ValueError:
            raise ValueError(f"hot threshold {name} must be a number or none, got {part!r} in {text!r}") from None
        if not value > 0:
            raise ValueError(f"hot threshold {name} must be > 0 (or none), got {part!r} in {text!r}")
        out.append(value)
    return tuple(out)


def hot_thresholds_text(thresholds) -> str:
    """``parse_hot_thresholds``'s inverse, shortest form: ``0.65,0.95`` for the shipped ``HOT_THRESHOLDS``."""
    parts = ["none" if not np.isfinite(t) else f"{t:g}" for t in thresholds]
    return ",".join(parts[:2] if parts[2:] == ["none", "none"] else parts)


MAX_EXTENDER_PRIORITY = 10
NODE_SCORE_PER_PRIORITY = 10
"""kube-scheduler scales an extender's score by MaxNodeScore (100) / MaxExtenderPriority (10)."""


@dataclass(frozen=True, slots=True)
class Heat:
    """The hot filter's look at one snapshot for one pod: (N, 4) arrays, per node and resource."""

    util: np.ndarray
    """Fresh estimated usage / capacity (the node as it is)."""
    pod: np.ndarray | None
    """The pod's expected demand / capacity when the mode judges the node with the pod on it, else None."""
    hot: np.ndarray
    """util (+ pod) at or above the threshold, on nodes with fresh usage only (stale: nothing to judge)."""


def heat(snap: ClusterSnapshot, pod: PodView | None, thresholds=HOT_THRESHOLDS, *, mode: str = "prefer-cool",
         max_usage_age: float = DEFAULT_MAX_USAGE_AGE, fresh: np.ndarray | None = None) -> Heat:
    """The one hotness predicate, shared by the extender and the served simulator (whole-array numpy: the
    extender's filter calls it on every request). ``prefer-fit`` adds ``pod.demand``; mode ``off`` judges
    nothing hot. ``fresh``: ``usage_is_fresh(snap, max_usage_age)`` when the caller has it (shadow mode's row
    cache hands it over), not computed twice more here."""
    if mode not in HOT_FILTERS:
        raise ValueError(f"hot filter mode must be one of {HOT_FILTERS}, got {mode!r}")
    if fresh is None:
        fresh = usage_is_fresh(snap, max_usage_age)
    util = estimated_usage(snap, max_usage_age, fresh=fresh) / snap.capacity
    if mode == "off":
        return Heat(util=util, pod=None, hot=np.zeros(util.shape, dtype=bool))
    share = pod.demand / snap.capacity if mode == "prefer-fit" and pod is not None else None
    after = util if share is None else util + share
    hot = (after >= np.asarray(thresholds)) & fresh[:, None]
    return Heat(util=util, pod=share, hot=hot)


def any_resource(hot: np.ndarray) -> np.ndarray:
    """(N,) ``hot.any(axis=1)`` of ``Heat.hot`` (N, 4): a node's four flags read as one integer, one comparison per
    node instead of numpy's reduction along a narrow axis (~1.5 vs ~15 us at 1,000 nodes)."""
    if hot.dtype != np.bool_ or hot.ndim != 2 or hot.shape[1] != 4:  # the view reads four one-byte flags
        return hot.any(axis=1)
    return np.ascontiguousarray(hot).view(np.uint32).reshape(-1) != 0


def hot_refused(fit: np.ndarray, hot: np.ndarray, mode: str) -> np.ndarray:
    """(N,) fit nodes the hot filter refuses, given ``hot`` (N,) from ``heat``: all hot fit nodes, except
    that the prefer modes refuse none when every fit node is hot (a filter that removed them all would leave
    the pod pending while it could run; the scores choose among them instead)."""
    refused = fit & hot
    if mode == "off" or (mode != "strict" and not (fit & ~hot).any()):
        return np.zeros_like(refused)
    return refused


def served_choice(raw: np.ndarray, allowed: np.ndarray, keep: int | None = None) -> int | None:
    """The node drsched chooses among ``allowed`` by ``raw`` (None: none allowed); a tie with node ``keep``
    (shadow mode: the node the pod was bound to) keeps it. What shadow mode records as its choice, and what
    ``policy.offline`` re-scores a logged row with."""
    if not allowed.any():
        return None
    best = int(np.argmax(np.where(allowed, raw, -np.inf)))
    return keep if keep is not None and allowed[keep] and raw[keep] >= raw[best] else best


def hot_nodes(snap: ClusterSnapshot, thresholds=HOT_THRESHOLDS, max_usage_age: float = DEFAULT_MAX_USAGE_AGE,
              *, pod: PodView | None = None, mode: str = "prefer-cool") -> np.ndarray:
    """(N,) True where ``heat`` finds some resource hot."""
    return any_resource(heat(snap, pod, thresholds, mode=mode, max_usage_age=max_usage_age).hot)


MAPPINGS = ("minmax", "band", "linear")
"""Value-to-score mappings (``ScoreMapping.kind``; module docstring): today's min-max, and two that leave
near-ties to kube-scheduler's own plugins."""


@dataclass(frozen=True, slots=True)
class ScoreMapping:
    """How raw values (higher is better) become kube-scheduler's integer scores 0..10 over the allowed nodes.

    Written ``KIND`` or ``KIND:BAND`` (``minmax``, ``band:0.05``, ``linear:0.02``); ``band`` is in the
    raw value's own units (for the DQN and ``lookahead``: predicted excess slowdown)."""

    kind: str = "minmax"
    band: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in MAPPINGS:
            raise ValueError(f"score mapping must be one of {', '.join(MAPPINGS)}, got {self.kind!r}")
        if self.kind == "minmax" and self.band != 0:
            raise ValueError(f"score mapping minmax takes no band, got {self.band:g}")
        if self.kind != "minmax" and not (np.isfinite(self.band) and self.band > 0):
            raise ValueError(f"score mapping {self.kind} needs a band > 0 (e.g. {self.kind}:0.05), got {self.band:g}")

    @classmethod
    def parse(cls, text: str) -> ScoreMapping:
        """``KIND[:BAND]`` -> a mapping; ``ValueError`` naming what is wrong."""
        kind, sep, band = str(text).strip().partition(":")
        try:
            value = float(band) if sep else 0.0
        except ValueError:
            raise ValueError(f"score mapping band must be a number, got {band!r} in {text!r}") from None
        return cls(kind, value)

    def __str__(self) -> str:
        return self.kind if self.kind == "minmax" else f"{self.kind}:{self.band:g}"

    def __call__(self, raw: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        return to_extender_scores(raw, allowed, self)


DEFAULT_MAPPING = ScoreMapping("band", 0.02)
"""The mapping the extender serves and ``--served`` evaluates unless told otherwise. Chosen on validation with
``DEFAULT_WEIGHT`` (``policy.served_sweep``: the DQN's excess 0.363x default-k8s's over 10 seeds, against
0.396x for minmax at weight 10)."""
DEFAULT_WEIGHT = 5
"""The extender weight of the shipped kube-scheduler configs and ``--served``'s default (chosen on validation;
at 5 and 10 the DQN's mean excess is the same in 11 of the 12 validation cases; the rule's tie-break gives 5)."""


def to_extender_scores(raw: np.ndarray, allowed: np.ndarray, mapping: ScoreMapping = DEFAULT_MAPPING) -> np.ndarray:
    """(N,) int64 scores 0..10 from ``raw`` over the allowed nodes by ``mapping`` (module docstring), rounded
    half up; the best allowed node always gets 10; nodes not allowed (or with a non-finite raw value) get 0.
    The one copy of the rule: the extender (``extender/decide.py``) serves exactly this, and the
    simulator's served mode scores with it."""
    raw = np.asarray(raw, dtype=np.float64)
    ok = allowed & np.isfinite(raw)
    out = np.zeros(raw.shape[0], dtype=np.int64)
    if not ok.any():
        return out
    values = raw[ok]
    best = values.max()
    if mapping.kind == "linear":
        points = np.floor(MAX_EXTENDER_PRIORITY - (best - values) / mapping.band + 0.5)
    elif mapping.kind == "band":
        tied = values >= best - mapping.band
        points = np.full(values.shape, float(MAX_EXTENDER_PRIORITY))
        if not tied.all():
            lo = values.min()  # < best - band: some node is not tied
            span = best - mapping.band - lo
            points[~tied] = np.floor((MAX_EXTENDER_PRIORITY - 1) * (values[~tied] - lo) / span + 0.5)
    else:
        lo = values.min()
        if best - lo <= 1e-12 * max(1.0, abs(best)):
            points = np.full(values.shape, float(MAX_EXTENDER_PRIORITY))
        else:
            points = np.floor(MAX_EXTENDER_PRIORITY * (values - lo) / (best - lo) + 0.5)
    out[ok] = np.clip(points, 0, MAX_EXTENDER_PRIORITY).astype(np.int64)
    return out


class Served:
    """``scorer`` as served behind kube-scheduler with extender weight ``weight``: -inf on hot nodes, else
    the default resource score + 10 x weight x the 0..10 extender score of ``mapping``."""

    def __init__(self, scorer: Scorer, weight: float = DEFAULT_WEIGHT, *, thresholds=HOT_THRESHOLDS,
                 mode: str = "prefer-cool", max_usage_age: float = DEFAULT_MAX_USAGE_AGE,
                 mapping: ScoreMapping = DEFAULT_MAPPING) -> None:
        if not weight > 0:
            raise ValueError(f"extender weight must be > 0 (kube-scheduler refuses 0 with a prioritize verb), "
                             f"got {weight}")
        if mode not in HOT_FILTERS:
            raise ValueError(f"hot filter mode must be one of {HOT_FILTERS}, got {mode!r}")
        self.scorer, self.weight, self.mapping = scorer, weight, mapping
        self.name = scorer.name
        self.thresholds, self.mode, self.max_usage_age = thresholds, mode, max_usage_age
        self._k8s = DefaultK8s()
        if hasattr(scorer, "chose"):
            self.chose = scorer.chose

    def score(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        fit = feasible_mask(snap, pod)
        hot = hot_nodes(snap, self.thresholds, self.max_usage_age, pod=pod, mode=self.mode)
        passed = fit & ~hot_refused(fit, hot, self.mode)
        ext = to_extender_scores(self.scorer.score(snap, pod), passed, self.mapping)
        total = self._k8s.score(snap, pod) + NODE_SCORE_PER_PRIORITY * self.weight * ext
        return np.where(passed, total, -np.inf)
