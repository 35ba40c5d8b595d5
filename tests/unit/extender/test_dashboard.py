"""The Grafana dashboard loads and every query names series the extender or the monitor really exports."""

import json
import re
from pathlib import Path
from types import SimpleNamespace

from prometheus_client import CollectorRegistry, ProcessCollector

from extender.profile_store import ProfileMetrics
from extender.providers.health import UsageMetrics
from extender.telemetry import Metrics
from monitor.counters import NODE_SERIES, POD_SERIES
from monitor.metrics import PREFIX, SnapshotCollector

DASHBOARD = Path(__file__).resolve().parents[3] / "manifests" / "dashboards" / "drsched.json"
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count", "_created"),
            "info": ("_info",), "gauge": ("",), "summary": ("", "_sum", "_count")}


def exported(registry: CollectorRegistry) -> set[str]:
    names = set()
    for family in registry.collect():
        names.update(family.name + s for s in SUFFIXES.get(family.type, ("",)))
    return names


def extender_series() -> set[str]:
    metrics = Metrics()
    UsageMetrics(metrics.registry)
    ProfileMetrics(metrics.registry)
    return exported(metrics.registry)


def monitor_series() -> set[str]:
    stat = SimpleNamespace(current=1.0, ewma=1.0, mean=1.0, max=1.0)
    pod = SimpleNamespace(qos="burstable", stats={name: stat for name in POD_SERIES})
    snap = SimpleNamespace(node={name: stat for name in NODE_SERIES}, capacity_cores=2, capacity_memory_bytes=1,
                           pods={"uid": pod}, samples_total=1, errors_total={"proc": 1}, last_duration_seconds=0.1,
                           timestamp=1.0)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(lambda: snap, "n"))
    ProcessCollector(namespace=PREFIX, registry=registry)
    return exported(registry)


def exprs(dashboard: dict) -> list[str]:
    out = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    out += [v["query"]["query"] for v in dashboard["templating"]["list"] if isinstance(v.get("query"), dict)]
    return out


def test_every_expr_references_real_series():
    dashboard = json.loads(DASHBOARD.read_text())
    known = extender_series() | monitor_series()
    queries = exprs(dashboard)
    assert len(queries) >= 20
    for expr in queries:
        used = set(re.findall(r"\bdrsched_[a-z0-9_]+", expr))
        assert used, f"no drsched series in {expr!r}"
        assert used <= known, f"{expr!r} uses unknown series {sorted(used - known)}"


def test_covers_the_asked_topics_and_is_well_formed():
    dashboard = json.loads(DASHBOARD.read_text())
    text = " ".join(exprs(dashboard))
    for series in ("drsched_monitor_node_cpu_fraction_ewma", "drsched_extender_decisions_total",
                   "drsched_extender_fallback_total", "drsched_extender_request_seconds_bucket",
                   "drsched_extender_usage_errors_total", "drsched_extender_stale_nodes", "drsched_extender_profiles",
                   "drsched_extender_shadow_decisions_total", "drsched_extender_shadow_predicted_gain_sum"):
        assert series in text
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids)) and dashboard["uid"] and dashboard["title"] == "drsched"
    for p in dashboard["panels"]:
        g = p["gridPos"]
        assert g["x"] + g["w"] <= 24
