"""The evaluation grid: cases (scenario or split family, workload, load, seed) x policies, run on the simulator.

``policy.evaluate`` (the CLI), ``policy.promote`` and ``policy.served_sweep`` all run their episodes through
``run_all``, so every caller scores a policy the same way: ``NAME@MODE`` entries served with hot filter MODE,
``--served`` weights and mappings through ``policy.served.Served``, the contention and net-capacity overrides
applied to each case's ``SimConfig``. Every policy runs on the very same episodes (a case's workload is a
function of its scenario and seed only), so differences are the policies' own. ``SCENARIOS`` and
``WORKLOADS`` are the fixed, split-less cases (policy.evaluate's module doc lists them).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace

from policy.comparison import BASELINE
from policy.report import format_counts
from policy.served import DEFAULT_HOT_FILTER, DEFAULT_MAPPING, HOT_FILTERS, HOT_THRESHOLDS, ScoreMapping, Served
from policy.sim.config import SimConfig
from policy.sim.episode import run_episode, scorer_from_spec, scorer_label
from policy.sim.metrics import placement_counts
from policy.sim.sharing import ContentionParams
from policy.splits import SPLITS, seeds

SCENARIOS: dict[str, dict] = {
    "base": dict(cluster="standard:8", profile_error=0.1, sample_interval=10.0),
    "hetero": dict(cluster="mixed:16", profile_error=0.1, sample_interval=10.0),
    "noisy": dict(cluster="standard:8", profile_error=0.5, sample_interval=10.0),
    "stale": dict(cluster="standard:8", profile_error=0.1, sample_interval=60.0),
}
WORKLOADS: dict[str, dict] = {
    "drs": dict(workload="drs", arrival="poisson"),
    "drs-bursty": dict(workload="drs", arrival="bursty"),
    "batch": dict(workload="batch", arrival="poisson"),
    "alibaba": dict(workload="alibaba", arrival="trace", trace="alibaba"),
    # Sensitivity axis, not data: the trace has no net/disk; pods get a median 30 / 50 MB/s per core they use.
    "alibaba-io": dict(workload="alibaba", arrival="trace", trace="alibaba", trace_io=(30.0, 50.0)),
}
COMPUTE_KINDS = ("cpu", "train")
"""Job kinds whose placements ``table.txt`` counts per node type: the jobs that use whole cores."""


@dataclass(frozen=True)
class Case:
    """One episode: a scenario (or, with ``split``, a family of that split), workload, load and seed."""

    scenario: str
    workload: str
    load: float
    seed: int
    split: str | None = None

    def sim_config(self, n_jobs: int) -> SimConfig:
        if self.split is not None:
            # A family that fixes its job count (the size split's) keeps it.
            return SimConfig(**{"load": self.load, "n_jobs": n_jobs, **SPLITS[self.split][self.scenario].config})
        workload = WORKLOADS.get(self.workload) or dict(arrival="trace", trace=self.workload)  # --trace SPEC
        return SimConfig(load=self.load, n_jobs=n_jobs, **SCENARIOS[self.scenario], **workload)


def split_cases(split: str, families: Sequence[str], loads: Sequence[float], n_seeds: int,
                offset: int = 0) -> list[Case]:
    """Every (family, load, seed) case of ``split``, on the split's own seeds."""
    fams = SPLITS[split]
    return [Case(f, fams[f].workload, ld, seed, split) for f in families for ld in loads
            for seed in seeds(split, n_seeds, offset)]


HOT_FILTER_SEP = "@"
"""``NAME@MODE`` in ``--policies``: NAME served with hot filter MODE, as the lab names an arm (``worst-fit@off``)."""


