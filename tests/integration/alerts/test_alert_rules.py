"""The PrometheusRule reads only series the services really serve, and every alert is documented.

The names come from real scrapes: the extender (``python -m extender`` over a static cluster) and a node
agent (``python -m monitor``) as subprocesses, the migration controller's listener
(``migration.app.serve_metrics``) in-process. A labelled counter nothing has incremented yet is still
announced by its ``# TYPE`` line, so a scrape of a fresh process names every family. kube-scheduler's
series are checked against the stable-metrics list of the Kubernetes version the harness pins
(``harness/controlplane/go.mod``), read from the Go module cache the control-plane build fills.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from migration.app import serve_metrics
from migration.telemetry import Telemetry
from tests.helpers import REPO, free_port, wait_for

from .rules import RULES, RUNBOOK, RUNBOOK_LINK, load_rules, metric_names, runbook_anchors, slug

pytestmark = pytest.mark.timeout(180)
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count", "_created"),
            "summary": ("", "_sum", "_count", "_created"), "info": ("_info",), "gauge": ("",)}
SEVERITIES = {"critical", "warning", "info"}
EXAMPLE = REPO / "examples" / "static-cluster.yaml"


def series_names(text: str) -> set[str]:
    """Every sample name a Prometheus text exposition announces, including families with no sample yet."""
    names = set()
    for family in text_string_to_metric_families(text):
        names.update(family.name + s for s in SUFFIXES.get(family.type, ("",)))
        names.update(sample.name for sample in family.samples)
    return names


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310 -- a local test server
        return resp.read().decode()


def _serve(cmd: list[str], port: int, log: Path, env: dict[str, str]) -> subprocess.Popen:
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **env}, stdout=out,
                                stderr=subprocess.STDOUT)

    def up() -> bool:
        if proc.poll() is not None:
            pytest.fail(f"{cmd[2]} exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        return "# TYPE" in scrape(f"http://127.0.0.1:{port}/metrics")

    wait_for(up, timeout=30, what=f"{cmd[2]} /metrics", ignore=(OSError,))
    return proc


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Iterator[dict[str, set[str]]]:
    """Series names per service, from one scrape of each."""
    logs = tmp_path_factory.mktemp("alerts")
    ext_port, mon_port, mig_port = free_port(), free_port(), free_port()
    procs = [
        _serve([sys.executable, "-m", "extender", "--static-cluster", str(EXAMPLE), "--port", str(ext_port),
                "--debug-port", "0"], ext_port, logs / "extender.log", {"DRSCHED_LOG_FORMAT": "json"}),
        _serve([sys.executable, "-m", "monitor", "--host", "127.0.0.1", "--port", str(mon_port), "--interval", "0.2"],
               mon_port, logs / "monitor.log", {"NODE_NAME": "alerts-node"}),
    ]
    server, _ = serve_metrics(port=mig_port, host="127.0.0.1", registry=Telemetry().metrics.registry)
    try:
        # the monitor's sample-time series appear with its first sample
        wait_for(lambda: "drsched_monitor_last_sample_timestamp_seconds" in scrape(f"http://127.0.0.1:{mon_port}/metrics"),
                 timeout=20, what="the monitor's first sample")
        yield {"extender": series_names(scrape(f"http://127.0.0.1:{ext_port}/metrics")),
               "monitor": series_names(scrape(f"http://127.0.0.1:{mon_port}/metrics")),
               "migration": series_names(scrape(f"http://127.0.0.1:{mig_port}/metrics"))}
    finally:
        server.shutdown()
        server.server_close()
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)


def kube_scheduler_stable_metrics() -> dict[str, set[str]]:
    """Name -> label names of kube-scheduler's STABLE metrics, for the Kubernetes version the harness pins."""
    gomod = (REPO / "harness" / "controlplane" / "go.mod").read_text()
    version = re.search(r"^\s*k8s\.io/kubernetes (v\S+)", gomod, flags=re.M).group(1)
    modcache = os.environ.get("GOMODCACHE") or str(Path(os.environ.get("GOPATH", Path.home() / "go")) / "pkg" / "mod")
    listing = Path(modcache) / f"k8s.io/kubernetes@{version}" / "test/instrumentation/testdata/stable-metrics-list.yaml"
    if not listing.is_file():
        pytest.skip(f"{listing} is not in the Go module cache (harness/controlplane/build.sh downloads it)")
    out = {}
    for m in yaml.safe_load(listing.read_text()):
        if m.get("subsystem") == "scheduler":
            out[f"scheduler_{m['name']}"] = set(m.get("labels", []))
    return out


