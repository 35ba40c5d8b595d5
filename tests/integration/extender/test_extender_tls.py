"""The extender serving HTTPS, with and without required client certificates (mutual TLS).

A real ``python -m extender --static-cluster ...`` with certificates made by the ``openssl`` CLI: a caller
presenting a certificate from the trusted CA is served; one without a certificate, or with one from another
CA, is refused during the handshake. Bad option combinations and unreadable files exit 2 before serving.
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

from extender.errors import ConfigError
from extender.settings import build_settings
from tests.helpers import REPO, free_port, wait_for

from .payloads import EXAMPLE

pytestmark = pytest.mark.timeout(90)


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


def _ca(d: Path, name: str) -> tuple[Path, Path]:
    _openssl("req", "-x509", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "1", "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign", cwd=d)
    return d / f"{name}.crt", d / f"{name}.key"


def _leaf(d: Path, name: str, ca: str, usage: str) -> tuple[Path, Path]:
    (d / f"{name}.ext").write_text(f"extendedKeyUsage={usage}\nsubjectAltName=DNS:drsched-extender,IP:127.0.0.1\n")
    _openssl("req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=d)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial",
             "-days", "1", "-extfile", f"{name}.ext", "-out", f"{name}.crt", cwd=d)
    return d / f"{name}.crt", d / f"{name}.key"


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("tls")
    _ca(d, "ca")
    _ca(d, "other-ca")
    _leaf(d, "server", "ca", "serverAuth")
    _leaf(d, "client", "ca", "clientAuth")
    _leaf(d, "stranger", "other-ca", "clientAuth")
    return d


def _start(args: list[str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "extender", "--static-cluster", str(EXAMPLE), "--port", str(port),
                             *args], cwd=REPO, env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return proc, port


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def _get(url: str, ctx: ssl.SSLContext) -> dict:
    with urllib.request.urlopen(url, context=ctx, timeout=3) as resp:
        return json.loads(resp.read())


def _client_ctx(pki: Path, cert: str | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    if cert is not None:
        ctx.load_cert_chain(str(pki / f"{cert}.crt"), str(pki / f"{cert}.key"))
    return ctx


def _wait_up(proc: subprocess.Popen, url: str, ctx: ssl.SSLContext) -> None:
    def up() -> bool:
        if proc.poll() is not None:
            pytest.fail(f"extender exited {proc.returncode}: {proc.stdout.read().decode()[-2000:]}")
        _get(url, ctx)
        return True

    wait_for(up, timeout=30, every=0.2, what=f"the extender at {url}", ignore=(OSError,))  # ssl.SSLError too


def test_mtls_serves_a_trusted_client_and_refuses_the_others(pki: Path) -> None:
    proc, port = _start(["--tls-cert-file", str(pki / "server.crt"), "--tls-key-file", str(pki / "server.key"),
                         "--tls-client-ca-file", str(pki / "ca.crt")])
    url = f"https://127.0.0.1:{port}/readyz"
    try:
        _wait_up(proc, url, _client_ctx(pki, "client"))
        assert _get(url, _client_ctx(pki, "client"))["status"] in ("ready", "degraded")
        for who in (None, "stranger"):
            with pytest.raises((ssl.SSLError, ConnectionError, urllib.error.URLError)):
                _get(url, _client_ctx(pki, who))
        with pytest.raises((ConnectionError, urllib.error.URLError)):  # plain HTTP is not served either
            urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=3).read()
    finally:
        _stop(proc)


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
                          cwd=REPO, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "TLS files" in done.stderr
