"""Fitting the contention model from a cluster's own outcomes: the decision log (``python -m policy.calibrate log``).

Why it exists: the lab fit (``policy.calibrate fit``) knows each job's solo run time because the lab measured
it; a production cluster never runs a pod alone to find out. What its decision log does hold, per pod that
ended (``policy.decisionlog``): the node it was bound to, what that node held at the decision (the recorded
inputs: usage, requests, pod count), the pod's own demand and requests, its run time, and (since the field
was added) its workload. Pods of one workload do the same work, so their solo run time is one unknown per
workload, and a parameter set ``theta`` of the contention model explains the log as

    log run_i = log solo_w(i) + log s_i(theta) + noise,    s_i = predicted slowdown on its bound node

(``policy.predicted.slowdown_on``: the node's jobs are equal shares of its estimated usage and requests). For a
given ``theta`` the best ``log solo_w`` is the mean of ``log run - log s`` over the workload's fitting pods, so
the fit is an exhaustive search over the same grid the lab fit uses (``policy.calibrate.fit.GRID``), each set
judged by the median + p90 relative error of ``solo_w * s_i`` against the observed run on the fitting pods.

Honest by construction:

* **Held out in time.** The usable pods are ordered by decision time; the first ``fit_fraction`` fit the
  parameters and the workloads' solo times, and the errors reported are those of the later pods (whose
  workloads the fitting pods saw; others are counted, not guessed).
* **Against the null.** Beside the fitted set and the active one, the report gives the model with no
  contention at all (``s = 1``: every pod of a workload predicted at its workload's typical run). A fitted set
  that does not beat it on the held-out pods says the log cannot tell the contention model's sets apart (too
  little contention, or too few pods per workload), not that contention does not matter.

What it assumes (as ``policy.offline``): the node's load at the decision holds for the pod's whole stay (later
arrivals and departures are not in the row); only the row's kept nodes carry inputs, so a pod bound elsewhere
is left out; the noise is per pod, independent. It writes nothing unless asked: ``--write NAME`` records the
fitted set (and its record under ``fits``) in the calibration file, keeping its ``active`` set, as ``fit
--write`` does; ``--params NAME`` then evaluates with it (``policy.offline``, the simulator).
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from policy.calibrate.fit import Errors
from policy.decisionlog import Row
from policy.features import estimated_usage
from policy.logged import encoding
from policy.offline import bound_node
from policy.predicted import slowdown_on, without_daemons
from policy.sim.sharing import ContentionParams

log = logging.getLogger(__name__)

SKIPS = ("no_outcome", "not_succeeded", "no_inputs", "no_workload", "bound_unknown", "bound_not_kept")
"""Why a (decision, outcome) pair is no sample: the pod has not ended (or has no run time), it did not succeed
(a failed or deleted pod's run is no measure of its work), the row has no inputs, no workload (a standalone
pod, or a row written before the field), no bound node is known, or that node is not among the kept nodes."""
FIT_FRACTION = 0.7


@dataclass(frozen=True, slots=True, eq=False)
class Sample:
    """One pod that ended: where it ran, what that node held at the decision, and its run time."""

    ts: float
    workload: str
    snap: object
    pod: object
    node: int
    est: np.ndarray
    run_s: float


def samples(pairs: Sequence[tuple[Row, Row | None]], *,
            daemon_pods: int = 0) -> tuple[list[Sample], dict[str, int]]:
    """The usable pods of a log, in decision-time order, and the count of pairs left out (``SKIPS``); each
    node's jobs are its pods less its DaemonSet pods: as the row counted them, else ``daemon_pods``
    (``policy.logged.LoggedDecision.daemons``, ``policy.predicted.without_daemons``)."""
    skipped = dict.fromkeys(SKIPS, 0)
    out = []
    for d, o in pairs:
        if o is None or o["run_s"] is None or not o["run_s"] > 0:
            skipped["no_outcome"] += 1
        elif o["phase"] != "Succeeded":
            skipped["not_succeeded"] += 1
        elif d["inputs"] is None:
            skipped["no_inputs"] += 1
        elif not d.get("workload"):
            skipped["no_workload"] += 1
        elif (bound := bound_node(d, o)) is None:
            skipped["bound_unknown"] += 1
        else:
            dec = encoding(d)
            if bound not in dec.names:
                skipped["bound_not_kept"] += 1
                continue
            jobs = without_daemons(dec.snap, dec.daemons(daemon_pods))
            out.append(Sample(float(d["ts"]), d.get("workload"), jobs, dec.pod, dec.names.index(bound),
                              estimated_usage(dec.snap, d["inputs"]["max_usage_age"]), float(o["run_s"])))
    out.sort(key=lambda s: s.ts)
    return out, skipped


@dataclass(frozen=True, slots=True)
class Split:
    fit: list[Sample]
    held: list[Sample]      # later pods of workloads the fitting pods saw
    unseen: int             # later pods of workloads the fitting pods did not see (not scored)


def split(items: list[Sample], fit_fraction: float = FIT_FRACTION) -> Split:
    """The first ``fit_fraction`` of the (time-ordered) samples fit; the rest are held out."""
    k = max(1, math.floor(fit_fraction * len(items))) if items else 0
    fit_part, later = items[:k], items[k:]
    seen = {s.workload for s in fit_part}
    return Split(fit_part, [s for s in later if s.workload in seen], sum(s.workload not in seen for s in later))


def log_slowdowns(items: Sequence[Sample], params: ContentionParams | None) -> np.ndarray:
    """log of each sample's predicted slowdown on its node under ``params`` (None: no contention, all 0)."""
    if params is None:
        return np.zeros(len(items))
    return np.log([slowdown_on(s.snap, s.pod, s.node, s.est, params) for s in items])