def test_every_expr_reads_series_a_drsched_service_exports(exported):
    drsched = set().union(*exported.values())
    # a few names each scrape must hold, so an empty or wrong scrape cannot pass
    assert {"drsched_extender_requests_total", "drsched_extender_refused_total",
            "drsched_extender_model_info"} <= exported["extender"]
    assert "drsched_monitor_last_sample_timestamp_seconds" in exported["monitor"]
    assert "drsched_migration_released_total" in exported["migration"]
    rules = load_rules()
    assert len(rules) >= 15
    used = set()
    for rule in rules:
        names = metric_names(rule["expr"])
        assert names, f"{rule['alert']}: no series in {rule['expr']!r}"
        ours = {n for n in names if n.startswith("drsched_")}
        assert ours <= drsched, f"{rule['alert']} reads series no service exports: {sorted(ours - drsched)}"
        assert names - ours <= {"scheduler_schedule_attempts_total"}, \
            f"{rule['alert']} reads series of neither drsched nor kube-scheduler: {sorted(names - ours)}"
        used |= names
    # the topics the alerts are for, each read by some alert
    for series in ("drsched_extender_internal_errors_total", "drsched_extender_model_info",
                   "drsched_extender_node_usage_stale", "drsched_monitor_last_sample_timestamp_seconds",
                   "drsched_extender_refused_total", "scheduler_schedule_attempts_total",
                   "drsched_migration_released_total"):
        assert series in used, series


def test_kube_scheduler_series_and_labels_are_stable_ones():
    stable = kube_scheduler_stable_metrics()
    for rule in load_rules():
        for name in metric_names(rule["expr"]):
            if name.startswith("scheduler_"):
                assert name in stable, f"{rule['alert']}: {name} is not a stable kube-scheduler metric"
                for label in re.findall(rf"{name}\{{([^}}]*)\}}", rule["expr"]):
                    keys = set(re.findall(r"(\w+)\s*[=!]~?", label))
                    assert keys <= stable[name], f"{rule['alert']}: {name} has no label {sorted(keys - stable[name])}"


def test_every_alert_has_severity_summary_and_a_runbook_section():
    anchors = runbook_anchors()
    rules = load_rules()
    names = [r["alert"] for r in rules]
    assert len(names) == len(set(names))
    for rule in rules:
        name, labels, notes = rule["alert"], rule.get("labels", {}), rule.get("annotations", {})
        assert re.fullmatch(r"Drsched[A-Z][A-Za-z]+", name), name
        assert labels.get("severity") in SEVERITIES, f"{name}: severity {labels.get('severity')!r}"
        assert notes.get("summary") and notes.get("description"), f"{name}: summary and description"
        link = notes.get("runbook_url", "")
        assert link == RUNBOOK_LINK + name.lower(), f"{name}: runbook_url {link!r}"
        assert link.removeprefix(RUNBOOK_LINK) in anchors, f"{name}: no section {name} in {RUNBOOK}"
        if "for" in rule:
            assert re.fullmatch(r"\d+[smh]", rule["for"]), f"{name}: for {rule['for']!r}"
    # no section documents an alert that no longer exists
    sections = {a for a in anchors if a.startswith("drsched") and a != slug("drsched runbook")}
    assert sections == {n.lower() for n in names}


def test_runbook_links_resolve():
    text = RUNBOOK.read_text()
    anchors = runbook_anchors()
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert links
    for anchor in links:
        assert anchor in anchors, f"runbook link #{anchor} has no heading"


def test_metric_names_ignores_functions_labels_and_keywords():
    expr = ('sum by (namespace, le) (rate(a_total{verb=~"x|y", le!="1"}[5m])) / on (pod) b '
            'unless c offset 5m > 1e3 and time() - d[1h:5m] > bool 0.5 or vector(0)')
    assert metric_names(expr) == {"a_total", "b", "c", "d"}


def test_the_monitoring_kustomization_renders_the_rule_in_drsched_system():
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl on PATH to render manifests/monitoring with (kubectl kustomize)")
    done = subprocess.run([kubectl, "kustomize", str(RULES.parent)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    (rendered,) = list(yaml.safe_load_all(done.stdout))
    assert (rendered["apiVersion"], rendered["kind"]) == ("monitoring.coreos.com/v1", "PrometheusRule")
    assert rendered["metadata"]["namespace"] == "drsched-system"
    assert rendered["spec"] == yaml.safe_load(RULES.read_text())["spec"]