def policy_setting(entry: str, hot_filter: str) -> tuple[str, str]:
    """A ``--policies`` entry as (scorer spec, hot filter): ``NAME@MODE`` -> (NAME, MODE), a plain NAME ->
    (NAME, ``hot_filter``); ``ValueError`` for a mode that is not one of ``HOT_FILTERS``."""
    spec, sep, mode = entry.partition(HOT_FILTER_SEP)
    if sep and mode not in HOT_FILTERS:
        raise ValueError(f"hot-filter mode after {HOT_FILTER_SEP!r} must be one of {', '.join(HOT_FILTERS)}, "
                         f"got {mode!r}")
    return spec, mode if sep else hot_filter


def _run_case(args: tuple) -> tuple[Case, str, dict, dict]:
    case, n_jobs, entry, label, weight, default_filter, mapping, thresholds, overrides = args
    spec, hot_filter = policy_setting(entry, default_filter)
    scorer = scorer_from_spec(spec, seed=case.seed)
    if weight is not None and spec != BASELINE:  # default-k8s is kube-scheduler without the extender
        scorer = Served(scorer, weight, thresholds=thresholds, mode=hot_filter, mapping=mapping)
    t0 = time.perf_counter()
    cfg = case.sim_config(n_jobs)
    result = run_episode(replace(cfg, **overrides) if overrides else cfg, case.seed, scorer)
    row = result.summary()
    row["wall_s"] = time.perf_counter() - t0
    row["compute_placements"] = format_counts(placement_counts(result.placements, COMPUTE_KINDS))
    series = {"jct": result.jct, "tick_times": result.tick_times, "utilisation": result.utilisation,
              "imbalance": result.imbalance_series}
    return case, label, row, series


def run_all(cases: list[Case], policies: list[str], n_jobs: int, workers: int, progress: bool = True,
            served_weight: float | None = None, hot_filter: str = DEFAULT_HOT_FILTER,
            contention: ContentionParams | None = None, mapping: ScoreMapping = DEFAULT_MAPPING,
            net_shown: float | None = None, progress_shown: str = "none", hot_thresholds=HOT_THRESHOLDS):
    """Run every (case, policy), each policy scored as served with extender weight ``served_weight`` and
    value-to-score ``mapping`` if a weight is given (``policy.served``), under ``contention`` if given (else
    the calibration file's active set), every node showing net capacity ``net_shown`` if given
    (``SimConfig.net_shown``), the running pods' progress as ``progress_shown`` (``SimConfig.progress_shown``);
    ``NAME@MODE`` policies with hot filter MODE, the others ``hot_filter``
    (``policy_setting``), each at ``hot_thresholds`` (``policy.served.heat``); returns rows (dicts) and the
    per-run series of the first seed."""
    labels = [scorer_label(s) + HOT_FILTER_SEP * bool(sep) + m
              for s, sep, m in (p.partition(HOT_FILTER_SEP) for p in policies)]
    labels = [lab if labels.count(lab) == 1 else p for lab, p in zip(labels, policies, strict=True)]
    overrides = {k: v for k, v in (("contention", contention), ("net_shown", net_shown)) if v is not None}
    if progress_shown != "none":
        overrides["progress_shown"] = progress_shown
    tasks = [(c, n_jobs, p, lab, served_weight, hot_filter, mapping, hot_thresholds, overrides) for c in cases
             for p, lab in zip(policies, labels, strict=True)]
    rows, series = [], {}
    bar = _progress(len(tasks), progress)
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = pool.map(_run_case, tasks, chunksize=1)
            for out in results:
                _collect(out, rows, series, bar)
    else:
        for task in tasks:
            _collect(_run_case(task), rows, series, bar)
    bar.close()
    return rows, series


def _collect(out, rows, series, bar) -> None:
    case, label, row, ser = out
    rows.append({"scenario": case.scenario, "workload": case.workload, "load": case.load, "seed": case.seed,
                 "policy": label, **row})
    series.setdefault((case.scenario, case.workload, case.load, case.seed), {})[label] = ser
    bar.update(1)


def _progress(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc="episodes", unit="run", disable=not enabled, file=sys.stderr)
