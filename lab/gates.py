"""Gates: did an arm measure what it claims? Host interference from the nodes' cgroup counters, and every
drsched pod scored by the extender. Parsers for the kernel files they read, and the rows of ``gates.csv``. Pure.

Why it exists: issue #21 found the host, not the nodes, to be the bottleneck (every node busy -> the kernel
split two cores equally whatever the quotas), and the extender's ``ignorable: true`` lets a timed-out score
fall back silently. A run like that measures something else, so it is flagged, left out of the summary and
rerun -- never silently kept (``lab.report`` reads ``gates.csv``).

Host interference, per node and per pair of consecutive samples (about a second apart) of its cgroup's
``cpu.stat`` and ``cpuacct.usage``:

    used_m    = 1000 * d(usage_ns) / 1e9 / dt
    throttled = d(nr_throttled) > 0               (the node hit its own quota in that interval)
    busy      = demand_m(node, t) >= BUSY_SHARE * quota_m    (its running jobs want the whole quota)
    low       = busy and not throttled and used_m < BELOW_SHARE * quota_m
    starved   = low and node_cpus_busy(interval) >= HOST_FULL    (no idle time on the nodes' CPUs)

A node that wanted its quota, was not held back by it, and still got less, while the CPUs it may run on had
no idle time, was held back by the host. Where those CPUs had idle time the kernel, whose CFS scheduler never
leaves a CPU idle while a thread of an unthrottled cgroup can run there, did not hold it back: its jobs
wanted less than their solo cpu at that moment (a job's nominal ``cpu_use_m`` is its mean alone; in the four
lab results with ``system.csv`` all 230 intervals the gate called starved before this rule had the node CPUs
at most 90 % busy: ``lab regate`` prints it per run). Those are counted as ``idle_cpu``, not starved. The
node CPUs' busy share comes from ``/proc/stat`` (``node_cpu_busy``: the CPUs whose role is "node", every
CPU where none is); without it (no system samples) every low interval counts as starved, as before. The arm
is flagged when starved / busy, over all nodes, exceeds ``max_share`` (5 %). ``demand_m`` comes from the arm's
own jobs.csv rows (``demand_from_jobs``): the solo cpu of each job between its start and finish on its
last node (a migrated job counts on its last node only). Counters that go backwards (a recreated cgroup) drop
that interval. ``/proc/stat`` per CPU (``parse_proc_stat``, ``busy_share``) says how busy the host's CPUs were.

Scored: every pod of a drsched arm must be among the pods the extender scored (``unscored``): the UIDs of
its decision log's serve rows, and of its filter rows (a filter that left the pod one node, so kube-scheduler
never asked for scores) (``lab.kube.Lab.scored_uids``; lab/README.md says why that log), and scored by the
arm's own policy (``off_policy``: none of its serve rows from another model version).

Placement: no system pod (anything outside the jobs' namespace but the monitor agents, which read their own
node by design) on a job node, and no process off its role's CPUs (``harness.placement.misplaced``)
(``system_pods_on_job_nodes``).

The system CPU set's use (``SystemSample``, ``system_use``): the system cgroups' ``cpuacct.usage`` and every
CPU's ``/proc/stat`` line, about once a second next to the node counters, for the report; no gate reads it.

Files: cgroup v1 ``cpu.stat`` (``nr_periods``, ``nr_throttled``, ``throttled_time`` in ns; ``nr_bursts``,
``burst_time`` where the kernel has CFS burst) and
``cpuacct.usage`` (ns); cgroup v2 ``cpu.stat`` (``usage_usec``, ``nr_throttled``, ``throttled_usec``) is read
too, its usage standing in for ``cpuacct.usage``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from lab.errors import LabError

BUSY_SHARE = 0.9
"""A node is busy when its running jobs' solo cpu is at least this share of its quota."""
BELOW_SHARE = 0.9
"""A busy node is starved when it used less than this share of its quota without being throttled."""
HOST_FULL = 0.95
"""The nodes' CPUs are full in an interval when at least this share of their time was busy (100 Hz ticks: a
one-second interval with five idle ticks is not full)."""
MAX_SHARE = 0.05
"""The most starved / busy samples an arm may have (issue #21: 5 %)."""
HOST_GATE = "host-interference"
"""The host-interference gate's name in ``gates.csv``."""


