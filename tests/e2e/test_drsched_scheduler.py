"""The shipped kube-scheduler-config/ files, run by the stock kube-scheduler against the REAL extender.

`python -m extender --kubeconfig <cluster>` serves every test here except one: the check of the raw
payload kube-scheduler sends (`Nodes: null` + `NodeNames` with nodeCacheCapable) needs to see the bytes
on the wire, which only the recording TEST DOUBLE (`extender_double`) keeps.
"""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request

import pytest

from harness.cluster import ControlPlane
from harness.extender_double import ExtenderDouble
from harness.extender_proc import Extenders, ServerTls
from harness.objects import small_pod
from harness.schedconfig import ExtenderTls

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_default_config_extender_filters_and_scores_stock_binder_binds(
    cluster: ControlPlane, drsched_scheduler, extenders: Extenders, unique
) -> None:
    ext = extenders.start()
    drsched_scheduler(cluster.render_scheduler_config("drsched-scheduler.yaml", extender_url=ext.url))

    name = unique("opted-in")
    cluster.create_pod(small_pod(name, scheduler_name="drsched"))
    node = cluster.wait_pod_bound(name)
    cluster.wait_pod_phase(name, "Running")

    decision = cluster.poll(lambda: (ext.explain(name) or {}).get("last_decision"), timeout=10,
                            what="the extender's decision")
    assert node in cluster.poll(lambda: {n["name"] for n in ext.explain(name)["nodes"]}, timeout=5, what="nodes")
    assert "bound_to" not in decision  # bindVerb unset: DefaultBinder bound it, not the extender
    assert ext.counter("drsched_extender_requests_total", verb="filter", outcome="ok") >= 1
    assert ext.counter("drsched_extender_requests_total", verb="prioritize", outcome="ok") >= 1
    assert ext.counter("drsched_extender_binds_total") == 0


def test_pods_of_the_default_scheduler_never_reach_the_extender(
    cluster: ControlPlane, drsched_scheduler, extenders: Extenders, unique
) -> None:
    ext = extenders.start()
    drsched_scheduler(cluster.render_scheduler_config("drsched-scheduler.yaml", extender_url=ext.url))
    name = unique("not-opted-in")
    cluster.create_pod(small_pod(name))
    cluster.wait_pod_bound(name)
    explained = cluster.poll(lambda: ext.explain(name), timeout=10, what="the pod in the extender's cache")
    assert explained["last_decision"] is None
    assert ext.counter("drsched_extender_requests_total", verb="filter") == 0


def test_scheduler_sends_node_names_only_when_node_cache_capable(
    cluster: ControlPlane, drsched_scheduler, extender_double: ExtenderDouble, unique
) -> None:
    """Needs the recording TEST DOUBLE: the real extender does not keep request bodies. (The full-nodes
    mode, nodeCacheCapable: false, is served by the real extender in test_extender_e2e.py.)"""
    extender_double.prefer = "kwok-small"
    drsched_scheduler(cluster.render_scheduler_config("drsched-scheduler.yaml", extender_url=extender_double.url))

    name = unique("payload")
    cluster.create_pod(small_pod(name, scheduler_name="drsched"))
    assert cluster.wait_pod_bound(name) == "kwok-small"
    filter_call = next(c for c in extender_double.calls if c.verb == "filter" and c.pod_name == name)
    assert filter_call.body["Nodes"] is None
    # Other tests of the session may add nodes of their own, hence a subset.
    assert {"kwok-small", "kwok-medium", "kwok-large"} <= set(filter_call.body["NodeNames"])


def test_mtls_extender_serves_the_scheduler_and_refuses_callers_without_its_certificate(
    cluster: ControlPlane, drsched_scheduler, extenders: Extenders, unique
) -> None:
    pki = cluster.pki
    server = pki.issue("extender-serving", common_name="drsched-extender", dns_names=("drsched-extender",),
                       ips=("127.0.0.1",), server=True)
    scheduler_client = pki.issue("scheduler-client", common_name="drsched-scheduler", client=True)
    trusted = ssl.create_default_context(cafile=str(pki.ca.cert))
    trusted.load_cert_chain(str(scheduler_client.cert), str(scheduler_client.key))
    ext = extenders.start(tls=ServerTls(cert=server.cert, key=server.key, client_ca=pki.ca.cert),
                          client_context=trusted)

    anonymous = ssl.create_default_context(cafile=str(pki.ca.cert))
    with pytest.raises((ssl.SSLError, ConnectionError, urllib.error.URLError)):
        urllib.request.urlopen(urllib.request.Request(ext.url + "/filter", data=b"{}"), context=anonymous, timeout=5)

    config = cluster.render_scheduler_config(
        "drsched-scheduler-mtls.yaml", extender_url=ext.url,
        tls=ExtenderTls(cert_file=scheduler_client.cert, key_file=scheduler_client.key, ca_file=pki.ca.cert),
    )  # fmt: skip
    drsched_scheduler(config)
    name = unique("mtls")
    cluster.create_pod(small_pod(name, scheduler_name="drsched"))
    cluster.wait_pod_bound(name)
    assert cluster.poll(lambda: (ext.explain(name) or {}).get("last_decision"), timeout=10, what="decision")
    assert ext.counter("drsched_extender_requests_total", verb="filter", outcome="ok") >= 1