def solo_times(items: Sequence[Sample], log_s: np.ndarray) -> dict[str, float]:
    """Each workload's log solo run time: the mean of log run - log slowdown over its samples."""
    acc: dict[str, list[float]] = defaultdict(list)
    for s, ls in zip(items, log_s, strict=True):
        acc[s.workload].append(math.log(s.run_s) - ls)
    return {w: float(np.mean(v)) for w, v in acc.items()}


def errors(items: Sequence[Sample], log_s: np.ndarray, solo: dict[str, float]) -> Errors:
    """Median and p90 of |predicted run / observed run - 1| (``Errors``)."""
    if not items:
        return Errors.of_values([])
    pred = np.exp(np.array([solo[s.workload] for s in items]) + log_s)
    run = np.array([s.run_s for s in items])
    return Errors.of_values(np.abs(pred / run - 1.0))


@dataclass(frozen=True, slots=True)
class Scored:
    params: ContentionParams | None
    fit: Errors
    held: Errors


def score(sp: Split, params: ContentionParams | None) -> Scored:
    """``params`` fitted (the workloads' solo times) on the fitting pods, scored on both parts."""
    ls_fit = log_slowdowns(sp.fit, params)
    solo = solo_times(sp.fit, ls_fit)
    return Scored(params, errors(sp.fit, ls_fit, solo), errors(sp.held, log_slowdowns(sp.held, params), solo))


def fit_from_log(sp: Split, candidates: Sequence[ContentionParams], *, progress: bool = False) -> Scored:
    """The candidate with the least median + p90 error on the fitting pods (ties keep the earlier one)."""
    if not candidates:
        raise ValueError("fit needs at least one candidate parameter set")
    best: Scored | None = None
    it = candidates
    if progress:
        from tqdm import tqdm
        it = tqdm(candidates, desc="parameter sets", unit="set")
    for params in it:
        s = score(sp, params)
        if best is None or s.fit.loss < best.fit.loss - 1e-12:
            best = s
    log.info("fit done best=%s fit_loss=%.4f", best.params.as_dict(), best.fit.loss)
    return best


def workloads(items: Sequence[Sample]) -> dict[str, int]:
    """Samples per workload, most first."""
    return dict(Counter(s.workload for s in items).most_common())
