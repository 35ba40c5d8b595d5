"""Fixtures for the extender integration tests (payload helpers live in ``payloads``)."""

import json
import os
import subprocess
import sys
import urllib.request

import pytest
from fastapi.testclient import TestClient

from extender.debug_routes import create_debug_app
from extender.service import create_app
from tests.helpers import REPO, free_port, wait_for

from .payloads import EXAMPLE, static_settings


@pytest.fixture
def app():
    # bind over plain HTTP: the local-tests-only flag (mTLS is tested in test_extender_tls.py)
    return create_app(static_settings(bind_enabled=True, insecure_bind_without_client_ca=True))


@pytest.fixture
def client(app):
    with TestClient(app) as c:
        yield c


@pytest.fixture
def debug(app, client):
    """The /debug/* app over the same runtime as ``client`` (the debug listener's app)."""
    return TestClient(create_debug_app(app))


@pytest.fixture(scope="module")
def server():
    port = free_port()
    env = {**os.environ, "DRSCHED_LOG_FORMAT": "json"}
    proc = subprocess.Popen([sys.executable, "-m", "extender", "--static-cluster", str(EXAMPLE), "--port", str(port),
                             "--url-prefix", "/scheduler", "--debug-port", "0",
                             "--bind-enabled", "true", "--insecure-bind-without-client-ca", "true"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        if proc.poll() is not None:
            pytest.fail(proc.stdout.read().decode())
        urllib.request.urlopen(f"{base}/healthz", timeout=1).read()
        return True

    wait_for(healthy, timeout=20, what=f"the extender at {base}/healthz", ignore=(OSError,))
    yield base
    proc.terminate()
    out, _ = proc.communicate(timeout=10)
    lines = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    assert any(entry["msg"] == "extender configured" and entry["port"] == port for entry in lines), \
        "the effective config is logged once, as JSON"


