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
    starved   = busy and not throttled and used_m < BELOW_SHARE * quota_m

A node that wanted its quota, was not held back by it, and still got less was held back by the host. The
arm is flagged when starved / busy, over all nodes, exceeds ``max_share`` (5 %). ``demand_m`` comes from the
arm's own jobs.csv rows (``demand_from_jobs``): the solo cpu of each job between its start and finish on its
last node (a migrated job counts on its last node only). Counters that go backwards (a recreated cgroup) drop
that interval. ``/proc/stat`` per CPU (``parse_proc_stat``, ``busy_share``) says how busy the host's CPUs were.

Scored: every pod of a drsched arm must be in the extender's list of pods it scored (``unscored``).

Files: cgroup v1 ``cpu.stat`` (``nr_periods``, ``nr_throttled``, ``throttled_time`` in ns) and
``cpuacct.usage`` (ns); cgroup v2 ``cpu.stat`` (``usage_usec``, ``nr_throttled``, ``throttled_usec``) is read
too, its usage standing in for ``cpuacct.usage``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from lab.errors import LabError

BUSY_SHARE = 0.9
"""A node is busy when its running jobs' solo cpu is at least this share of its quota."""
BELOW_SHARE = 0.9
"""A busy node is starved when it used less than this share of its quota without being throttled."""
MAX_SHARE = 0.05
"""The most starved / busy samples an arm may have (issue #21: 5 %)."""


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
        return CpuStat(f["nr_periods"], f["nr_throttled"], f["throttled_time"])
    if "throttled_usec" in f:
        usage = f.get("usage_usec")
        return CpuStat(f["nr_periods"], f["nr_throttled"], 1000 * f["throttled_usec"],
                       None if usage is None else 1000 * usage)
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
class Interference:
    busy: int
    starved: int
    per_node: dict[str, tuple[int, int]]
    """node -> (busy, starved) intervals."""
    max_share: float = MAX_SHARE

    @property
    def share(self) -> float:
        return self.starved / self.busy if self.busy else 0.0

    @property
    def flagged(self) -> bool:
        return self.share > self.max_share


def interference(samples: Iterable[NodeSample], *, quota_m: Mapping[str, float],
                 demand_m: Callable[[str, float], float], max_share: float = MAX_SHARE) -> Interference:
    """Starved among busy intervals over every node (module docstring); nodes without a quota are skipped."""
    by_node: dict[str, list[NodeSample]] = defaultdict(list)
    for s in samples:
        by_node[s.node].append(s)
    per_node: dict[str, tuple[int, int]] = {}
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
            starved += int(throttles == 0 and used_m < BELOW_SHARE * quota)
        per_node[node] = (busy, starved)
    return Interference(busy=sum(b for b, _ in per_node.values()), starved=sum(s for _, s in per_node.values()),
                        per_node=per_node, max_share=max_share)


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


# ---- scored ----------------------------------------------------------------------------------------------


def unscored(pods: Iterable[str], scored: Iterable[str]) -> list[str]:
    """The arm's pods the extender never scored, sorted."""
    return sorted(set(pods) - set(scored))


# ---- gates.csv -------------------------------------------------------------------------------------------


def gate_rows(*, seed: int, arm: str, variant: str, host: Interference | None = None,
              missing: list[str] | None = None, pods: int = 0) -> list[dict]:
    """``gates.csv`` rows for one run: one per gate that was checked (None: not checked, no row)."""
    rows = []
    if host is not None:
        nodes = ", ".join(f"{n} {s}/{b}" for n, (b, s) in host.per_node.items() if b)
        rows.append({"seed": seed, "arm": arm, "variant": variant, "gate": "host-interference",
                     "flagged": int(host.flagged), "value": round(host.share, 4),
                     "detail": f"{host.starved} of {host.busy} busy samples below {100 * BELOW_SHARE:.0f} % of "
                               f"quota without throttling (limit {100 * host.max_share:g} %); "
                               f"{nodes or 'no busy samples'}"})
    if missing is not None:
        rows.append({"seed": seed, "arm": arm, "variant": variant, "gate": "scored", "flagged": int(bool(missing)),
                     "value": len(missing), "detail": (f"{len(missing)} of {pods} pods not scored: "
                                                       + " ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
                                                       if missing else f"all {pods} pods scored")})
    return rows


def flagged_runs(rows: Iterable[Mapping]) -> dict[tuple[int, str, str], list[str]]:
    """(seed, arm, variant) -> why it is flagged, from ``gates.csv`` rows; unflagged runs are absent."""
    out: dict[tuple[int, str, str], list[str]] = {}
    for r in rows:
        if str(r.get("flagged", "")).strip() in ("1", "True", "true"):
            out.setdefault((int(r["seed"]), r["arm"], r["variant"]), []).append(f"{r['gate']}: {r['detail']}")
    return out
