"""The pure half of the experiment tooling: seeded submission schedules, pinned templates, placement rows.

Why it exists: SpeCon ran its A/B comparison by hand (``test.py``'s pasted ``time_list``, ``change_yaml.py``
pinning every template to the baseline's nodes, ``job_node_info.py`` parsing ``kubectl get pod`` output).
Here each of those is a function with a table test; ``__main__`` does the I/O.

Files:
* schedule CSV ``offset_s,job`` -- seconds after the start at which ``<job>.yaml`` is submitted;
* placements CSV ``job,pod,node,phase`` -- where each job's live pod runs (a migrated job's successor
  ``<job>-m<k>`` is reported under its job name, via the ``drsched.io/job`` label).
"""

from __future__ import annotations

import copy
import csv
import io
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from migration.podspec import job_base


class ExperimentError(ValueError):
    """A schedule, template or placement file that cannot be used; the message names the file and the row."""


@dataclass(frozen=True)
class Submission:
    offset_s: float
    job: str


def make_schedule(*, jobs: list[str], seed: int, mean_gap_s: float, start_s: float = 0.0) -> list[Submission]:
    """Poisson arrivals: exponential gaps of mean ``mean_gap_s`` from ``start_s``, jobs in the given order.

    Same seed, same schedule (SpeCon's hand-pasted ``time_list``, generated instead). Offsets are rounded
    to 0.1 s and strictly increasing, so no two submissions collide (SpeCon's submit loop hung on equal times).
    """
    if mean_gap_s <= 0:
        raise ExperimentError(f"mean gap must be > 0, got {mean_gap_s}")
    rng = random.Random(seed)
    out, t = [], start_s
    for job in jobs:
        t = max(round(t + rng.expovariate(1.0 / mean_gap_s), 1), (out[-1].offset_s + 0.1) if out else 0.0)
        out.append(Submission(offset_s=round(t, 1), job=job))
    return out


def schedule_csv(schedule: Iterable[Submission]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["offset_s", "job"])
    for s in schedule:
        w.writerow([f"{s.offset_s:.1f}", s.job])
    return buf.getvalue()


def parse_schedule(text: str, *, path: str = "<schedule>") -> list[Submission]:
    rows = list(csv.DictReader(io.StringIO(text)))
    out = []
    for i, row in enumerate(rows, start=2):
        try:
            out.append(Submission(offset_s=float(row["offset_s"]), job=str(row["job"]).strip()))
        except (KeyError, TypeError, ValueError):
            raise ExperimentError(f"{path}:{i}: expected columns offset_s,job, got {row}") from None
        if not out[-1].job or out[-1].offset_s < 0:
            raise ExperimentError(f"{path}:{i}: empty job or negative offset")
    return sorted(out, key=lambda s: s.offset_s)


def pinned(template: Mapping[str, Any], node: str | None) -> dict[str, Any]:
    """The pod manifest with ``spec.nodeName = node`` (the baseline's placement), or unchanged for None."""
    pod = copy.deepcopy(dict(template))
    if node:
        pod.setdefault("spec", {})["nodeName"] = node
    return pod


def placements(pods: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """One row per pod (job, pod, node, phase), sorted by job then pod name."""
    rows = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        rows.append({"job": job_base(pod), "pod": str(meta.get("name", "")),
                     "node": str((pod.get("spec") or {}).get("nodeName") or ""),
                     "phase": str((pod.get("status") or {}).get("phase") or "")})
    return sorted(rows, key=lambda r: (r["job"], r["pod"]))


def placements_csv(rows: Iterable[Mapping[str, str]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=["job", "pod", "node", "phase"], lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def initial_nodes(text: str, *, path: str = "<placements>") -> dict[str, str]:
    """job → node of its *original* pod (the name equal to the job), the placement a fair replay starts from."""
    out = {}
    for i, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        if not {"job", "pod", "node"} <= set(row):
            raise ExperimentError(f"{path}:{i}: expected columns job,pod,node")
        if row["pod"] == row["job"] and row["node"]:
            out[row["job"]] = row["node"]
    return out
