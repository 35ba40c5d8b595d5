"""Live usage providers: real ``python -m monitor`` agents, a real Prometheus + node-exporter, the real extender.

* monitor: usage of both agents reaches ``/debug/explain``; a fake pod's readings become a learned profile
  that is served, persisted, and read back after a restart; killing one agent makes its node stale with
  a counted reason while requests keep being answered; an agent measuring less CPU than the node's
  allocatable (a node cgroup whose quota was cut) makes the node look busy by the cores it lacks.
* prometheus: node-exporter scraped every second; node usage reaches ``/debug/explain``; Prometheus killed
  -> stale, counted. Skipped only when the ``prometheus`` / ``prometheus-node-exporter`` binaries are absent
  (``make test`` installs them as root: ``scripts/install-deps.sh``).
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from tests.helpers import free_port, wait_for

from .processes import NOT_YET, FakePod, Procs, get_json, get_text

pytestmark = pytest.mark.timeout(90)
MAX_AGE = 2.0
WORKLOAD = "default/Deployment/web"


@pytest.fixture
def procs(tmp_path):
    p = Procs(tmp_path)
    yield p
    p.stop_all()


def cluster_file(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text("nodes:\n- {name: node-a, cpu: '4', memory: 8Gi}\n- {name: node-b, cpu: '4', memory: 8Gi}\n")
    return path


def probe_pod() -> dict:
    return {"metadata": {"name": "probe", "namespace": "default", "labels": {"drsched.io/workload": "Deployment/web"}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}


def explain(ext, nodes=("node-a", "node-b")) -> dict:
    return get_json(f"{ext.debug_url}/debug/explain", {"Pod": probe_pod(), "Nodes": None, "NodeNames": list(nodes)})


def by_name(result: dict) -> dict:
    return {n["name"]: n for n in result["nodes"]}


def counter(ext, provider: str, reason: str) -> float:
    text = get_text(f"{ext.url}/metrics")
    m = re.search(rf'drsched_extender_usage_errors_total{{provider="{provider}",reason="{reason}"}} (\S+)', text)
    return float(m.group(1)) if m else 0.0


def prioritize_answers(ext, n: int = 10) -> None:
    """``n`` prioritize requests all score both nodes; prints the slowest (a figure: the box may be loaded)."""
    body = {"Pod": probe_pod(), "Nodes": None, "NodeNames": ["node-a", "node-b"]}
    worst = 0.0
    for _ in range(n):
        start = time.perf_counter()
        scores = get_json(f"{ext.url}/prioritize", body)
        worst = max(worst, time.perf_counter() - start)
        assert [s["Host"] for s in scores] == ["node-a", "node-b"]
    print(f"prioritize with a usage source down: slowest of {n} took {worst * 1000:.0f} ms")


def test_monitor_agents_usage_profiles_and_a_dead_agent(procs, tmp_path):
    profile_file = tmp_path / "state" / "profiles.json"
    with FakePod(tmp_path / "cgroup", cores=0.5) as pod:
        a = procs.agent("node-a", "--cgroup-root", str(pod.root), "--pod-network", "false")
        b = procs.agent("node-b")
        a.wait_http("/healthz")
        b.wait_http("/healthz")
        options = dict(usage_provider="monitor", monitor_agents={"node-a": a.url, "node-b": b.url},
                       usage_interval_s="0.3", usage_timeout_s="0.25", max_usage_age_s=str(MAX_AGE),
                       profile_min_samples="3", profile_file=str(profile_file), profile_save_interval_s="0.3",
                       pod_workloads={pod.uid: WORKLOAD})
        ext = procs.extender(cluster_file(tmp_path), **options)

        # usage from both agents flows into /debug/explain
        wait_for(lambda: not any(v["stale"] for v in get_json(f"{ext.debug_url}/debug/usage")["nodes"].values()),
                 timeout=20, ignore=NOT_YET, what="both nodes fresh",
                 on_timeout=lambda: get_json(f"{ext.debug_url}/debug/usage"))
        nodes = by_name(explain(ext))
        for node in nodes.values():
            assert node["usage_age_s"] < MAX_AGE and node["usage_error"] is None
            assert node["features"]["est_util_mem"] > 0          # measured, not the (tiny) requests

        # the fake pod's readings become a trusted, served, persisted profile
        result = wait_for(lambda: (r := explain(ext)) and r["pod"]["demand_source"] == "learned" and r,
                          timeout=20, ignore=NOT_YET, what="a learned profile")
        assert result["pod"]["workload"] == WORKLOAD and result["pod"]["profile"]["source"] == "learned"
        assert result["pod"]["demand"][0] == pytest.approx(0.5, abs=0.2)     # cores
        assert result["pod"]["demand"][1] == pytest.approx(1.0, abs=0.05)    # GiB working set
        learned = get_json(f"{ext.debug_url}/debug/profiles")["profiles"][WORKLOAD]["learned"]
        assert learned["trusted"] and learned["samples"][0] >= 3
        wait_for(lambda: WORKLOAD in profile_file.read_text(), timeout=10, ignore=NOT_YET, what="the profile file")

        # one agent dies: its node goes stale with a counted reason, requests stay fast
        b.kill()
        status = wait_for(lambda: (s := get_json(f"{ext.debug_url}/debug/usage")["nodes"]["node-b"])["stale"] and s,
                          timeout=MAX_AGE + 10, ignore=NOT_YET, what="node-b stale")
        assert status["error"] == "unreachable" and status["failures"] >= 1
        assert counter(ext, "monitor", "unreachable") >= 1
        nodes = by_name(explain(ext))
        assert nodes["node-b"]["stale"] and nodes["node-b"]["usage_error"] == "unreachable"
        assert nodes["node-b"]["usage_age_s"] > MAX_AGE
        assert not nodes["node-a"]["stale"]
        prioritize_answers(ext)                               # scored from the cache, agent or not
        assert ext.alive()

    # a restart reads the profile back: served before any new sample
    ext.stop()
    again = procs.extender(cluster_file(tmp_path), **{**options, "usage_provider": "none"})
    result = explain(again)
    assert result["pod"]["demand_source"] == "learned"
    assert result["pod"]["demand"][0] == pytest.approx(0.5, abs=0.2)


PROMETHEUS = shutil.which("prometheus")
NODE_EXPORTER = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")


@pytest.mark.skipif(not (PROMETHEUS and NODE_EXPORTER),
                    reason="prometheus / prometheus-node-exporter binaries not installed "
                           "(as root: bash scripts/install-deps.sh)")
def test_prometheus_provider_and_prometheus_down(procs, tmp_path):
    ne_port, prom_port = free_port(), free_port()
    procs.start("node-exporter", [NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{ne_port}",
                                  "--collector.disable-defaults", "--collector.cpu", "--collector.meminfo",
                                  "--collector.netdev", "--collector.diskstats"], ne_port).wait_http("/metrics")
    config = tmp_path / "prometheus.yml"
    config.write_text("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                      "scrape_configs:\n- job_name: node\n  static_configs:\n"
                      f"  - targets: ['127.0.0.1:{ne_port}']\n")
    prom = procs.start("prometheus", [PROMETHEUS, f"--config.file={config}",
                                      f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                      f"--web.listen-address=127.0.0.1:{prom_port}"], prom_port)
    prom.wait_http("/-/ready")
    # two scrapes inside the rate window before the extender asks
    wait_for(lambda: get_json(f"{prom.url}/api/v1/query?query=count_over_time(up%5B10s%5D)")["data"]["result"]
             and float(get_json(f"{prom.url}/api/v1/query?query=count_over_time(up%5B10s%5D)")
                       ["data"]["result"][0]["value"][1]) >= 2, timeout=30, ignore=NOT_YET, what="two scrapes")
    ext = procs.extender(cluster_file(tmp_path), usage_provider="prometheus", prometheus_url=prom.url,
                         prometheus_rate_window="5s", prometheus_instance_map={f"127.0.0.1:{ne_port}": "node-a"},
                         usage_interval_s="0.5", usage_timeout_s="0.4", max_usage_age_s=str(MAX_AGE))

    node_a = wait_for(lambda: (n := by_name(explain(ext))["node-a"]) and not n["stale"] and n, timeout=20,
                      ignore=NOT_YET, what="node-a fresh from Prometheus")
    assert node_a["usage_age_s"] < MAX_AGE and node_a["features"]["est_util_mem"] > 0
    usage = get_json(f"{ext.debug_url}/debug/usage")["nodes"]
    assert usage["node-b"]["error"] == "no_data" and usage["node-b"]["stale"]   # no exporter on node-b

    prom.kill()
    status = wait_for(lambda: (s := get_json(f"{ext.debug_url}/debug/usage")["nodes"]["node-a"])["stale"] and s,
                      timeout=MAX_AGE + 10, ignore=NOT_YET, what="node-a stale after Prometheus died")
    assert status["error"] == "unreachable"
    assert counter(ext, "prometheus", "unreachable") >= 1
    assert by_name(explain(ext))["node-a"]["usage_error"] == "unreachable"
    prioritize_answers(ext)
    assert ext.alive()


def fake_node_cgroup(root: Path, node: str, *, quota_cores: float) -> None:
    """A cgroup v1 tree with one node cgroup that is idle under a CPU quota (an emulated node, cut)."""
    for hierarchy in ("cpu", "cpuacct", "memory"):
        (root / hierarchy / node).mkdir(parents=True, exist_ok=True)
    (root / "cpuacct" / node / "cpuacct.usage").write_text("0\n")
    (root / "cpu" / node / "cpu.cfs_quota_us").write_text(f"{int(quota_cores * 100000)}\n")
    (root / "cpu" / node / "cpu.cfs_period_us").write_text("100000\n")
    (root / "memory" / node / "memory.usage_in_bytes").write_text(f"{256 << 20}\n")
    (root / "memory" / node / "memory.limit_in_bytes").write_text(f"{8 << 30}\n")
    (root / "memory" / node / "memory.stat").write_text("total_inactive_file 0\n")


def test_a_node_whose_agent_measures_less_cpu_than_allocatable_looks_busy(procs, tmp_path):
    # node-b's agent reads a node cgroup of 0.5 cores (its quota cut, as a noisy neighbour would) while the
    # cluster says 4: the 3.5 lost cores count as used, so the idle node is not scored as 4 free cores.
    fake_node_cgroup(tmp_path / "cgroup", "node-b", quota_cores=0.5)
    b = procs.agent("node-b", "--cgroup-root", str(tmp_path / "cgroup"), "--cgroup-version", "1",
                    "--node-view", "cgroup", "--node-cgroup", "/node-b", "--pod-network", "false")
    b.wait_http("/healthz")
    ext = procs.extender(cluster_file(tmp_path), usage_provider="monitor", monitor_agents={"node-b": b.url},
                         usage_interval_s="0.3", usage_timeout_s="0.25", max_usage_age_s=str(MAX_AGE))
    wait_for(lambda: not get_json(f"{ext.debug_url}/debug/usage")["nodes"]["node-b"]["stale"], timeout=20,
             ignore=NOT_YET, what="node-b fresh", on_timeout=lambda: get_json(f"{ext.debug_url}/debug/usage"))
    assert get_json(f"{b.url}/usage")["node"]["capacity_cores"] == pytest.approx(0.5)
    node = by_name(explain(ext, nodes=("node-b",)))["node-b"]
    assert node["usage_error"] is None
    assert node["features"]["est_util_cpu"] == pytest.approx(3.5 / 4, abs=0.02)
