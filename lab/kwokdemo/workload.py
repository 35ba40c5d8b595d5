"""The KWOK demo's cluster and workload as plain data: nodes, their background load, a seeded list of pods,
and the load every node carries at any moment of it. No I/O: ``lab.kwokdemo.demo`` turns these into
Kubernetes objects and a usage file, and feeds placements back in.

Node types and job classes are the simulator's (``policy.sim``), so the pods the demo submits look like
the ones the shipped model was trained on. Two identical node pools are made, ``drsched-*`` and
``default-*``: the same pods go to each pool at the same moment, one copy scheduled by drsched and one by
the stock default-scheduler, so the two placements can be compared on equal terms.

Why ``make_pods`` and not the lab's ``lab.schedule.make_schedule``: both draw a seeded DRS mix arriving as a
Poisson process, but of different worlds. The lab's schedule is real jobs of the lab's world
(``policy.labworld`` templates: units of work, millicore requests, a ``schedule.csv`` every arm replays), whose
run time nobody knows until it is measured. These are KWOK pods of the simulator's job classes
(``policy.sim.jobs``: a demand vector in policy units that the usage file reports, and a ``run_for`` after
which KWOK completes the pod), drawn with the simulator's own samplers from the generator that drew the nodes;
no lab job fits them. So the lab keeps the one ``make_schedule`` and this module says what it makes.

Load of a node at time t (policy units: cores, GiB, MB/s, MB/s) = its background usage + the expected
demand of the pods placed on it that are running at t (arrived, not yet finished). That is the
extender's own estimate (``policy.features.estimated_usage``: a fresh sample + the demand of pods placed
since), so the numbers in the report are the ones drsched decided on. The default scheduler sees only
requests. ``usage_file`` plays the node agents: it reports that same load to the extender's static usage
provider while the demo runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from policy.sim.arrivals import poisson_times
from policy.sim.cluster import NODE_TYPES
from policy.sim.jobs import parse_mix, sample_mix
from policy.sim.metrics import imbalance
from policy.state import RESOURCES

POOLS = ("drsched", "default")
TYPE_CYCLE = ("standard", "compute", "netfast", "small")
# Background usage as fractions of capacity (cpu, mem, net, disk). A busy node stays under the extender's
# 65 % cpu hot threshold, so drsched may still use it but should prefer not to.
IDLE_LEVEL = ((0.05, 0.15), (0.15, 0.30), (0.02, 0.10), (0.02, 0.10))
BUSY_LEVEL = {"cpu": (0, (0.45, 0.58)), "net": (2, (0.60, 0.80)), "disk": (3, (0.60, 0.80))}
BUSY_CYCLE = ("cpu", "net", "disk")


@dataclass(frozen=True)
class DemoNode:
    """One node shape of the demo; it exists once in each pool (``name(pool)``)."""

    label: str                  # e.g. "netfast-1", the same in both pools
    kind: str                   # a policy.sim node type
    capacity: np.ndarray        # (4,) cores, GiB, MB/s, MB/s
    max_pods: int
    background: np.ndarray      # (4,) usage that no pod of the demo accounts for
    busy: str                   # "cpu" / "net" / "disk" / "" (which resource the background loads)

    def name(self, pool: str) -> str:
        return f"{pool}-{self.label}"


@dataclass(frozen=True)
class DemoPod:
    """One pod of the demo: arrives at ``at`` seconds, runs ``run_for`` seconds once Running."""

    name: str
    kind: str                   # cpu / net / io (the simulator's DRS classes)
    at: float
    run_for: float
    requests: tuple[float, float]
    demand: tuple[float, float, float, float]

    @property
    def profile(self) -> str:
        """The ``drsched.io/profile`` annotation value, in policy units."""
        c, m, n, d = self.demand
        return f"cpu={c:.2f},mem={m:.2f},net={n:.1f},disk={d:.1f}"


def make_nodes(n: int, rng: np.random.Generator) -> list[DemoNode]:
    """``n`` nodes cycling through TYPE_CYCLE; about half of them (at least one) busy on one resource."""
    if n < 1:
        raise ValueError(f"need at least one node, got {n}")
    counts: dict[str, int] = {}
    busy_rows = set(rng.permutation(n)[: max(1, n // 2)].tolist())
    nodes, b = [], 0
    for i in range(n):
        kind = TYPE_CYCLE[i % len(TYPE_CYCLE)]
        counts[kind] = counts.get(kind, 0) + 1
        shape = NODE_TYPES[kind]
        cap = np.asarray(shape.capacity, dtype=np.float64)
        frac = np.array([rng.uniform(lo, hi) for lo, hi in IDLE_LEVEL])
        busy = ""
        if i in busy_rows:
            busy = BUSY_CYCLE[b % len(BUSY_CYCLE)]
            b += 1
            r, (lo, hi) = BUSY_LEVEL[busy]
            frac[r] = rng.uniform(lo, hi)
        nodes.append(DemoNode(label=f"{kind}-{counts[kind]}", kind=kind, capacity=cap, max_pods=shape.max_pods,
                              background=np.round(frac * cap, 3), busy=busy))
    return nodes


def make_pods(n: int, rng: np.random.Generator, *, submit_s: float, run_for_s: float) -> list[DemoPod]:
    """``n`` pods of the DRS mix (cpu, net, io) arriving as a Poisson process over about ``submit_s`` seconds.

    Each pod runs for its job's work rescaled so the median job runs ``run_for_s`` (sim jobs are 60 s of
    work), at least 5 s; expected demand = true demand (exact profiles: the demo is about placement).
    """
    if n < 1:
        raise ValueError(f"need at least one pod, got {n}")
    jobs = sample_mix(parse_mix("drs"), n, rng)
    times = poisson_times(n, n / submit_s, rng) if n > 1 else np.zeros(1)
    times = times - times[0]
    return [
        DemoPod(name=f"{job.kind}-{i + 1:02d}", kind=job.kind, at=round(float(t), 2),
                run_for=max(5.0, round(job.work / 60.0 * run_for_s)), requests=job.requests,
                demand=tuple(round(float(x), 2) for x in job.demand))
        for i, (job, t) in enumerate(zip(jobs, times, strict=True))
    ]


def usage_file(nodes: list[DemoNode], pods: list[DemoPod], running: dict[str, dict[str, tuple[str, float]]],
               *, now: float, ramp_s: float) -> dict:
    """What a node agent would report, as the static usage provider's file (``load_usage`` schema).

    Per node of both pools: background + the demand of the pods ``running[pool][pod] = (node label, since)``
    that have run for ``ramp_s`` seconds. Younger pods are left to the extender, which counts pods bound
    within ``assume_grace_s`` of a sample as "assumed" on top of it, so they are neither missed nor counted
    twice for long.
    """
    demand = {p.name: np.asarray(p.demand) for p in pods}
    usage = {}
    for pool in POOLS:
        load = {node.label: node.background.astype(np.float64) for node in nodes}
        for pod, (label, since) in running.get(pool, {}).items():
            if now - since >= ramp_s and label in load and pod in demand:
                load[label] = load[label] + demand[pod]
        for node in nodes:
            c, m, n, d = load[node.label]
            usage[node.name(pool)] = {"cpu": f"{c:.3f}", "memory": f"{m:.3f}Gi", "net": f"{n:.1f}M",
                                      "disk": f"{d:.1f}M"}
    return {"usage": usage}


@dataclass(frozen=True)
class Load:
    """Every node's load at one moment (rows follow the node list)."""

    at: float
    pods: np.ndarray            # (N,) running pods
    requested: np.ndarray       # (N, 2) cpu, mem requests of running pods
    usage: np.ndarray           # (N, 4) background + expected demand of running pods
    capacity: np.ndarray        # (N, 4)

    @property
    def util(self) -> np.ndarray:
        return self.usage / self.capacity

    @property
    def bottleneck(self) -> np.ndarray:
        """(N,) max over resources of utilisation."""
        return self.util.max(axis=1)


