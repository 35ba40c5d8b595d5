"""Who may bind, read and steer placement through the REAL extender, on the real control plane.

- A caller without a client certificate, with one from another CA, or with an expired one cannot bind:
  403 or a refused handshake, each logged with the peer's address, and the pod stays unbound.
- The stock kube-scheduler with the configured client certificate binds through the extender
  (kube-scheduler-config/drsched-scheduler-bind.yaml, rendered with the test's certificates).
- The debug listener is not reachable on the address the service listens on.
- A pod whose profile annotation understates its workload's trusted learned profile is scored with the
  learned profile: counted once per pod (with an Event on it), logged once per workload.
"""

from __future__ import annotations

import json
import socket
import ssl
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from extender.profile_learning import Profile
from extender.profile_store import encode
from harness.cluster import ControlPlane
from harness.extender_proc import Extenders, mtls
from harness.objects import small_pod
from harness.pki import Pki

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]
REFUSED = (ssl.SSLError, ConnectionError, urllib.error.URLError)


def _post(url: str, body: dict, context: ssl.SSLContext) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=context, timeout=5) as resp:  # noqa: S310 (loopback)
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _context(ca: Path, cert=None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca))
    if cert is not None:
        context.load_cert_chain(str(cert.cert), str(cert.key))
    return context


def test_callers_without_the_right_certificate_cannot_bind_and_the_pod_stays_unbound(
    cluster: ControlPlane, extenders: Extenders, unique, tmp_path: Path
) -> None:
    certs = mtls(cluster.pki, name="refuse")
    ext = extenders.start(bind=True, tls=certs.server, client_context=certs.client)
    stranger = Pki(tmp_path / "other-ca").issue("stranger", common_name="drsched-scheduler", client=True)
    expired = cluster.pki.issue("expired-client", common_name="drsched-scheduler", client=True, days=-1)
    name = unique("not-yours")
    uid = cluster.create_pod(small_pod(name, scheduler_name="nobody")).metadata.uid  # no scheduler serves it
    args = {"PodName": name, "PodNamespace": "default", "PodUID": uid, "Node": "kwok-small"}

    status, body = _post(f"{ext.url}/bind", args, _context(cluster.pki.ca.cert))
    assert status == 403 and "client certificate" in body["Error"]
    for cert in (stranger, expired):
        with pytest.raises(REFUSED):
            _post(f"{ext.url}/bind", args, _context(cluster.pki.ca.cert, cert))

    time.sleep(1)  # a bind that got through would have landed by now
    assert cluster.core.read_namespaced_pod(name, "default").spec.node_name is None
    assert ext.counter("drsched_extender_binds_total") == 0
    assert ext.counter("drsched_extender_refused_total", reason="no_client_cert") == 1
    assert ext.counter("drsched_extender_refused_total", reason="tls_handshake") == 2
    refusals = [line for line in ext.log_path.read_text().splitlines() if "caller refused" in line]
    assert len(refusals) == 3 and all("peer=127.0.0.1:" in line for line in refusals), refusals
    assert any("expired" in line for line in refusals)

    assert ext.post("bind", args) == {"Error": ""}  # the scheduler's certificate does bind
    assert cluster.core.read_namespaced_pod(name, "default").spec.node_name == "kwok-small"


def test_kube_scheduler_with_the_configured_certificate_binds_through_the_extender(
    cluster: ControlPlane, drsched_scheduler, extenders: Extenders, unique
) -> None:
    certs = mtls(cluster.pki, name="sched-binds")
    ext = extenders.start(bind=True, tls=certs.server, client_context=certs.client)
    drsched_scheduler(cluster.render_scheduler_config("drsched-scheduler-bind.yaml", extender_url=ext.url,
                                                      tls=certs.scheduler))
    name = unique("mtls-bound")
    cluster.create_pod(small_pod(name, scheduler_name="drsched"))
    node = cluster.wait_pod_bound(name)
    decision = cluster.poll(lambda: ((ext.explain(name) or {}).get("last_decision") or {}).get("bound_to") and
                            ext.explain(name)["last_decision"], timeout=10, what="the extender's bind")
    assert decision["bound_to"] == node
    assert ext.counter("drsched_extender_binds_total", outcome="ok") >= 1
    assert ext.counter("drsched_extender_refused_total") == 0


