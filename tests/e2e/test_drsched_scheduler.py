"""The shipped kube-scheduler-config/ files, run by the stock kube-scheduler against a real extender over HTTP.

For now the extender is the TEST DOUBLE in extender_double.py; the assertions only use what the
real extender must also show (verbs received, where pods land), so the same tests will run against
`python -m extender` once it lands.
"""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request

import pytest

from .cluster import ControlPlane
from .extender_double import ExtenderDouble
from .objects import small_pod
from .schedconfig import ExtenderTls

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_opted_in_pod_is_filtered_and_scored_by_the_extender(
    cluster: ControlPlane, drsched_scheduler, extender_double: ExtenderDouble, unique
) -> None:
    extender_double.reject = {"kwok-large"}
    extender_double.prefer = "kwok-small"
    drsched_scheduler(cluster.render_scheduler_config("drsched-scheduler.yaml", extender_url=extender_double.url))

    name = unique("opted-in")
    cluster.create_pod(small_pod(name, scheduler_name="drsched"))

    # The stock plugins alone would favour the emptier kwok-medium; only the extender's score picks kwok-small.
    assert cluster.wait_pod_bound(name) == "kwok-small"
    assert {"filter", "prioritize"} <= extender_double.verbs(name)
    filter_call = next(c for c in extender_double.calls if c.verb == "filter" and c.pod_name == name)
    assert filter_call.body["Nodes"] is None  # nodeCacheCapable: names only
    # Other tests of the session may add nodes of their own, hence a subset.
    assert {"kwok-small", "kwok-medium", "kwok-large"} <= set(filter_call.body["NodeNames"])
    cluster.wait_pod_phase(name, "Running")


def test_pods_of_the_default_scheduler_never_reach_the_extender(
    cluster: ControlPlane, drsched_scheduler, extender_double: ExtenderDouble, unique
) -> None:
    drsched_scheduler(cluster.render_scheduler_config("drsched-scheduler.yaml", extender_url=extender_double.url))
    name = unique("not-opted-in")
    cluster.create_pod(small_pod(name))
    cluster.wait_pod_bound(name)
    assert extender_double.verbs(name) == set()


def test_binding_extender_binds_the_pod(
    cluster: ControlPlane, drsched_scheduler, extender_double: ExtenderDouble, unique
) -> None:
    extender_double.prefer = "kwok-medium"
    extender_double.bind = lambda ns, pod, uid, node: cluster.bind_pod(ns, pod, uid, node)
    drsched_scheduler(cluster.render_scheduler_config("drsched-scheduler-bind.yaml", extender_url=extender_double.url))

    name = unique("bound-by-extender")
    cluster.create_pod(small_pod(name, scheduler_name="drsched"))
    assert cluster.wait_pod_bound(name) == "kwok-medium"
    assert {"filter", "prioritize", "bind"} <= extender_double.verbs(name)


def test_mtls_extender_sees_the_scheduler_client_certificate(cluster: ControlPlane, drsched_scheduler, unique) -> None:
    pki = cluster.pki
    server = pki.issue("extender-serving", common_name="drsched-extender", dns_names=("drsched-extender",), server=True)
    scheduler_client = pki.issue("scheduler-client", common_name="drsched-scheduler", client=True)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(str(server.cert), str(server.key))
    tls.load_verify_locations(str(pki.ca.cert))
    tls.verify_mode = ssl.CERT_REQUIRED  # the extender refuses callers without a client certificate
    double = ExtenderDouble(prefer="kwok-medium", tls_context=tls).start()
    try:
        # Without a client certificate the extender refuses the connection.
        anonymous = ssl.create_default_context(cafile=str(pki.ca.cert))
        anonymous.check_hostname = False
        with pytest.raises((ssl.SSLError, ConnectionError, urllib.error.URLError)):
            urllib.request.urlopen(
                urllib.request.Request(double.url + "filter", data=b"{}"), context=anonymous, timeout=5
            )

        config = cluster.render_scheduler_config(
            "drsched-scheduler-mtls.yaml",
            extender_url=double.url,
            tls=ExtenderTls(cert_file=scheduler_client.cert, key_file=scheduler_client.key, ca_file=pki.ca.cert),
        )
        drsched_scheduler(config)
        name = unique("mtls")
        cluster.create_pod(small_pod(name, scheduler_name="drsched"))
        assert cluster.wait_pod_bound(name) == "kwok-medium"
        assert {"filter", "prioritize"} <= double.verbs(name)
    finally:
        double.close()
