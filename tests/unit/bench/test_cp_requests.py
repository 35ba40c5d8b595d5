"""bench/cp_requests.py: metric keys and audit lines in, per-pod request tables out."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from harness.extender_proc import parse_metrics

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("cp_requests", ROOT / "bench" / "cp_requests.py")
cp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cp)

def _sample(name: str, value: float, **labels: str) -> str:
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}" + f" {value}"


def _req(value: float, *, code: str, resource: str, sub: str, verb: str, group: str = "") -> str:
    return _sample("apiserver_request_total", value, code=code, component="apiserver", dry_run="", group=group,
                   resource=resource, scope="resource", subresource=sub, verb=verb, version="v1")


def _watching(value: float, *, sub: str = "", verb: str = "WATCH") -> str:
    return _sample("apiserver_longrunning_requests", value, component="apiserver", group="", resource="pods",
                   scope="cluster", subresource=sub, verb=verb, version="v1")


BEFORE = parse_metrics("\n".join([
    "# TYPE apiserver_request_total counter",
    _req(10, code="201", resource="pods", sub="binding", verb="POST"),
    _req(4, code="200", resource="pods", sub="", verb="LIST"),
    _sample("apiserver_watch_events_total", 100, group="", resource="pods", version="v1"),
    _sample("apiserver_watch_events_sizes_sum", 204800, group="", resource="pods", version="v1"),
    _sample("etcd_requests_total", 7, operation="create", type="/registry/pods"),
    _watching(3)]))
AFTER = parse_metrics("\n".join([
    _req(30, code="201", resource="pods", sub="binding", verb="POST"),
    _req(2, code="409", resource="pods", sub="binding", verb="POST"),
    _req(4, code="200", resource="pods", sub="", verb="LIST"),
    _req(50, code="200", resource="leases", sub="", verb="PUT", group="coordination.k8s.io"),
    _sample("apiserver_watch_events_total", 180, group="", resource="pods", version="v1"),
    _sample("apiserver_watch_events_total", 20, group="", kind="Node", version="v1"),
    _sample("apiserver_watch_events_sizes_sum", 409600, group="", resource="pods", version="v1"),
    _sample("etcd_requests_total", 27, operation="create", type="/registry/pods"),
    _watching(4), _watching(9, sub="log", verb="GET")]))


@pytest.mark.parametrize("key, expected", [
    ("up", ("up", {})),
    ('m{a="x",b=""}', ("m", {"a": "x", "b": ""})),
    ('m{path="/a,b=c",q="say \\"hi\\""}', ("m", {"path": "/a,b=c", "q": 'say "hi"'})),
])
def test_labels_of(key, expected):
    assert cp.labels_of(key) == expected


def test_deltas_group_by_labels_and_leave_out_what_did_not_grow():
    assert cp.delta(BEFORE, AFTER, cp.REQUESTS, ("verb", "resource", "subresource")) == {
        "POST pods binding": 22, "PUT leases": 50}  # codes summed; the LIST did not grow
    # the older `kind` label stands in for `resource`
    assert cp.delta(BEFORE, AFTER, cp.WATCH_EVENTS, ("resource",)) == {"pods": 80, "Node": 20}


@pytest.mark.parametrize("agent, client", [
    ("kube-scheduler/v1.35.4 (linux/amd64) kubernetes/abcdef/scheduler", "kube-scheduler"),
    ("OpenAPI-Generator/31.0.0/python", "OpenAPI-Generator"),
    ("drsched-extender/0.1.0 (python kubernetes/31.0.0)", "drsched-extender"),
    ("", "-"),
])
def test_agent_of(agent, client):
    assert cp.agent_of(agent) == client


def _entry(agent: str, verb: str, resource: str | None = None, sub: str | None = None, uri: str = "/x") -> str:
    ref = {"resource": resource, "namespace": "ns", "apiVersion": "v1"} if resource else None
    if sub:
        ref["subresource"] = sub
    entry = {"kind": "Event", "level": "Metadata", "stage": "ResponseComplete", "verb": verb, "userAgent": agent,
             "requestURI": uri}
    if ref:
        entry["objectRef"] = ref
    return json.dumps(entry)


def test_audit_counts_per_client_verb_and_resource():
    ua = "kube-scheduler/v1.35.4 (linux/amd64) kubernetes/abc/scheduler"
    lines = [_entry(ua, "create", "pods", "binding"), _entry(ua, "create", "pods", "binding"),
             _entry("drsched-extender/0.1.0", "watch", "pods"), _entry("x/1", "get", uri="/metrics?a=1"),
             "not json", json.dumps({"kind": "Other"})]
    assert cp.audit_counts(lines) == {("kube-scheduler", "create pods/binding"): 2,
                                      ("drsched-extender", "watch pods"): 1, ("x", "get /metrics"): 1}


def test_audit_tail_returns_each_complete_line_once(tmp_path):
    log = tmp_path / "audit.log"
    tail = cp.AuditTail(log)
    assert tail.read() == []  # no file yet
    log.write_text("a\nb\n")
    tail.skip()
    with log.open("a") as f:
        f.write("c\nd")  # "d" is still being written
    assert tail.read() == [b"c"]
    with log.open("a") as f:
        f.write("\n")
    assert tail.read() == [b"d"] and tail.read() == []


def test_arm_requests_per_pod_and_the_table_reads_across_arms():
    ua = "drsched-extender/0.1.0"
    arm = cp.arm_requests(BEFORE, AFTER, [_entry(ua, "watch", "pods")] * 4, pods=20)
    assert arm["requests"] == {"POST pods binding": 1.1, "PUT leases": 2.5}
    assert arm["watch_events"] == {"pods": 4.0, "Node": 1.0}
    assert arm["watch_kib"] == {"pods": 10.0}
    assert arm["etcd"] == {"create /registry/pods": 1.0}
    assert arm["watches_open"] == {"pods": 4}  # WATCH only, not the GET log stream
    assert arm["by_client"] == {"drsched-extender watch pods": 0.2}
    assert "by_client" not in cp.arm_requests(BEFORE, AFTER, None, pods=20)
    other = cp.arm_requests(BEFORE, BEFORE, [], pods=20)
    lines = cp.render({"no-op": {"control_plane": other}, "drsched": {"control_plane": arm}, "x": {}})
    assert lines[0].split()[-2:] == ["no-op", "drsched"]  # an arm without figures gets no column
    leases = next(line for line in lines if "PUT leases" in line)
    assert leases.split()[-2:] == ["-", "2.50"]
    assert lines.index(next(x for x in lines if "PUT leases" in x)) < lines.index(
        next(x for x in lines if "POST pods binding" in x))  # the largest first
