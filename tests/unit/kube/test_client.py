"""The one HTTP status -> error mapping: the type says what happens next."""

from __future__ import annotations

import json

import pytest
from kubernetes.client.exceptions import ApiException

from kube.client import api_errors, status_message
from kube.errors import Conflict, NotFound, PermanentError, TemporaryError


def api_exception(status: int, message: str = "nope", headers: dict | None = None) -> ApiException:
    exc = ApiException(status=status, reason="Reason")
    exc.body = json.dumps({"kind": "Status", "message": message})
    exc.headers = headers
    return exc


@pytest.mark.parametrize("status, kind", [(404, NotFound), (409, Conflict), (429, TemporaryError),
                                          (500, TemporaryError), (503, TemporaryError), (0, TemporaryError),
                                          (403, PermanentError), (422, PermanentError)])
def test_status_maps_to_the_error_that_says_what_next(status, kind):
    with pytest.raises(kind, match=rf"^read pod ns/p: {status} nope$"):
        with api_errors("read pod ns/p"):
            raise api_exception(status)


def test_retry_after_becomes_the_delay_and_connection_errors_are_temporary():
    with pytest.raises(TemporaryError) as err:
        with api_errors("evict"):
            raise api_exception(429, headers={"Retry-After": "7"})
    assert (err.value.delay, err.value.status) == (7.0, 429)
    with pytest.raises(TemporaryError):
        with api_errors("list nodes"):
            raise ConnectionResetError("reset")


def test_status_message_falls_back_to_the_reason():
    exc = ApiException(status=500, reason="Internal")
    exc.body = "<html>"
    assert status_message(exc) == "Internal"
    assert status_message(api_exception(409, "already exists")) == "already exists"


def test_the_client_names_its_drsched_process_in_the_user_agent(tmp_path):
    from kube.client import make_api_client
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}))
    api = make_api_client(kubeconfig=kubeconfig, component="extender")
    agent = api.default_headers["User-Agent"]  # the header every request sends
    assert agent.split("/", 1)[0] == "drsched-extender" and "python kubernetes/" in agent
    assert make_api_client(kubeconfig=kubeconfig).default_headers["User-Agent"].startswith("drsched-client/")


def _silent_server():
    """A TCP server that accepts connections and never answers: an apiserver that stopped responding."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held: list = []

    def accept():
        while True:
            try:
                held.append(srv.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    return srv, held


def test_a_default_request_timeout_ends_a_call_the_server_never_answers():
    import threading
    import time

    from kubernetes import client
    from urllib3.exceptions import ReadTimeoutError

    from kube.client import with_request_timeout

    srv, held = _silent_server()
    try:
        conf = client.Configuration(host=f"http://127.0.0.1:{srv.getsockname()[1]}")
        conf.retries = False
        core = client.CoreV1Api(with_request_timeout(client.ApiClient(conf), 0.5))
        # In a thread, so that a client without the timeout fails this test instead of hanging it.
        outcome: list = []

        def call():
            try:
                core.list_namespaced_pod("jobs")
            except ReadTimeoutError as exc:
                outcome.append(exc)

        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        worker.join(timeout=10)
        assert not worker.is_alive() and len(outcome) == 1, "the call never timed out"
        # A call that names its own timeout keeps it.
        t0 = time.monotonic()
        with pytest.raises(ReadTimeoutError):
            core.list_namespaced_pod("jobs", _request_timeout=1.5)
        assert time.monotonic() - t0 >= 1.4
    finally:
        srv.close()
        for conn in held:
            conn.close()


def test_a_request_timeout_must_be_positive():
    from kubernetes import client

    from kube.client import with_request_timeout

    with pytest.raises(ValueError, match="positive"):
        with_request_timeout(client.ApiClient(client.Configuration(host="http://127.0.0.1:1")), 0)
