"""Reading the lab's CSV files (``jobs.csv``, ``nodes.csv``, ``events.csv``, ``usage.csv``, ``system.csv``) into
typed records.

Why it exists: a calibration is only as good as the measurements it reads, so a malformed file stops it
with a ``LabDataError`` naming the file, the line and the field, instead of a number silently taken as
zero. The files' columns are the lab's world (``policy.labworld``); a ``jobs.csv`` needs its run columns
only (the cost columns came later). Units stay the lab's (millicores, MiB, Mbit/s, MB/s, seconds);
``policy.calibrate.replay`` converts. The module owns no state.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

from policy.labworld import EVENT_COLUMNS, JOB_RUN_COLUMNS, NODE_COLUMNS, SYSTEM_COLUMNS, USAGE_COLUMNS

_USAGE_READ = USAGE_COLUMNS[:USAGE_COLUMNS.index("cpu_m") + 1]
"""The ``usage.csv`` columns read here (the job pods' cpu per node and sample); the rest may be absent."""
_OPTIONAL = {"t_s", "finish_s", "exit_code", "solo_s", "jct_s", "run_slowdown", "slowdown", "start_s", "work",
             "submit_s"}


class LabDataError(ValueError):
    """A lab file that cannot be used: ``path``, 1-based ``line`` (0: the file as a whole) and ``field``."""

    def __init__(self, path: Path, line: int, field: str, message: str) -> None:
        self.path, self.line, self.field = path, line, field
        where = f"{path}" + (f" line {line}" if line else "") + (f", field {field!r}" if field else "")
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True, slots=True)
class LabJob:
    """One measured job (a ``jobs.csv`` row); absent optional numbers are NaN."""

    seed: int
    arm: str
    variant: str
    job: str
    kind: str
    node: str
    node_type: str
    cpu_request_m: float
    mem_request_mi: float
    cpu_use_m: float
    mem_use_mi: float
    net_mbit: float
    io_mbps: float
    submit_s: float
    start_s: float
    finish_s: float
    exit_code: float
    solo_s: float
    run_slowdown: float
    migrations: int

    @property
    def run(self) -> tuple[int, str, str]:
        return (self.seed, self.arm, self.variant)

    @property
    def scored(self) -> bool:
        """Whether the job's measured run slowdown can be compared with a prediction: it ran to exit 0 on
        one node, with a measured solo runtime."""
        return (self.exit_code == 0 and self.migrations == 0 and self.solo_s > 0 and math.isfinite(self.start_s)
                and math.isfinite(self.finish_s) and math.isfinite(self.run_slowdown))


@dataclass(frozen=True, slots=True)
class LabNode:
    node: str
    node_type: str
    cpu_quota_m: float
    mem_mi: float
    net_mbit: float


@dataclass(frozen=True, slots=True)
class LabEvent:
    """One ``events.csv`` row. ``quota_m`` is the node's new cpu quota for a ``cpu_quota*`` event (value
    ``"1000->200"`` or ``"200"``), else None; other events (migrations, restores) are kept as text."""

    seed: int
    arm: str
    t_s: float
    node: str
    event: str
    value: str
    quota_m: float | None = None


def _number(path: Path, line: int, field: str, text: str, *, integer: bool = False) -> float:
    text = (text or "").strip()
    if not text and field in _OPTIONAL:
        return math.nan
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        raise LabDataError(path, line, field, f"not {'an integer' if integer else 'a number'}: {text!r}") from None
    if not integer and not math.isfinite(value):
        raise LabDataError(path, line, field, f"not finite: {text!r}")
    if value < 0 and field not in ("exit_code", "value"):
        raise LabDataError(path, line, field, f"must be >= 0, got {text!r}")
    return value


def _rows(path: Path, columns: tuple[str, ...]):
    try:
        fh = path.open(newline="")
    except OSError as exc:
        raise LabDataError(path, 0, "", f"cannot read: {exc.strerror or exc}") from None
    with fh:
        reader = csv.DictReader(fh)
        missing = [c for c in columns if c not in (reader.fieldnames or ())]
        if missing:
            raise LabDataError(path, 1, missing[0], f"header lacks column(s) {', '.join(missing)}")
        for row in reader:
            if None in row or any(row[c] is None for c in columns):
                raise LabDataError(path, reader.line_num, "", f"has {len(row) - (None in row)} fields, "
                                   f"the header {len(reader.fieldnames)}")
            yield reader.line_num, row


def read_jobs(path: Path) -> list[LabJob]:
    """Every row of a ``jobs.csv``; ``LabDataError`` on the first bad one."""
    out = []
    ints = {"seed", "migrations"}
    texts = {"arm", "variant", "job", "kind", "node", "node_type"}
    for line, row in _rows(path, JOB_RUN_COLUMNS):
        vals = {}
        for name in LabJob.__slots__:
            text = row[name]
            if name in texts:
                if not text.strip() and name in ("arm", "job", "kind"):
                    raise LabDataError(path, line, name, "is empty")
                vals[name] = text.strip()
            elif name == "exit_code":
                vals[name] = _number(path, line, name, text, integer=bool(text.strip()))
            else:
                vals[name] = _number(path, line, name, text, integer=name in ints)
        out.append(LabJob(**vals))
    if not out:
        raise LabDataError(path, 0, "", "has no jobs")
    return out


