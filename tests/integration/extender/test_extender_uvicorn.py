"""A real ``python -m extender --static-cluster ...`` over HTTP, hit exactly as kube-scheduler hits it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pytest

from tests.helpers import REPO, deadline, free_port

from .payloads import NODE_NAMES, V1_POD, post, v1_node

pytestmark = pytest.mark.timeout(60)


def go_marshal(obj) -> bytes:
    """Like Go's json.Marshal: compact, nil pointers as null."""
    return json.dumps(obj, separators=(",", ":")).encode()


def test_filter_and_prioritize_node_cache_capable(server):
    body = go_marshal({"Pod": V1_POD, "Nodes": None, "NodeNames": NODE_NAMES})
    status, raw = post(f"{server}/scheduler/filter", body)
    assert status == 200
    result = json.loads(raw)
    assert result["NodeNames"] == ["node-b", "node-c", "node-d"] and result["Nodes"] is None
    status, raw = post(f"{server}/scheduler/prioritize", body)
    scores = json.loads(raw)
    assert status == 200 and [s["Host"] for s in scores] == NODE_NAMES
    assert all(type(s["Score"]) is int for s in scores)


def test_filter_full_nodes(server):
    body = go_marshal({"Pod": V1_POD, "Nodes": {"metadata": {}, "items": [v1_node("k1"), v1_node("k2", cpu="0")]},
                       "NodeNames": None})
    status, raw = post(f"{server}/scheduler/filter", body)
    result = json.loads(raw)
    assert status == 200 and [n["metadata"]["name"] for n in result["Nodes"]["items"]] == ["k1"]
    assert result["NodeNames"] is None and "k2" in result["FailedNodes"]


def test_bind_and_preempt(server):
    status, raw = post(f"{server}/scheduler/bind", go_marshal(
        {"PodName": "batch-7", "PodNamespace": "jobs", "PodUID": "u", "Node": "node-c"}))
    assert (status, json.loads(raw)) == (200, {"Error": ""})
    victims = {"node-a": {"Pods": [{"UID": "x"}], "NumPDBViolations": 0}}
    status, raw = post(f"{server}/scheduler/preempt", go_marshal(
        {"Pod": V1_POD, "NodeNameToVictims": None, "NodeNameToMetaVictims": victims}))
    assert (status, json.loads(raw)) == (200, {"NodeNameToMetaVictims": victims})


def test_garbage_is_400_not_500(server):
    for raw in (b"{", b"null", b'{"Pod": []}', b"\xff\xfe"):
        status, body = post(f"{server}/scheduler/prioritize", raw)
        assert status == 400 and "Error" in json.loads(body)


def test_ops_endpoints(server):
    ready = json.loads(urllib.request.urlopen(f"{server}/readyz").read())
    assert ready["nodes"] == 5
    metrics = urllib.request.urlopen(f"{server}/metrics").read().decode()
    assert "drsched_extender_request_seconds_bucket" in metrics


def test_bad_static_cluster_exits_with_located_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("nodes:\n- name: a\n  cpu: 2\n  memory: lots\n")
    proc = subprocess.run([sys.executable, "-m", "extender", "--static-cluster", str(bad), "--port", str(free_port())],
                          cwd=REPO, capture_output=True, text=True, timeout=deadline(30))
    assert proc.returncode == 2
    assert f"{bad}:4: nodes[0].memory: cannot parse quantity 'lots'" in proc.stderr


def test_help_lists_every_option():
    from extender.settings import Settings

    out = subprocess.run([sys.executable, "-m", "extender", "--help"], cwd=REPO, capture_output=True, text=True,
                         timeout=deadline(30)).stdout
    for name in Settings.model_fields:
        assert f"--{name.replace('_', '-')}" in out


def test_an_idle_keep_alive_connection_outlives_uvicorns_default(server):
    """kube-scheduler keeps an idle connection to the extender for 90 s and reuses it; a POST that meets a
    connection the server closed (uvicorn's default: after 5 s) fails with 'broken pipe', and Go does not retry
    it. So the connection must still serve a request after sitting idle longer than uvicorn's default."""
    import http.client
    import time
    from urllib.parse import urlparse

    url = urlparse(server)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
    body = go_marshal({"Pod": V1_POD, "Nodes": None, "NodeNames": NODE_NAMES})
    for idle_s in (0.0, 6.5):  # the second request after the idle time, on the same socket
        time.sleep(idle_s)
        conn.request("POST", "/scheduler/filter", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 200 and json.loads(response.read())["NodeNames"]
        assert response.getheader("connection", "").lower() != "close"
    conn.close()