class GateError(LabError, ValueError):
    """A kernel counter file that does not parse; the message names the file, line and field."""


# ---- parsers -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CpuStat:
    """One read of a cgroup's ``cpu.stat``; ``usage_ns`` only from cgroup v2 (v1 keeps it in cpuacct.usage)."""

    nr_periods: int
    nr_throttled: int
    throttled_ns: int
    usage_ns: int | None = None
    nr_bursts: int | None = None
    """Periods in which the cgroup ran past its quota on burst credit (``cpu.cfs_burst_us``; None: no field)."""
    burst_ns: int | None = None
    """CPU time run on burst credit, beyond the quota."""


def _fields(text: str, *, path: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        parts = raw.split()
        if len(parts) != 2:
            raise GateError(f"{path}:{line}: expected 'key value', got {raw!r}")
        try:
            out[parts[0]] = int(parts[1])
        except ValueError:
            raise GateError(f"{path}:{line}: field {parts[0]!r}: {parts[1]!r} is not an integer") from None
    return out


def parse_cpu_stat(text: str, *, path: str = "cpu.stat") -> CpuStat:
    """A cgroup v1 or v2 ``cpu.stat``."""
    f = _fields(text, path=path)
    for key in ("nr_periods", "nr_throttled"):
        if key not in f:
            raise GateError(f"{path}: field {key!r} missing")
    if "throttled_time" in f:
        return CpuStat(f["nr_periods"], f["nr_throttled"], f["throttled_time"], nr_bursts=f.get("nr_bursts"),
                       burst_ns=f.get("burst_time"))
    if "throttled_usec" in f:
        usage, burst = f.get("usage_usec"), f.get("burst_usec")
        return CpuStat(f["nr_periods"], f["nr_throttled"], 1000 * f["throttled_usec"],
                       None if usage is None else 1000 * usage, nr_bursts=f.get("nr_bursts"),
                       burst_ns=None if burst is None else 1000 * burst)
    raise GateError(f"{path}: field 'throttled_time' (v1) or 'throttled_usec' (v2) missing")


def parse_cpuacct_usage(text: str, *, path: str = "cpuacct.usage") -> int:
    """A cgroup v1 ``cpuacct.usage``: nanoseconds of CPU used."""
    raw = text.strip()
    if not raw.isdigit():
        raise GateError(f"{path}:1: field 'usage': {raw!r} is not a whole number of nanoseconds")
    return int(raw)


@dataclass(frozen=True)
class CpuTimes:
    """One CPU's line of ``/proc/stat`` in clock ticks: busy (user, nice, system, irq, softirq, steal) and idle
    (idle, iowait); guest time is already inside user."""

    busy: int
    idle: int


def parse_proc_stat(text: str, *, path: str = "/proc/stat") -> dict[str, CpuTimes]:
    """Per-CPU times (``cpu0``, ``cpu1``, ...; the all-CPU ``cpu`` line is left out)."""
    out: dict[str, CpuTimes] = {}
    for line, raw in enumerate(text.splitlines(), start=1):
        parts = raw.split()
        if not parts or not parts[0].startswith("cpu") or parts[0] == "cpu":
            continue
        if not parts[0][3:].isdigit() or len(parts) < 5:
            raise GateError(f"{path}:{line}: expected 'cpuN user nice system idle ...', got {raw!r}")
        try:
            v = [int(x) for x in parts[1:]] + [0] * (8 - len(parts[1:]))
        except ValueError:
            raise GateError(f"{path}:{line}: field {parts[0]!r}: the times must be integers") from None
        user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
        out[parts[0]] = CpuTimes(busy=user + nice + system + irq + softirq + steal, idle=idle + iowait)
    if not out:
        raise GateError(f"{path}: no per-CPU lines (cpu0, cpu1, ...)")
    return out


def busy_share(before: Mapping[str, CpuTimes], after: Mapping[str, CpuTimes], cpus: Iterable[str]) -> float | None:
    """The share of ``cpus``' time that was busy between two reads (None: no time passed on them)."""
    busy = idle = 0
    for cpu in cpus:
        if cpu in before and cpu in after:
            busy += after[cpu].busy - before[cpu].busy
            idle += after[cpu].idle - before[cpu].idle
    total = busy + idle
    return busy / total if total > 0 and busy >= 0 and idle >= 0 else None


# ---- host interference ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeSample:
    """One node's counters at ``t_s`` seconds into the arm."""

    t_s: float
    node: str
    stat: CpuStat
    usage_ns: int


@dataclass(frozen=True)
class PodSample:
    """One pod cgroup's counters at ``t_s`` seconds into the arm (``lab.counters.pod_sampler``): its CPU time, and
    its own ``cpu.stat``, which stays at zero throttling while pods carry no CPU quota of their own
    (``cpuCFSQuota: false``: the node cgroup above them holds the quota)."""

    t_s: float
    node: str
    uid: str
    stat: CpuStat
    usage_ns: int


@dataclass(frozen=True)
class Interference:
    busy: int
    starved: int
    per_node: dict[str, tuple[int, int]]
    """node -> (busy, starved) intervals."""
    max_share: float = MAX_SHARE
    idle_cpu: int = 0
    """Busy intervals below the quota, unthrottled, while the node CPUs had idle time: not starved."""
    idle_cpu_busiest: float | None = None
    """The highest node-CPU busy share among those intervals (None: none)."""

    @property
    def share(self) -> float:
        return self.starved / self.busy if self.busy else 0.0

    @property
    def flagged(self) -> bool:
        return self.share > self.max_share


def interference(samples: Iterable[NodeSample], *, quota_m: Mapping[str, float],
                 demand_m: Callable[[str, float], float], max_share: float = MAX_SHARE,
                 cpu_busy: Callable[[float, float], float | None] | None = None) -> Interference:
    """Starved among busy intervals over every node (module docstring); nodes without a quota are skipped.
    ``cpu_busy(t0, t1)``: the node CPUs' busy share in that interval (``node_cpu_busy``; None, or a None
    answer: not known, the interval is judged without it)."""
    by_node: dict[str, list[NodeSample]] = defaultdict(list)
    for s in samples:
        by_node[s.node].append(s)
    per_node: dict[str, tuple[int, int]] = {}
    idle_busy: list[float] = []
    for node, series in sorted(by_node.items()):
        quota = quota_m.get(node)
        if not quota:
            continue
        busy = starved = 0
        series.sort(key=lambda s: s.t_s)
        for a, b in zip(series, series[1:], strict=False):
            dt, used_ns = b.t_s - a.t_s, b.usage_ns - a.usage_ns
            throttles = b.stat.nr_throttled - a.stat.nr_throttled
            if dt <= 0 or used_ns < 0 or throttles < 0:
                continue  # a clock or counter that went backwards: nothing to judge
            if demand_m(node, (a.t_s + b.t_s) / 2.0) < BUSY_SHARE * quota:
                continue
            busy += 1
            used_m = used_ns / 1e6 / dt
            if throttles or used_m >= BELOW_SHARE * quota:
                continue
            full = cpu_busy(a.t_s, b.t_s) if cpu_busy is not None else None
            if full is not None and full < HOST_FULL:
                idle_busy.append(full)
            else:
                starved += 1
        per_node[node] = (busy, starved)
    return Interference(busy=sum(b for b, _ in per_node.values()), starved=sum(s for _, s in per_node.values()),
                        per_node=per_node, max_share=max_share, idle_cpu=len(idle_busy),
                        idle_cpu_busiest=max(idle_busy, default=None))


def host_gate(counters: Iterable[NodeSample], system: Iterable[SystemSample], jobs: Iterable[Mapping], *,
              quota_m: Mapping[str, float], max_share: float = MAX_SHARE) -> Interference:
    """One run's host-interference gate from what it recorded: its nodes' counters, its system samples (the
    node CPUs' /proc/stat lines) and its jobs.csv rows (the demand); what ``lab run`` judges at the end of a run
    and ``lab regate`` judges again from the files."""
    return interference(counters, quota_m=quota_m, demand_m=demand_from_jobs(jobs), max_share=max_share,
                        cpu_busy=node_cpu_busy(system))


def demand_from_jobs(rows: Iterable[Mapping]) -> Callable[[str, float], float]:
    """demand_m(node, t) from one arm's jobs.csv rows: the summed ``cpu_use_m`` of its jobs running there."""
    spans: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for r in rows:
        try:
            spans[r["node"]].append((float(r["start_s"]), float(r["finish_s"]), float(r["cpu_use_m"])))
        except (TypeError, ValueError):
            continue  # a job that never ran or never finished wants nothing we can place in time

    def demand_m(node: str, t: float) -> float:
        return sum(cpu for start, finish, cpu in spans.get(node, ()) if start <= t < finish)

    return demand_m


# ---- the system CPU set's use ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemSample:
    """One read at ``t_s``: a system cgroup's ``usage_ns`` (``source`` its path, ``role`` "cgroup") or one CPU's
    /proc/stat ticks (``source`` "cpu1", ``role`` "system" or "node": which CPU set it is in, "" when none)."""

    t_s: float
    source: str
    role: str
    usage_ns: int | None = None
    times: CpuTimes | None = None


@dataclass(frozen=True)
class SystemUse:
    """Over one arm: the mean busy share of the system CPUs and of the node CPUs (None: no interval), and the
    system cgroups' mean use in millicores, per cgroup."""

    system_busy: float | None
    node_busy: float | None
    cgroup_m: dict[str, float]


def system_use(samples: Iterable[SystemSample]) -> SystemUse:
    """First to last sample of each source: busy ticks / all ticks per CPU set, d(usage_ns)/dt per cgroup
    (counters that went backwards are left out)."""
    first: dict[str, SystemSample] = {}
    last: dict[str, SystemSample] = {}
    for s in sorted(samples, key=lambda s: s.t_s):
        first.setdefault(s.source, s)
        last[s.source] = s
    busy = {"system": [0, 0], "node": [0, 0]}
    cgroup_m: dict[str, float] = {}
    for source, a in first.items():
        b = last[source]
        if a.times is not None and b.times is not None and a.role in busy:
            d_busy, d_idle = b.times.busy - a.times.busy, b.times.idle - a.times.idle
            if d_busy >= 0 and d_idle >= 0:
                busy[a.role][0] += d_busy
                busy[a.role][1] += d_busy + d_idle
        elif a.usage_ns is not None and b.usage_ns is not None and b.t_s > a.t_s and b.usage_ns >= a.usage_ns:
            cgroup_m[source] = round((b.usage_ns - a.usage_ns) / 1e6 / (b.t_s - a.t_s), 1)

    def share(role: str) -> float | None:
        done, total = busy[role]
        return done / total if total else None

    return SystemUse(system_busy=share("system"), node_busy=share("node"), cgroup_m=cgroup_m)


def node_cpu_busy(samples: Iterable[SystemSample]) -> Callable[[float, float], float | None] | None:
    """``cpu_busy(t0, t1)`` for ``interference``: the busy share of the node CPUs (role "node"; every CPU where no
    CPU has that role: a run without isolation) between the reads nearest ``t0`` and ``t1`` (they are taken a few
    ms after the node counters of the same tick; None where those are one read); None when the samples hold no
    CPU line."""
    reads: dict[str, list[tuple[float, CpuTimes]]] = defaultdict(list)
    roles: dict[str, str] = {}
    for s in samples:
        if s.times is not None:
            reads[s.source].append((s.t_s, s.times))
            roles[s.source] = s.role
    if not reads:
        return None
    cpus = [c for c, r in roles.items() if r == "node"] or list(reads)
    series = {c: sorted(reads[c], key=lambda x: x[0]) for c in cpus}
    stamps = {c: [t for t, _ in series[c]] for c in cpus}

    def cpu_busy(t0: float, t1: float) -> float | None:
        before, after = {}, {}
        for c in cpus:
            i, j = _nearest(stamps[c], t0), _nearest(stamps[c], t1)
            if j <= i:
                return None
            before[c], after[c] = series[c][i][1], series[c][j][1]
        return busy_share(before, after, cpus)

    return cpu_busy


def _nearest(stamps: list[float], t: float) -> int:
    i = bisect_left(stamps, t)
    return i - 1 if i == len(stamps) or (i > 0 and t - stamps[i - 1] <= stamps[i] - t) else i


def system_rows(samples: Iterable[SystemSample], *, seed: int, arm: str, variant: str) -> list[dict]:
    """``system.csv``: the samples, one row each."""
    return [{"seed": seed, "arm": arm, "variant": variant, "t_s": s.t_s, "source": s.source, "role": s.role,
             "usage_ns": "" if s.usage_ns is None else s.usage_ns,
             "busy_ticks": "" if s.times is None else s.times.busy,
             "idle_ticks": "" if s.times is None else s.times.idle} for s in samples]


def read_system_rows(rows: Iterable[Mapping]) -> list[SystemSample]:
    """``system.csv`` rows back into samples; a row that does not parse is a ``GateError`` naming its field."""
    out = []
    for i, r in enumerate(rows, start=2):
        try:
            usage = int(r["usage_ns"]) if r.get("usage_ns") not in ("", None) else None
            times = (CpuTimes(busy=int(r["busy_ticks"]), idle=int(r["idle_ticks"]))
                     if r.get("busy_ticks") not in ("", None) else None)
            out.append(SystemSample(t_s=float(r["t_s"]), source=r["source"], role=r.get("role") or "",
                                    usage_ns=usage, times=times))
        except (KeyError, TypeError, ValueError) as exc:
            raise GateError(f"system.csv:{i}: a row that does not parse ({exc})") from None
    return out


def read_counter_rows(rows: Iterable[Mapping]) -> list[NodeSample]:
    """``counters.csv`` rows (``lab.records.counter_rows``) back into samples; a row that does not parse is a
    ``GateError`` naming its line."""
    out = []
    for i, r in enumerate(rows, start=2):
        try:
            bursts = r.get("nr_bursts")
            stat = CpuStat(nr_periods=int(r["nr_periods"]), nr_throttled=int(r["nr_throttled"]),
                           throttled_ns=int(r["throttled_ns"]),
                           nr_bursts=int(bursts) if bursts not in ("", None) else None,
                           burst_ns=int(r["burst_ns"]) if r.get("burst_ns") not in ("", None) else None)
            out.append(NodeSample(t_s=float(r["t_s"]), node=r["node"], stat=stat, usage_ns=int(r["usage_ns"])))
        except (KeyError, TypeError, ValueError) as exc:
            raise GateError(f"counters.csv:{i}: a row that does not parse ({exc})") from None
    return out


# ---- scored ----------------------------------------------------------------------------------------------


def unscored(pods: Iterable[str], scored: Iterable[str]) -> list[str]:
    """The arm's pods the extender never scored, sorted."""
    return sorted(set(pods) - set(scored))


def off_policy(served: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """pod -> the policy versions that scored it, for each of an arm's pods (``served``: pod -> the model versions
    of its serve rows) scored by any version but the arm's own, taken as the one that scored most of its pods.
    Such a pod was placed by the previous arm's policy: its extender still answered for a moment after the
    rollout (seen in the headline run, 2026-12-07: the first pod of 5 of 30 arms)."""
    count: dict[str, int] = {}
    for versions in served.values():
        for v in set(versions):
            count[v] = count.get(v, 0) + 1
    if not count:
        return {}
    own = max(sorted(count), key=lambda v: count[v])
    return {pod: ", ".join(sorted(set(vs) - {own})) for pod, vs in sorted(served.items()) if set(vs) - {own}}


# ---- placement -------------------------------------------------------------------------------------------

AGENT_PREFIX = "drsched-system/drsched-monitor-"
"""The monitor agents' pods (a DaemonSet in drsched-system): node agents, on the job nodes by design."""


def system_pods_on_job_nodes(pods: Iterable[tuple[str, str]], *, job_nodes: Iterable[str],
                             jobs_namespace: str) -> list[str]:
    """``"ns/name on node"`` for each (``ns/name``, node) pod that is neither a job (``jobs_namespace``) nor a
    monitor agent and runs on a job node, sorted."""
    nodes = set(job_nodes)
    return sorted(f"{pod} on {node}" for pod, node in pods
                  if node in nodes and not pod.startswith(f"{jobs_namespace}/") and not pod.startswith(AGENT_PREFIX))


# ---- gates.csv -------------------------------------------------------------------------------------------


def gate_rows(*, seed: int, arm: str, variant: str, host: Interference | None = None,
              missing: list[str] | None = None, pods: int = 0, misplaced: list[str] | None = None) -> list[dict]:
    """``gates.csv`` rows for one run: one per gate that was checked (None: not checked, no row)."""
    rows = []
    if host is not None:
        nodes = ", ".join(f"{n} {s}/{b}" for n, (b, s) in host.per_node.items() if b)
        rows.append({"seed": seed, "arm": arm, "variant": variant, "gate": HOST_GATE,
                     "flagged": int(host.flagged), "value": round(host.share, 4),
                     "detail": f"{host.starved} of {host.busy} busy samples below {100 * BELOW_SHARE:.0f} % of "
                               f"quota without throttling, the node CPUs full (limit {100 * host.max_share:g} %); "
                               f"{nodes or 'no busy samples'}"
                               + (f"; {host.idle_cpu} more below quota while the node CPUs had idle time (at most "
                                  f"{100 * host.idle_cpu_busiest:.0f} % busy; its jobs wanted less: not starved)"
                                  if host.idle_cpu else "")})
    if missing is not None:
        rows.append({"seed": seed, "arm": arm, "variant": variant, "gate": "scored", "flagged": int(bool(missing)),
                     "value": len(missing),
                     "detail": (f"unscored: {len(missing)} of {pods} pods not scored by the arm's policy: "
                                + " ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
                                if missing else f"all {pods} pods scored")})
    if misplaced is not None:
        rows.append({"seed": seed, "arm": arm, "variant": variant, "gate": "placement",
                     "flagged": int(bool(misplaced)), "value": len(misplaced),
                     "detail": ("; ".join(misplaced[:3]) + (f"; and {len(misplaced) - 3} more" if len(misplaced) > 3
                                                            else "") if misplaced
                                else "no system pod on a job node, every process on its CPU set")})
    return rows


def flagged_runs(rows: Iterable[Mapping]) -> dict[tuple[int, str, str], list[str]]:
    """(seed, arm, variant) -> why it is flagged, from ``gates.csv`` rows; unflagged runs are absent."""
    out: dict[tuple[int, str, str], list[str]] = {}
    for r in rows:
        if str(r.get("flagged", "")).strip() in ("1", "True", "true"):
            out.setdefault((int(r["seed"]), r["arm"], r["variant"]), []).append(f"{r['gate']}: {r['detail']}")
    return out
