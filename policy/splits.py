"""Train, validation and test: which episodes may choose a model and which may only report on it.

Why it exists: a model chosen on the cases it is then reported on is not evaluated. Three disjoint sets:

- **train**: the episodes ``policy.env.ClusterEnv`` draws; each draws its simulator seed below
  ``TRAIN_SEED_LIMIT`` and its config from ``EnvConfig``'s ranges.
- **validation**: ``VALIDATION``, families inside training's ranges, on seeds from
  ``SEED_BASE["validation"]``. Tuning and checkpoint selection (training's evaluation callback) use these only.
- **test**: ``TEST``, families outside training's ranges, on seeds from ``SEED_BASE["test"]``: a larger and
  more heterogeneous cluster, bursty arrivals, a job mix never trained on, profile error and usage
  staleness beyond training's, and a half of pods without a profile. Reported, never tuned on.

Besides the three, ``LAB`` is an evaluation-only family set (``python -m policy.evaluate --split lab``): the
real-node lab's worlds (``policy.labworld.WORLDS``, drawn by ``policy.sim.labmix``), one family per world and
request variant, on seeds from ``SEED_BASE["lab"]``: ``lab-<variant>`` the DRS world (the four real nodes
``rn-*``, the DRS mix), ``lab-mr-<variant>`` the multi-resource world (nodes ``mr-*`` whose links do not scale
with their CPU, net jobs that pull through them; ``lab-mr-<variant>-isolated`` the same in the lab's isolated
frame, ``lab-mr-<variant>-daemons`` that frame with the monitor DaemonSet pod's requests on every node, as the lab
ran it: ``policy.sim.cluster``), ``lab-misleading`` (the DRS world's nodes and mix in the
``small`` job shape with ``misleading`` requests) and ``lab-tenants`` (the same in ``under`` requests, on top of
long-running tenants pinned first on seed-chosen nodes: ``policy.tenants``, ``SimConfig.tenants``). It says
whether the simulator shows what the real nodes showed, and predicts a lab scenario's ratios before it runs;
nothing is tuned on it, and it is no part of validation or test.

``SIZE`` is the other evaluation-only set (``--split size``): test families grown to ``SIZE_NODES`` nodes
(``<family>-<nodes>``: ``large-hetero-1000`` is large-hetero's small-node-heavy mix on 1,000 nodes), on seeds
from ``SEED_BASE["size"]``. It asks whether a policy's standing holds at a production cluster's size; a
separate set, not more test families, so the test split's results and its cost stay what they are. Its
families fix their job count (``n_jobs``, ``SIZE_JOBS_PER_NODE`` per node), which ``--jobs`` may not change:
arrival rates scale with capacity (``policy.sim.arrivals``), so a fixed job count on 1,000 nodes would end
before the cluster filled and every policy would tie.

The seed ranges are disjoint by construction (train < 2**31 <= validation < 2**31 + 2**30 <= test < 2**32 <=
lab < 2**32 + 2**30 <= size), and a family is a fixed ``SimConfig`` (no ranges), so a case is one episode per
(family, load, seed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from policy.labworld import ISOLATED_SCALE, MONITOR_POD_REQUESTS, RUN_JOBS, WORLDS
from policy.sim.cluster import LAB_CLUSTER, MULTI_CLUSTER, MULTI_ISOLATED_CLUSTER, MULTI_LAB_CLUSTER, scaled_cluster
from policy.sim.labmix import lab_workload
from policy.tenants import TENANTS

TRAIN_SEED_LIMIT = 2**31
"""Training episodes draw their simulator seed in [0, TRAIN_SEED_LIMIT)."""
SEED_BASE = {"validation": 2**31, "test": 2**31 + 2**30, "lab": 2**32, "size": 2**32 + 2**30}
SPLIT_SIZE = 2**30
"""Seeds per held-out split: ``SEED_BASE[split] + i`` for 0 <= i < SPLIT_SIZE."""
LOADS = (0.9, 1.3)
"""Offered loads every family is evaluated at (inside training's 0.6-1.6)."""
SPLIT_JOBS = 200
"""Jobs per episode of a split's evaluation (``policy.evaluate --split``'s, and ``policy.train --select served``'s
check), unless the family fixes its own."""


@dataclass(frozen=True)
class Family:
    """One kind of episode: ``SimConfig`` fields besides load and seed (and n_jobs, unless the family fixes it
    as the size split's do), and what it tests."""

    name: str
    why: str
    config: dict = field(default_factory=dict)

    @property
    def workload(self) -> str:
        return self.config.get("workload", "drs")


def _families(*fams: Family) -> dict[str, Family]:
    return {f.name: f for f in fams}


VALIDATION = _families(
    Family("standard", "small homogeneous cluster, good profiles, fresh usage",
           dict(cluster="standard:8", workload="drs", profile_error=0.1, sample_interval=10.0)),
    Family("mixed", "heterogeneous nodes, middling profiles, 30 s samples",
           dict(cluster="mixed:12", workload="drs", profile_error=0.25, sample_interval=30.0)),
    Family("batch", "generic batch tasks on mixed nodes",
           dict(cluster="mixed:8", workload="batch", profile_error=0.2, sample_interval=10.0)),
    Family("stale", "usage sampled every 60 s",
           dict(cluster="standard:10", workload="drs", profile_error=0.1, sample_interval=60.0)),
    Family("noisy", "profiles off by a lognormal sigma of 0.5, the most training draws",
           dict(cluster="mixed:16", workload="drs", profile_error=0.5, sample_interval=10.0)),
    Family("learned", "profiles learned from earlier pods, 15 % of pods without one",
           dict(cluster="standard:8", workload="drs", profile="learned", unprofiled=0.15, sample_interval=30.0)),
)
TEST = _families(
    Family("large-hetero", "32 nodes (training: at most 16), small-node heavy",
           dict(cluster="small:12,standard:8,compute:6,netfast:6", workload="drs", profile_error=0.1)),
    Family("bursty", "on/off bursts of arrivals (training: Poisson only)",
           dict(cluster="mixed:12", workload="drs", arrival="bursty", profile_error=0.1)),
    Family("io-heavy", "a job mix never trained on: io 3 : net 1",
           dict(cluster="mixed:12", workload="io:3,net:1", profile_error=0.1)),
    Family("profile-error", "profiles off by a lognormal sigma of 0.8 (training: at most 0.5)",
           dict(cluster="standard:8", workload="drs", profile_error=0.8)),
    Family("very-stale", "usage sampled every 150 s, mostly older than max_usage_age (training: at most 90 s)",
           dict(cluster="standard:8", workload="drs", profile_error=0.1, sample_interval=150.0)),
    Family("no-profile", "learned profiles and half of pods without any (training: at most 30 %)",
           dict(cluster="mixed:12", workload="drs", profile="learned", unprofiled=0.5)),
)
_MULTI_LINKS = "/".join(str(n.net_mbit) for n in WORLDS["multi-resource"].nodes)
_VARIANT_WHY = (("under", "cpu requests 0.2 x use"), ("flat", "100 m cpu requested by every pod"),
                ("honest", "cpu requests = use up to 450 m"))
LAB = _families(*(
    Family(f"lab-{v}", f"the lab's 4 real nodes (0.25-1 core) and DRS mix, whole-core compute jobs, {why}",
           dict(cluster=LAB_CLUSTER, workload=lab_workload("drs", v), profile_error=0.0, sample_interval=10.0))
    for v, why in _VARIANT_WHY), *(
    Family(f"lab-mr-{v}", f"the lab's multi-resource world: links {_MULTI_LINKS} Mbit/s on 0.25-1 core, net jobs "
                          f"pulling through them, whole-core compute jobs, {why}",
           dict(cluster=MULTI_CLUSTER, workload=lab_workload("multi-resource", v), profile_error=0.0,
                sample_interval=10.0))
    for v, why in _VARIANT_WHY), *(
    Family(f"lab-mr-{v}-{frame}", f"lab-mr-{v} in the lab's isolated frame (nodes and jobs x {ISOLATED_SCALE:g}, "
                                  f"requests as the lab computes them){why}",
           dict(cluster=cluster, workload=lab_workload("multi-resource", v, node_scale=ISOLATED_SCALE),
                profile_error=0.0, sample_interval=10.0))
    for v, _ in _VARIANT_WHY for frame, cluster, why in (
        ("isolated", MULTI_ISOLATED_CLUSTER, ""),
        ("daemons", MULTI_LAB_CLUSTER, ", every node already holding the node-monitor DaemonSet pod's requests "
                                       "({} m, {} Mi): the lab as it ran".format(*MONITOR_POD_REQUESTS)))),
    Family("lab-misleading", "the lab's 4 real nodes and DRS mix, every job small enough for the smallest node "
                             "(compute capped at 60-250 m), cpu requests = use / a per-workload ratio drawn from the "
                             "Alibaba 2018 sample's (issue #21's misleading scenario)",
           dict(cluster=LAB_CLUSTER, workload=lab_workload("drs", "misleading", "small"), profile_error=0.0,
                sample_interval=10.0)),
    Family("lab-tenants", f"the lab's 4 real nodes and DRS mix, {TENANTS} seed-chosen nodes carrying a long-running "
                          "tenant that asks for 5 % of its node's cpu and uses 15-90 % of it in a duty cycle, the "
                          "batch jobs on top: every job small enough for the smallest node, cpu requests 0.2 x use "
                          "(issue #21's tenants scenario)",
           dict(cluster=LAB_CLUSTER, workload=lab_workload("drs", "under", "small"), tenants=TENANTS,
                profile_error=0.0, sample_interval=10.0)))
LAB_LOADS = (0.65, 1.0)
"""The lab's loads: its 12 jobs in 45 s offer 0.65 of the four nodes' 2.25 cores (``policy.sim.arrivals``'
definition); 1.0 stands for its busier seeds and for the two-core host, which gives the nodes less than
their quotas together."""
LAB_JOBS = RUN_JOBS
"""Jobs per lab episode: a lab run's (``policy.labworld.RUN_JOBS``)."""
SIZE_NODES = (100, 1000)
"""Cluster sizes of the size split (the test split: 8 to 32 nodes)."""
SIZE_JOBS_PER_NODE = 6.25
"""Jobs per node of a size family: large-hetero's 200 on 32 nodes, the test split's fewest per node. At a fixed
jobs per node an episode spans about the same time at every size (arrivals scale with capacity); the fewest,
because a 1,000-node episode's cost grows with its jobs."""
SIZE_BASES = ("large-hetero", "bursty", "no-profile")
"""The test families the size split grows: node mix, arrivals and profile quality, one each."""
SIZE = _families(*(
    Family(f"{base}-{n}", f"{TEST[base].why}, on {n:,} nodes",
           {**TEST[base].config, "cluster": scaled_cluster(TEST[base].config["cluster"], n),
            "n_jobs": round(SIZE_JOBS_PER_NODE * n)})
    for base in SIZE_BASES for n in SIZE_NODES))
SPLITS = {"validation": VALIDATION, "test": TEST, "lab": LAB, "size": SIZE}


def seeds(split: str, n: int, offset: int = 0) -> list[int]:
    """The ``n`` seeds of ``split`` starting ``offset`` into its range (``ValueError`` past its end)."""
    if split not in SEED_BASE:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SEED_BASE)}")
    if offset < 0 or n < 0 or offset + n > SPLIT_SIZE:
        raise ValueError(f"seeds {offset}..{offset + n - 1} are outside split {split!r} (0..{SPLIT_SIZE - 1})")
    return [SEED_BASE[split] + offset + i for i in range(n)]