def load_at(t: float, nodes: list[DemoNode], pods: list[DemoPod], placement: dict[str, str]) -> Load:
    """Load at schedule time ``t``; ``placement`` maps pod name -> node label (unplaced pods are left out)."""
    row = {node.label: i for i, node in enumerate(nodes)}
    n = len(nodes)
    count, req = np.zeros(n), np.zeros((n, 2))
    usage = np.array([node.background for node in nodes], dtype=np.float64)
    for pod in pods:
        label = placement.get(pod.name)
        if label is None or not (pod.at <= t < pod.at + pod.run_for):
            continue
        i = row[label]
        count[i] += 1
        req[i] += pod.requests
        usage[i] += pod.demand
    return Load(at=t, pods=count, requested=req, usage=usage, capacity=np.array([nd.capacity for nd in nodes]))


def busiest_moment(pods: list[DemoPod]) -> float:
    """The arrival time right after which the most pods run (earliest on ties): one moment for both pools."""
    best, best_t = -1, 0.0
    for p in pods:
        live = sum(1 for q in pods if q.at <= p.at < q.at + q.run_for)
        if live > best:
            best, best_t = live, p.at
    return best_t


@dataclass(frozen=True)
class Summary:
    """One scheduler's placement over the whole schedule, sampled at every arrival."""

    placed: int
    peak_bottleneck: float      # highest node utilisation (any resource) at any arrival
    mean_max_bottleneck: float  # the hottest node's utilisation, averaged over arrivals
    overloaded_arrivals: int    # arrivals after which some node was over 100 % on some resource
    imbalance: float            # policy.sim.metrics.imbalance, averaged over arrivals
    hottest: str                # node label and resource of the peak

    def line(self, who: str) -> str:
        return (f"{who:<9} placed {self.placed:>3}  peak node {100 * self.peak_bottleneck:5.0f}% ({self.hottest})  "
                f"hottest node on average {100 * self.mean_max_bottleneck:4.0f}%  over 100% after "
                f"{self.overloaded_arrivals} arrival(s)  imbalance {self.imbalance:.3f}")


def summarize(nodes: list[DemoNode], pods: list[DemoPod], placement: dict[str, str]) -> Summary:
    loads = [load_at(p.at, nodes, pods, placement) for p in pods]
    maxes = np.array([ld.bottleneck.max() for ld in loads])
    k = int(maxes.argmax())
    util = loads[k].util
    i, r = np.unravel_index(int(util.argmax()), util.shape)
    return Summary(
        placed=sum(1 for p in pods if p.name in placement),
        peak_bottleneck=float(maxes[k]),
        mean_max_bottleneck=float(maxes.mean()),
        overloaded_arrivals=int(np.sum(maxes > 1.0 + 1e-9)),
        imbalance=float(np.mean([imbalance(ld.usage, ld.capacity) for ld in loads])),
        hottest=f"{nodes[i].label} {RESOURCES[r]}",
    )
