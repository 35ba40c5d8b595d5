"""The FastAPI app in-process (TestClient, lifespan included) over a fake /proc: schema, metrics, health."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from monitor.models import UsageReport
from monitor.sampler import Sampler
from monitor.server import create_app, get_sampler
from monitor.settings import build_settings


@pytest.fixture
def settings(tmp_path):
    proc = tmp_path / "proc"
    (proc / "net").mkdir(parents=True)
    for name in ("stat", "meminfo", "diskstats", "net/dev"):
        shutil.copyfile(Path("/proc", name), proc / name)
    return build_settings(proc_root=proc, cgroup_root=tmp_path / "none", node_name="node-a", interval=0.05, window=10)


def test_usage_matches_its_schema_and_units(settings):
    with TestClient(create_app(settings)) as client:
        body = client.get("/usage").json()
    report = UsageReport.model_validate(body)
    assert report.node_name == "node-a"
    assert report.interval_seconds == 0.05
    assert report.window.samples == 10 and report.window.seconds == pytest.approx(0.5)
    used = report.node.memory_bytes.current
    assert used is not None and used > 0
    assert report.scheduler_units.current.mem_gib == pytest.approx(used / 2**30)
    assert 0 < report.node.memory_fraction.current < 1
    assert report.node.capacity_cores >= 1


def test_openapi_documents_the_usage_record(settings):
    with TestClient(create_app(settings)) as client:
        spec = client.get("/openapi.json").json()
    assert spec["paths"]["/usage"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/UsageReport"
    }
    schemas = spec["components"]["schemas"]
    assert {"UsageReport", "NodeUsageOut", "PodUsageOut", "StatOut", "SchedulerViewOut"} <= set(schemas)
    assert "mem_gib" in schemas["SchedulerUnitsOut"]["properties"]


def test_metrics_are_prefixed_and_documented(settings):
    with TestClient(create_app(settings)) as client:
        text = client.get("/metrics").text
    names = {line.split()[2] for line in text.splitlines() if line.startswith("# HELP")}
    assert names and all(n.startswith("drsched_monitor_") for n in names)
    for name in ("drsched_monitor_node_cpu_cores", "drsched_monitor_node_memory_bytes_ewma",
                 "drsched_monitor_node_net_rx_bytes_per_second", "drsched_monitor_node_disk_write_bytes_per_second",
                 "drsched_monitor_pod_cpu_cores", "drsched_monitor_samples_total",
                 "drsched_monitor_process_cpu_seconds_total"):
        assert name in names, name
    assert 'drsched_monitor_node_memory_bytes{node="node-a"}' in text


def test_healthz_ok_when_fresh_and_503_when_stale(settings):
    app = create_app(settings)
    with TestClient(app) as client:
        assert client.get("/healthz").json()["status"] == "ok"
        stale = Sampler(settings, clock=lambda: 0.0)  # its only sample is "taken" at monotonic time 0: long ago
        stale.sample_once()
        app.dependency_overrides[get_sampler] = lambda: stale
        response = client.get("/healthz")
        assert response.status_code == 503 and response.json()["status"] == "stale"
        never = Sampler(settings)
        app.dependency_overrides[get_sampler] = lambda: never
        assert client.get("/healthz").json()["status"] == "starting"