def _service_address() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))  # UDP: picks the outgoing address, sends nothing
            address = s.getsockname()[0]
        except OSError:
            address = "127.0.0.1"
    return address if not address.startswith("127.") else "127.0.0.2"


def test_the_debug_listener_is_not_reachable_on_the_service_address(
    cluster: ControlPlane, extenders: Extenders
) -> None:
    ext = extenders.start(extra=["--host=0.0.0.0"])  # the service on every address, as in a pod
    address = _service_address()
    with urllib.request.urlopen(f"http://{address}:{ext.port}/readyz", timeout=5) as resp:  # noqa: S310
        assert resp.status == 200
    with pytest.raises(urllib.error.HTTPError) as not_found:
        urllib.request.urlopen(f"http://{address}:{ext.port}/debug/usage", timeout=5)  # noqa: S310
    assert not_found.value.code == 404
    with pytest.raises(urllib.error.URLError):  # nothing listens on the debug port there
        urllib.request.urlopen(f"http://{address}:{ext.debug_port}/debug/usage", timeout=5)  # noqa: S310
    assert "kwok-small" in ext.get("/debug/usage")["nodes"]  # on loopback, as kubectl port-forward reaches it


def test_a_lying_annotation_is_overridden_once_the_learned_profile_is_trusted(
    cluster: ControlPlane, drsched_scheduler, extenders: Extenders, unique, tmp_path: Path
) -> None:
    workload = unique("web")
    key = f"default/{workload}"  # the drsched.io/workload label names it within the pod's namespace
    now = time.time()
    # what the workload's pods were measured using: 2 cores, 1 GiB; 12 samples each (trusted from 6)
    learned = Profile(demand=(2.0, 1.0, 40.0, 5.0), samples=(12, 12, 12, 12), first_seen=now - 600,
                      updated_at=now, pods=3)
    profiles = tmp_path / "profiles.json"
    profiles.write_text(encode({key: learned}, now=now))
    ext = extenders.start(extra=[f"--profile-file={profiles}"])
    drsched_scheduler(cluster.render_scheduler_config("drsched-scheduler.yaml", extender_url=ext.url))

    names = [unique("liar-a"), unique("liar-b")]
    for name in names:
        pod = small_pod(name, scheduler_name="drsched", cpu="500m", memory="256Mi",
                        labels={"drsched.io/workload": workload})
        pod.metadata.annotations = {"drsched.io/profile": "cpu=0.01,mem=0.01"}
        cluster.create_pod(pod)
    for name in names:
        cluster.wait_pod_bound(name)
        decision = cluster.poll(lambda n=name: (ext.explain(n) or {}).get("last_decision"), timeout=10,
                                what=f"decision for {name}")
        assert decision["demand_source"] == "learned", decision
        explained = ext.explain(name)
        assert explained["pod"]["demand"] == pytest.approx([2.0, 1.0, 40.0, 5.0])
    assert ext.counter("drsched_extender_annotation_overridden_total") == len(names)  # once per pod
    for name in names:  # and its owner is told why, on the pod
        events = cluster.poll(lambda n=name: [e for e in cluster.core.list_namespaced_event(
            "default", field_selector=f"involvedObject.name={n}").items if e.reason == "ProfileAnnotationNotBelieved"]
            or None, timeout=10, what=f"the Event on {name}")
        assert len(events) == 1 and "understates cpu, mem" in events[0].message
    log = ext.log_path.read_text()
    assert log.count("profile annotation not believed") == 1, "once per workload"
    assert f"workload={key}" in log
