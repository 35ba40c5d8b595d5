"""What the control plane did for one benchmark arm, per scheduled pod: requests by client, watch events, etcd.

``bench_scheduler.py`` reads two sources before and after each arm's scheduling window and hands them here:

* kube-apiserver's own ``/metrics``: ``apiserver_request_total`` by verb / resource / subresource (no client
  label), ``apiserver_watch_events_total`` and ``apiserver_watch_events_sizes_sum`` by resource (each
  event counted once per watcher it is sent to), ``etcd_requests_total`` by operation / type, and the
  gauge ``apiserver_longrunning_requests{verb="WATCH"}`` (watches open at the end, by resource);
* the apiserver's audit log (``harness.cluster.ControlPlane(audit=True)``): one Metadata entry per answered
  request, naming its user agent; an arm's entries are the lines appended between the two reads
  (``AuditTail``). A watch is one entry, written when it ends.

Counters become per-pod figures (``per_pod``); ``render`` prints them as one table, a column per arm, so
what one arm makes the control plane do that another does not is a row read across. Pure apart from
``AuditTail``, which reads the file.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

REQUESTS = "apiserver_request_total"
WATCH_EVENTS = "apiserver_watch_events_total"
WATCH_BYTES = "apiserver_watch_events_sizes_sum"
LONGRUNNING = "apiserver_longrunning_requests"
ETCD = ("etcd_requests_total", "etcd_request_duration_seconds_count")  # the first one the apiserver exports


def labels_of(key: str) -> tuple[str, dict[str, str]]:
    """``'name{a="x",b="y"}'`` (a ``harness.extender_proc.parse_metrics`` key) -> ``('name', {a: x, b: y})``."""
    name, brace, rest = key.partition("{")
    out: dict[str, str] = {}
    if not brace:
        return name, out
    i, body = 0, rest.rstrip("}")
    while i < len(body):
        eq = body.index("=", i)
        label = body[i:eq].strip().lstrip(",").strip()
        j, value = eq + 2, []  # past '="'
        while body[j] != '"':
            if body[j] == "\\" and j + 1 < len(body):
                j += 1
            value.append(body[j])
            j += 1
        out[label] = "".join(value)
        i = j + 1
    return name, out


def grouped(samples: Mapping[str, float], name: str, by: Iterable[str]) -> Counter[str]:
    """Sum of ``name``'s samples per combination of the ``by`` labels (joined by " ", empty ones left out);
    a label missing from a sample is read as empty (``resource`` falls back to ``kind``, its older name)."""
    by = tuple(by)
    out: Counter[str] = Counter()
    for key, value in samples.items():
        base, labels = labels_of(key)
        if base != name:
            continue
        if "resource" in by and "resource" not in labels:
            labels["resource"] = labels.get("kind", "")
        parts = [labels.get(b, "") for b in by]
        out[" ".join(p for p in parts if p) or "-"] += value
    return out


def delta(before: Mapping[str, float], after: Mapping[str, float], name: str, by: Iterable[str]) -> Counter[str]:
    """How much each group of counter ``name`` grew between two scrapes (groups that did not grow left out)."""
    by = tuple(by)
    grew = grouped(after, name, by)
    grew.subtract(grouped(before, name, by))
    return Counter({k: v for k, v in grew.items() if v > 0})


def etcd_name(samples: Mapping[str, float]) -> str:
    """The etcd request counter this apiserver exports."""
    names = {labels_of(k)[0] for k in samples}
    return next((n for n in ETCD if n in names), ETCD[0])


def agent_of(user_agent: str) -> str:
    """The client a user agent names: the token before its first ``/`` (``kube-scheduler/v1.35.4 (linux/amd64)
    kubernetes/..`` -> ``kube-scheduler``; ``OpenAPI-Generator/31.0.0/python`` -> ``OpenAPI-Generator``)."""
    return user_agent.split("/", 1)[0].strip() or "-"


def audit_counts(lines: Iterable[bytes | str]) -> Counter[tuple[str, str]]:
    """Audit entries -> count per (client, "verb resource[/subresource]"); a non-resource request is named by
    its path (``get /metrics``). Lines that are not JSON audit events are skipped."""
    out: Counter[tuple[str, str]] = Counter()
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("kind") != "Event":
            continue
        ref = entry.get("objectRef") or {}
        if ref.get("resource"):
            what = ref["resource"] + (f"/{ref['subresource']}" if ref.get("subresource") else "")
        else:
            what = str(entry.get("requestURI", "?")).split("?", 1)[0]
        out[(agent_of(str(entry.get("userAgent", ""))), f"{entry.get('verb', '?')} {what}")] += 1
    return out


class AuditTail:
    """The lines appended to an audit log since the last ``read`` (the first read returns all of them)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset = path, 0

    def skip(self) -> None:
        """Forget what is there now: the next ``read`` starts here."""
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def read(self) -> list[bytes]:
        if not self.path.exists():
            return []
        with self.path.open("rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n") + 1  # a line still being written waits for the next read
        self.offset += end
        return data[:end].splitlines()