def read_nodes(path: Path) -> dict[str, LabNode]:
    """The nodes of a ``nodes.csv`` by name; a quota or memory of 0 is refused."""
    out = {}
    for line, row in _rows(path, NODE_COLUMNS):
        node = LabNode(row["node"].strip(), row["node_type"].strip(),
                       *(_number(path, line, c, row[c]) for c in NODE_COLUMNS[2:]))
        for c in ("cpu_quota_m", "mem_mi"):
            if not getattr(node, c) > 0:
                raise LabDataError(path, line, c, f"must be > 0, got {row[c]!r}")
        out[node.node] = node
    if not out:
        raise LabDataError(path, 0, "", "has no nodes")
    return out


def read_events(path: Path) -> list[LabEvent]:
    """The rows of an ``events.csv``; a missing file is no events. A quota event needs a time and a quota."""
    if not path.exists():
        return []
    out = []
    for line, row in _rows(path, EVENT_COLUMNS):
        ev = LabEvent(int(_number(path, line, "seed", row["seed"], integer=True)), row["arm"].strip(),
                      _number(path, line, "t_s", row["t_s"]), row["node"].strip(), row["event"].strip(),
                      row["value"].strip())
        if ev.event.startswith("cpu_quota"):
            if not math.isfinite(ev.t_s):
                raise LabDataError(path, line, "t_s", f"a {ev.event} event needs a time")
            quota = _number(path, line, "value", ev.value.rpartition("->")[2])
            if not quota > 0:
                raise LabDataError(path, line, "value", f"the new quota must be > 0, got {ev.value!r}")
            ev = LabEvent(ev.seed, ev.arm, ev.t_s, ev.node, ev.event, ev.value, quota)
        out.append(ev)
    return out


@dataclass(frozen=True)
class LabRuns:
    """One results directory: its jobs, nodes and events."""

    path: Path
    jobs: list[LabJob]
    nodes: dict[str, LabNode]
    events: list[LabEvent]
    usage: dict[tuple[int, str, str], list[tuple[float, float]]] = field(default_factory=dict)
    """Per run, (t_s, cpu millicores all nodes' pods used in the sample ending then), from ``usage.csv``."""
    node_usage: dict[tuple[int, str, str], list[tuple[float, dict[str, float]]]] = field(default_factory=dict)
    """Per run, (t_s, node -> cpu millicores its pods used in the sample ending then), from ``usage.csv``."""
    system_ticks: dict[tuple[int, str, str], list[tuple[float, int, int]]] = field(default_factory=dict)
    """Per run, (t_s, busy ticks, idle ticks) of the system CPUs together, cumulative, from ``system.csv``."""

    @property
    def seeds(self) -> list[int]:
        return sorted({j.seed for j in self.jobs})


def read_node_usage(path: Path) -> dict[tuple[int, str, str], list[tuple[float, dict[str, float]]]]:
    """Per (seed, arm, variant), each node's pods' cpu use at each sample time of a ``usage.csv``, time-ordered;
    none if the file is missing."""
    if not path.exists():
        return {}
    out: dict[tuple[int, str, str], dict[float, dict[str, float]]] = {}
    for line, row in _rows(path, _USAGE_READ):
        run = (int(_number(path, line, "seed", row["seed"], integer=True)), row["arm"].strip(), row["variant"].strip())
        t = _number(path, line, "t_s", row["t_s"])
        by_node = out.setdefault(run, {}).setdefault(t, {})
        node = row["node"].strip()
        by_node[node] = by_node.get(node, 0.0) + _number(path, line, "cpu_m", row["cpu_m"])
    return {run: sorted(by_t.items()) for run, by_t in out.items()}


def read_system_ticks(path: Path) -> dict[tuple[int, str, str], list[tuple[float, int, int]]]:
    """Per (seed, arm, variant), the ``/proc/stat`` busy and idle ticks of the CPUs a ``system.csv`` labels
    ``system`` (the host's own CPU set under isolation), summed over them at each read, time-ordered; none if
    the file is missing. A read missing one of the CPUs is left out, so every sum covers the same CPUs."""
    if not path.exists():
        return {}
    reads: dict[tuple[int, str, str], dict[float, dict[str, tuple[int, int]]]] = {}
    for line, row in _rows(path, SYSTEM_COLUMNS):
        if row["role"].strip() != "system":
            continue
        run = (int(_number(path, line, "seed", row["seed"], integer=True)), row["arm"].strip(), row["variant"].strip())
        t = _number(path, line, "t_s", row["t_s"])
        ticks = tuple(int(_number(path, line, c, row[c], integer=True)) for c in ("busy_ticks", "idle_ticks"))
        reads.setdefault(run, {}).setdefault(t, {})[row["source"].strip()] = ticks
    out = {}
    for run, by_t in reads.items():
        cpus = set().union(*by_t.values())
        out[run] = [(t, sum(v[0] for v in got.values()), sum(v[1] for v in got.values()))
                    for t, got in sorted(by_t.items()) if set(got) == cpus]
    return out


def read_results(directory: Path) -> LabRuns:
    """Read ``jobs.csv``, ``nodes.csv`` and (if present) ``events.csv``, ``usage.csv`` and ``system.csv`` of a
    results directory; every job's node must be in ``nodes.csv``."""
    jobs = read_jobs(directory / "jobs.csv")
    nodes = read_nodes(directory / "nodes.csv")
    for k, j in enumerate(jobs):
        if j.node not in nodes and math.isfinite(j.start_s):
            raise LabDataError(directory / "jobs.csv", k + 2, "node", f"{j.node!r} is not in nodes.csv")
    node_usage = read_node_usage(directory / "usage.csv")
    usage = {run: [(t, sum(by_node.values())) for t, by_node in samples] for run, samples in node_usage.items()}
    return LabRuns(directory, jobs, nodes, read_events(directory / "events.csv"), usage, node_usage,
                   read_system_ticks(directory / "system.csv"))
