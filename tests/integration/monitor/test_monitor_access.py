"""Per-pod readings only to authorised callers: loopback, or the agent's token; node readings to anyone.

The app in-process over a fake /proc and a fake cgroup v2 tree with one pod; the caller's address is
set on the TestClient (a pod elsewhere in the cluster, or the node itself).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from monitor.access import WITHHELD_HEADER, may_read_pods
from monitor.server import create_app
from monitor.settings import build_settings

UID = "6f1c2a9e-0000-4000-8000-00000000abcd"
TOKEN = "s3cret-token-0123456789"
ELSEWHERE = ("10.1.2.3", 40000)
LOOPBACK = ("127.0.0.1", 40000)


@pytest.mark.parametrize("host, header, token, allowed", [
    ("127.0.0.1", None, None, True),
    ("::1", None, TOKEN, True),
    ("10.1.2.3", None, TOKEN, False),
    ("10.1.2.3", f"Bearer {TOKEN}", TOKEN, True),
    ("10.1.2.3", f"Bearer {TOKEN}x", TOKEN, False),
    ("10.1.2.3", f"bearer {TOKEN}", TOKEN, False),
    ("10.1.2.3", "Bearer ", None, False),          # no token configured: only loopback
    ("testclient", f"Bearer {TOKEN}", TOKEN, True),
    (None, None, TOKEN, False),
])
def test_may_read_pods(host, header, token, allowed) -> None:
    assert may_read_pods(client_host=host, authorization=header, token=token) is allowed


@pytest.fixture
def settings(tmp_path: Path):
    proc = tmp_path / "proc"
    (proc / "net").mkdir(parents=True)
    for name in ("stat", "meminfo", "diskstats", "net/dev"):
        shutil.copyfile(Path("/proc", name), proc / name)
    cgroup = tmp_path / "cgroup"
    pod = (cgroup / "kubepods.slice" / "kubepods-burstable.slice"
           / f"kubepods-burstable-pod{UID.replace('-', '_')}.slice")
    pod.mkdir(parents=True)
    (cgroup / "cgroup.controllers").write_text("cpu io memory\n")
    for name, text in (("cpu.stat", "usage_usec 1000\nuser_usec 0\nsystem_usec 0\n"), ("memory.current", "1048576\n"),
                       ("memory.stat", "anon 1\ninactive_file 0\n"), ("io.stat", "")):
        (pod / name).write_text(text)
    (tmp_path / "token").write_text(TOKEN + "\n")
    return build_settings(proc_root=proc, cgroup_root=cgroup, cgroup_version="2", node_name="node-a", interval=0.05,
                          window=10, pod_network=False, pods_token_file=tmp_path / "token")


def _usage(app, client: tuple[str, int], headers: dict | None = None):
    with TestClient(app, client=client) as c:
        return c.get("/usage", headers=headers), c.get("/metrics", headers=headers).text


def test_pods_are_withheld_from_a_caller_elsewhere_without_the_token(settings) -> None:
    response, metrics = _usage(create_app(settings), ELSEWHERE)
    body = response.json()
    assert response.status_code == 200 and body["pods"] == {} and response.headers[WITHHELD_HEADER] == "withheld"
    assert body["node"]["memory_bytes"]["current"] > 0  # node readings are for anyone
    assert UID not in metrics and "drsched_monitor_node_memory_bytes{" in metrics


@pytest.mark.parametrize("client, headers", [(ELSEWHERE, {"Authorization": f"Bearer {TOKEN}"}), (LOOPBACK, None)],
                         ids=["token", "loopback"])
def test_pods_are_served_with_the_token_or_on_loopback(settings, client, headers) -> None:
    response, metrics = _usage(create_app(settings), client, headers)
    assert UID in response.json()["pods"] and WITHHELD_HEADER not in response.headers
    assert f'pod_uid="{UID}"' in metrics


def test_a_missing_token_file_means_loopback_only(settings, tmp_path: Path) -> None:
    missing = settings.model_copy(update={"pods_token_file": tmp_path / "absent"})
    response, _ = _usage(create_app(missing), ELSEWHERE, {"Authorization": "Bearer "})
    assert response.json()["pods"] == {}
