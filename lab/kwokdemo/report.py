"""What the KWOK demo prints: progress lines and the report tables. Text only, no I/O besides stdout.

The tables are built from plain data (the schedule, the placements read back from the API server, and
the extender's ``/debug/explain`` answers), so they can be checked without a cluster.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping

import numpy as np

from lab.kwokdemo.workload import POOLS, DemoNode, DemoPod, Summary, load_at
from policy.state import RESOURCES


class Out:
    """User-facing output: whole lines, and a progress line that rewrites itself on a terminal.

    Off a terminal (a log, a test), a progress line is printed at most every ``quiet_s`` seconds, so a
    ten-minute build leaves a few dozen lines rather than thousands.
    """

    def __init__(self, stream=None, *, quiet_s: float = 20.0) -> None:
        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty()
        self.quiet_s = quiet_s
        self._last = 0.0
        self._open = False

    def say(self, text: str = "") -> None:
        self._end_progress()
        self.stream.write(text + "\n")
        self.stream.flush()

    def progress(self, text: str, *, force: bool = False) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + text)
            self._open = True
        elif force or time.monotonic() - self._last >= self.quiet_s:
            self.stream.write(text + "\n")
            self._last = time.monotonic()
        self.stream.flush()

    def _end_progress(self) -> None:
        if self._open:
            self.stream.write("\n")
            self._open = False


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _bottleneck(features: Mapping[str, float]) -> str:
    """``cpu 83%``: the resource with the highest after-placement utilisation, from explain features."""
    r = max(RESOURCES, key=lambda r: features.get(f"after_util_{r}", 0.0))
    return f"{r} {pct(features.get(f'after_util_{r}', 0.0))}"


def drsched_view(explain: Mapping | None, decision: Mapping | None, *, top: int = 2) -> str:
    """The extender's top nodes for a pod: the score kube-scheduler got (explain's ``last_decision``) and the
    after-placement bottleneck from the features of an explain taken just before the pod was submitted."""
    if not explain:
        return "(no explain answer)"
    nodes = {n["name"]: n for n in explain.get("nodes") or []}
    scores = (decision or {}).get("scores") or {n: v["score"] for n, v in nodes.items()}
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], nodes.get(kv[0], {}).get("features", {})
                                                    .get("after_util_max", 0.0)))
    parts = [f"{short(name)} {score} ({_bottleneck(nodes[name]['features'])})" if name in nodes
             else f"{short(name)} {score}" for name, score in ranked[:top]]
    hot = [n for n in nodes.values() if n["filter"] != "passed"]
    if hot:
        reasons = sorted({n["filter"].split(":")[0] for n in hot})
        parts.append(f"{len(hot)} filtered ({', '.join(reasons)})")
    return ", ".join(parts)


def short(node_name: str) -> str:
    """``drsched-netfast-1`` -> ``netfast-1`` (the label shared by both pools)."""
    return node_name.split("-", 1)[1] if "-" in node_name else node_name


def pod_table(pods: list[DemoPod], nodes: list[DemoNode], placed: Mapping[str, Mapping[str, str]],
              decisions: Mapping[str, Mapping | None], explains: Mapping[str, Mapping | None]) -> list[str]:
    """Where each pod landed under each scheduler, the landed node's bottleneck after it, and drsched's view.

    ``placed[pool][pod] = node label``; ``decisions[pod]`` is explain's ``last_decision`` (the scores the
    scheduler actually got); ``explains[pod]`` the explain answer from just before submission.
    """
    lines = [f"{'pod':<7} {'cpu,net,disk':<14} {'drsched ->':<11} {'after':>9}   {'default ->':<11} {'after':>9}   "
             "drsched's view: top nodes, score (after-placement bottleneck)"]
    for pod in pods:
        c, _, n, d = pod.demand
        cells = []
        for pool in POOLS:
            label = placed.get(pool, {}).get(pod.name)
            if label is None:
                cells.append(f"{'(pending)':<11} {'':>9}")
                continue
            ld = load_at(pod.at, nodes, pods, placed[pool])
            util = ld.util[next(k for k, nd in enumerate(nodes) if nd.label == label)]
            r = int(np.argmax(util))
            flag = "!" if util[r] > 1.0 + 1e-9 else " "
            cells.append(f"{label:<11} {RESOURCES[r] + ' ' + pct(util[r]):>9}{flag}")
        demand = f"{c:.1f} {n:.0f} {d:.0f}"
        lines.append(f"{pod.name:<7} {demand:<14} {cells[0]}  {cells[1]}  "
                     f"{drsched_view(explains.get(pod.name), decisions.get(pod.name))}")
    return lines


def node_table(nodes: list[DemoNode], pods: list[DemoPod], placed: Mapping[str, Mapping[str, str]],
               at: float) -> list[str]:
    """Each node's load at schedule time ``at`` under both schedulers: pods, cpu requested, cpu/mem/net/disk
    utilisation (background + expected demand of running pods) and the bottleneck."""
    loads = {pool: load_at(at, nodes, pods, placed.get(pool, {})) for pool in POOLS}
    cell = f"{'pods':>4} {'cpu req':>7} {'cpu/mem/net/disk %':>18} {'max':>5} "
    lines = [f"{'':<11} {'':<17} {'':<10} | {'drsched':<{len(cell)}}| default",
             f"{'node':<11} {'cpu,GiB,net,disk':<17} {'background':<10} | {cell}| {cell}"]
    for i, node in enumerate(nodes):
        cap = node.capacity
        cells = []
        for pool in POOLS:
            ld = loads[pool]
            u = ld.util[i]
            flag = "!" if u.max() > 1.0 + 1e-9 else " "
            cells.append(f"{int(ld.pods[i]):>4} {pct(ld.requested[i, 0] / cap[0]):>7} "
                         f"{'/'.join(f'{100 * x:.0f}' for x in u):>18} {pct(u.max()):>5}{flag}")
        busy = f"busy {node.busy}" if node.busy else "idle"
        lines.append(f"{node.label:<11} {f'{cap[0]:g},{cap[1]:g},{cap[2]:g},{cap[3]:g}':<17} {busy:<10} | "
                     f"{cells[0]}| {cells[1]}")
    return lines


def summary_lines(summaries: Mapping[str, Summary]) -> list[str]:
    return [s.line(who) for who, s in summaries.items()]
