"""The node agent's per-pod readings reach the extender across hosts only with the shared token.

Real processes: an agent listening on every address with ``--pods-token-file`` and a fake pod burning
half a core, and extenders reading it at this machine's non-loopback address (as the extender reads an
agent on another node). With the token the pod's readings become a learned profile; without it the node's
usage still flows but the agent withholds the pod readings, so nothing is learned.
"""

from __future__ import annotations

import socket

import pytest

from tests.helpers import wait_for

from .processes import NOT_YET, FakePod, Procs, get_json

pytestmark = pytest.mark.timeout(90)
WORKLOAD = "default/Deployment/web"


def _non_loopback_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))  # UDP: picks the outgoing address, sends nothing
        except OSError:
            return None
        address = s.getsockname()[0]
    return None if address.startswith("127.") else address


@pytest.fixture
def procs(tmp_path):
    p = Procs(tmp_path)
    yield p
    p.stop_all()


def _explain(ext) -> dict:
    pod = {"metadata": {"name": "probe", "namespace": "default", "labels": {"drsched.io/workload": "Deployment/web"}},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}
    return get_json(f"{ext.debug_url}/debug/explain", {"Pod": pod, "Nodes": None, "NodeNames": ["node-a"]})


def test_pod_readings_cross_hosts_only_with_the_token(procs, tmp_path):
    address = _non_loopback_address()
    if address is None:
        pytest.skip("no non-loopback IPv4 address: every caller would be on loopback")
    (tmp_path / "token").write_text("the-agents-token-0123456789\n")
    (tmp_path / "wrong").write_text("not-the-token\n")
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("nodes:\n- {name: node-a, cpu: '4', memory: 8Gi}\n")
    with FakePod(tmp_path / "cgroup", cores=0.5) as pod:
        agent = procs.agent("node-a", "--host", "0.0.0.0", "--cgroup-root", str(pod.root), "--pod-network", "false",
                            "--pods-token-file", str(tmp_path / "token"))
        agent.wait_http("/healthz")
        url = agent.url.replace("127.0.0.1", address)
        options = dict(usage_provider="monitor", monitor_agents={"node-a": url}, usage_interval_s="0.3",
                       usage_timeout_s="0.25", profile_min_samples="3", pod_workloads={pod.uid: WORKLOAD})
        trusted = procs.extender(cluster, **options, monitor_token_file=str(tmp_path / "token"))
        stranger = procs.extender(cluster, **options, monitor_token_file=str(tmp_path / "wrong"))

        learned = wait_for(lambda: (r := _explain(trusted)) and r["pod"]["demand_source"] == "learned" and r,
                           timeout=20, ignore=NOT_YET, what="a learned profile through the token")
        assert learned["pod"]["demand"][0] == pytest.approx(0.5, abs=0.2)

        usage = wait_for(lambda: (u := get_json(f"{stranger.debug_url}/debug/usage")["nodes"]["node-a"]) and
                         not u["stale"] and u, timeout=20, ignore=NOT_YET, what="node usage without the token")
        assert usage["error"] is None  # node readings are for anyone
        assert _explain(stranger)["pod"]["demand_source"] == "requests"  # but no pod readings, nothing learned
        assert get_json(f"{stranger.debug_url}/debug/profiles")["profiles"] == {}
