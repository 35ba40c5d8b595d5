"""The extender serving HTTPS, with and without required client certificates (mutual TLS).

A real ``python -m extender --static-cluster ...`` with certificates made by the ``openssl`` CLI: a caller
presenting a certificate from the trusted CA is served; one with a certificate from another CA, or an
expired one, is refused during the handshake; one without a certificate reaches the probes and metrics but
gets 403 from the verbs. Every refusal is logged with the peer's address and counted; none binds. Bad
option combinations and unreadable files exit 2 before serving.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from extender.settings import build_settings
from kube.errors import ConfigError
from tests.helpers import REPO, deadline, free_port, wait_for

from .payloads import EXAMPLE

pytestmark = pytest.mark.timeout(90)


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


def _ca(d: Path, name: str) -> tuple[Path, Path]:
    _openssl("req", "-x509", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "1", "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign", cwd=d)
    return d / f"{name}.crt", d / f"{name}.key"


def _leaf(d: Path, name: str, ca: str, usage: str, days: int = 1) -> tuple[Path, Path]:
    (d / f"{name}.ext").write_text(f"extendedKeyUsage={usage}\nsubjectAltName=DNS:drsched-extender,IP:127.0.0.1\n")
    _openssl("req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=d)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial",
             "-days", str(days), "-extfile", f"{name}.ext", "-out", f"{name}.crt", cwd=d)
    return d / f"{name}.crt", d / f"{name}.key"


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("tls")
    _ca(d, "ca")
    _ca(d, "other-ca")
    _leaf(d, "server", "ca", "serverAuth")
    _leaf(d, "client", "ca", "clientAuth")
    _leaf(d, "stranger", "other-ca", "clientAuth")
    _leaf(d, "expired", "ca", "clientAuth", days=-1)  # notAfter a day before notBefore: expired from the start
    return d


def _start(args: list[str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "extender", "--static-cluster", str(EXAMPLE), "--port", str(port),
                             "--debug-port", "0", *args], cwd=REPO, env=os.environ.copy(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    return proc, port


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=deadline(10))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=deadline(10))


def _get(url: str, ctx: ssl.SSLContext) -> dict:
    with urllib.request.urlopen(url, context=ctx, timeout=3) as resp:
        return json.loads(resp.read())


def _client_ctx(pki: Path, cert: str | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    if cert is not None:
        ctx.load_cert_chain(str(pki / f"{cert}.crt"), str(pki / f"{cert}.key"))
    return ctx


def _wait_up(proc: subprocess.Popen, url: str, ctx: ssl.SSLContext | None) -> None:
    def up() -> bool:
        if proc.poll() is not None:
            pytest.fail(f"extender exited {proc.returncode}: {proc.stdout.read().decode()[-2000:]}")
        _get(url, ctx)
        return True

    wait_for(up, timeout=30, every=0.2, what=f"the extender at {url}", ignore=(OSError,))  # ssl.SSLError too


def _post(url: str, body: dict, ctx: ssl.SSLContext) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=3) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


MTLS = ["--tls-cert-file", "{pki}/server.crt", "--tls-key-file", "{pki}/server.key", "--tls-client-ca-file",
        "{pki}/ca.crt", "--log-format", "text"]
BIND = {"PodName": "batch-7", "PodNamespace": "jobs", "PodUID": "u-7", "Node": "node-b"}
REFUSED = (ssl.SSLError, ConnectionError, urllib.error.URLError)


def test_mtls_serves_a_trusted_client_and_refuses_the_others(pki: Path) -> None:
    proc, port = _start([a.format(pki=pki) for a in MTLS])
    base = f"https://127.0.0.1:{port}"
    try:
        _wait_up(proc, f"{base}/readyz", _client_ctx(pki, "client"))
        assert _post(f"{base}/filter", {"Pod": None, "NodeNames": []}, _client_ctx(pki, "client"))[0] == 200
        # no certificate: probes and scrapes get through (kubelet and Prometheus present none), verbs do not
        assert _get(f"{base}/readyz", _client_ctx(pki, None))["status"] in ("ready", "degraded")
        for verb in ("filter", "prioritize", "preempt"):
            status, body = _post(f"{base}/{verb}", {"Pod": None, "NodeNames": []}, _client_ctx(pki, None))
            assert status == 403 and "client certificate" in body["Error"], verb
        for who in ("stranger", "expired"):  # refused in the handshake, whatever the path
            with pytest.raises(REFUSED):
                _get(f"{base}/healthz", _client_ctx(pki, who))
        with pytest.raises((ConnectionError, urllib.error.URLError)):  # plain HTTP is not served either
            urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=3).read()
    finally:
        _stop(proc)


def test_bind_needs_a_client_certificate_from_the_ca_and_every_refusal_is_logged_with_the_peer(pki: Path) -> None:
    proc, port = _start([a.format(pki=pki) for a in MTLS] + ["--bind-enabled", "true"])
    base = f"https://127.0.0.1:{port}"
    try:
        _wait_up(proc, f"{base}/readyz", _client_ctx(pki, "client"))
        status, body = _post(f"{base}/bind", BIND, _client_ctx(pki, None))
        assert status == 403 and "client certificate" in body["Error"]
        for who in ("stranger", "expired"):
            with pytest.raises(REFUSED):
                _post(f"{base}/bind", BIND, _client_ctx(pki, who))
        metrics = urllib.request.urlopen(urllib.request.Request(f"{base}/metrics"), context=_client_ctx(pki, None),
                                         timeout=3).read().decode()
        assert 'drsched_extender_refused_total{reason="no_client_cert"} 1.0' in metrics
        assert 'drsched_extender_refused_total{reason="tls_handshake"} 2.0' in metrics
        assert "drsched_extender_binds_total{" not in metrics, "nothing was bound"
        assert _post(f"{base}/bind", BIND, _client_ctx(pki, "client")) == (200, {"Error": ""})
    finally:
        _stop(proc)
    log = proc.stdout.read().decode()
    refusals = [line for line in log.splitlines() if "caller refused" in line]
    assert all("peer=127.0.0.1:" in line for line in refusals) and len(refusals) == 3, log[-3000:]
    assert any("reason=no_client_cert" in line and "path=/bind" in line for line in refusals)
    assert any("reason=tls_handshake" in line and "unable to get local issuer" in line for line in refusals)
    assert any("reason=tls_handshake" in line and "expired" in line for line in refusals)


def test_bind_is_off_by_default(pki: Path) -> None:
    proc, port = _start([a.format(pki=pki) for a in MTLS])
    base = f"https://127.0.0.1:{port}"
    try:
        _wait_up(proc, f"{base}/readyz", _client_ctx(pki, "client"))
        status, body = _post(f"{base}/bind", BIND, _client_ctx(pki, "client"))  # even with the right certificate
        assert status == 404 and "bind is disabled" in body["Error"]
    finally:
        _stop(proc)


def test_bind_without_a_client_ca_is_refused_at_start_unless_the_insecure_flag_says_so() -> None:
    done = subprocess.run([sys.executable, "-m", "extender", "--static-cluster", str(EXAMPLE), "--port",
                           str(free_port()), "--bind-enabled", "true"], cwd=REPO, capture_output=True, text=True,
                          timeout=deadline(30))
    assert done.returncode == 2
    assert "tls_client_ca_file" in done.stderr and "insecure_bind_without_client_ca" in done.stderr
    assert "Traceback" not in done.stderr
    proc, port = _start(["--bind-enabled", "true", "--insecure-bind-without-client-ca", "true", "--log-format",
                         "text"])
    try:
        _wait_up(proc, f"http://127.0.0.1:{port}/readyz", None)
    finally:
        _stop(proc)
    lines = [ln for ln in proc.stdout.read().decode().splitlines()
             if "INSECURE: POST /bind is served to ANY caller" in ln]
    assert len(lines) == 1 and " ERROR extender." in lines[0]


def test_https_without_client_ca_serves_anyone(pki: Path) -> None:
    proc, port = _start(["--tls-cert-file", str(pki / "server.crt"), "--tls-key-file", str(pki / "server.key")])
    try:
        _wait_up(proc, f"https://127.0.0.1:{port}/healthz", _client_ctx(pki, None))
        assert _get(f"https://127.0.0.1:{port}/healthz", _client_ctx(pki, None)) == {"status": "ok"}
    finally:
        _stop(proc)


@pytest.mark.parametrize("overrides, message", [
    ({"tls_cert_file": "a.crt"}, "tls_cert_file and tls_key_file go together"),
    ({"tls_key_file": "a.key"}, "tls_cert_file and tls_key_file go together"),
    ({"tls_client_ca_file": "ca.crt"}, "needs HTTPS"),
])
def test_bad_tls_combinations_are_refused(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_settings(None, static_cluster=str(EXAMPLE), **overrides)


def test_missing_tls_file_exits_2_naming_it(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "extender", "--static-cluster", str(EXAMPLE), "--port",
                           str(free_port()), "--tls-cert-file", str(tmp_path / "nope.crt"),
                           "--tls-key-file", str(tmp_path / "nope.key")],
                          cwd=REPO, capture_output=True, text=True, timeout=deadline(30))
    assert done.returncode == 2
    assert "TLS files" in done.stderr