def per_pod(counts: Mapping, pods: int) -> dict[str, float]:
    """Counts -> per scheduled pod; tuple keys are joined by " "."""
    return {(" ".join(k) if isinstance(k, tuple) else k): v / pods for k, v in counts.items()}


def arm_requests(before: Mapping[str, float], after: Mapping[str, float], audit: Iterable[bytes] | None,
                 pods: int) -> dict[str, dict[str, float]]:
    """One arm's figures per scheduled pod, from the scrapes around its window and its audit lines (None: no
    audit log, so no per-client table)."""
    etcd = etcd_name(after)
    out = {"requests": per_pod(delta(before, after, REQUESTS, ("verb", "resource", "subresource")), pods),
           "watch_events": per_pod(delta(before, after, WATCH_EVENTS, ("resource",)), pods),
           "watch_kib": {k: v / 1024 for k, v in
                         per_pod(delta(before, after, WATCH_BYTES, ("resource",)), pods).items()},
           "etcd": per_pod(delta(before, after, etcd, ("operation", "type")), pods),
           "watches_open": dict(grouped({k: v for k, v in after.items() if 'verb="WATCH"' in k},
                                        LONGRUNNING, ("resource",)))}
    if audit is not None:
        out["by_client"] = per_pod(audit_counts(audit), pods)
    return out


SECTIONS = (("by_client", "requests per pod by client (audit log): client verb resource"),
            ("requests", "requests per pod (apiserver_request_total): verb resource"),
            ("watch_events", "watch events sent per pod (apiserver_watch_events_total), by resource"),
            ("watch_kib", "watch KiB sent per pod (apiserver_watch_events_sizes), by resource"),
            ("etcd", "etcd requests per pod (apiserver's etcd client): operation type"),
            ("watches_open", "watches open at the arm's end where the arms differ (apiserver_longrunning_requests)"))


def render(arms: Mapping[str, Mapping], *, floor: float = 0.01) -> list[str]:
    """The control-plane requests table: per section, one row per key any arm reached ``floor`` on (open
    watches: only those whose count differs between arms), the largest first, a column per arm ('-' where
    that arm had none)."""
    names = [a for a in arms if "control_plane" in arms[a]]
    width = max([44, *(len(k) + 2 for a in names for sec in arms[a]["control_plane"].values() for k in sec)])
    lines = [f"  {'control-plane requests per scheduled pod':<{width}}" + "".join(f"{a[:17]:>19}" for a in names)]
    for key, title in SECTIONS:
        columns = [arms[a]["control_plane"].get(key, {}) for a in names]
        rows = {k for c in columns for k, v in c.items() if v >= floor}
        if key == "watches_open":  # dozens of informers every arm has: only where the arms differ
            rows = {k for k in rows if len({c.get(k) for c in columns}) > 1}
        if not rows:
            continue
        lines.append(f"  {title}")
        for row in sorted(rows, key=lambda k: (-max(c.get(k, 0.0) for c in columns), k)):
            cells = [c.get(row) for c in columns]
            lines.append(f"    {row:<{width - 2}}" + "".join(f"{'-' if c is None else f'{c:.2f}':>19}" for c in cells))
    return lines
