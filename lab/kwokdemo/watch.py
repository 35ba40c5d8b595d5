"""The KWOK demo's eyes on its pods: where they landed, which still run, and the usage file that follows from it.

Each ``tick`` lists the demo's two namespaces once and rewrites the usage file the extender's static usage
provider reads (``lab.kwokdemo.workload.usage_file``: what node agents would measure). It owns the placements it
has seen (kept after a pod completes), the running pods with the time they were first seen bound, and the
completion counts; ``lab.kwokdemo.demo`` owns the processes.
"""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from harness.cluster import ControlPlane
from lab.kwokdemo.workload import POOLS, DemoNode, DemoPod, usage_file

NAMESPACES = {"drsched": "demo-drsched", "default": "demo-default"}
RAMP_S = 4.0  # a pod shows in the usage file after this long (< the extender's assume_grace_s, 5 s)


class PodWatch:
    """Where the demo's pods are, read from the API server each tick, and the usage file that follows from it.

    Owns ``placed[pool][pod] = node label`` (kept after a pod completes), the pods still running with the
    time the demo first saw them bound, and the usage file the extender's static provider reads.
    """

    def __init__(self, cp: ControlPlane, nodes: list[DemoNode], pods: list[DemoPod], usage_path: Path) -> None:
        self.cp, self.nodes, self.pods, self.usage_path = cp, nodes, pods, usage_path
        self.placed: dict[str, dict[str, str]] = {pool: {} for pool in POOLS}
        self.running: dict[str, dict[str, tuple[str, float]]] = {pool: {} for pool in POOLS}
        self.completed = dict.fromkeys(POOLS, 0)
        self.write_usage()

    def tick(self) -> None:
        now = time.time()
        for pool in POOLS:
            done, running = 0, {}
            for p in self.cp.core.list_namespaced_pod(NAMESPACES[pool]).items:
                name, node = p.metadata.name, p.spec.node_name
                if not node:
                    continue
                label = node.removeprefix(f"{pool}-")
                self.placed[pool][name] = label
                if p.status is not None and p.status.phase in ("Succeeded", "Failed"):
                    done += 1
                else:
                    running[name] = (label, self.running[pool].get(name, (label, now))[1])
            self.running[pool], self.completed[pool] = running, done
        self.write_usage(now)

    def write_usage(self, now: float | None = None) -> None:
        now = time.time() if now is None else now
        text = yaml.safe_dump(usage_file(self.nodes, self.pods, self.running, now=now, ramp_s=RAMP_S),
                              sort_keys=False)
        tmp = self.usage_path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(self.usage_path)  # atomic: the provider never reads half a file

    def all_placed(self) -> bool:
        return all(len(self.placed[pool]) >= len(self.pods) for pool in POOLS)
