"""Every file in kube-scheduler-config/ renders, and the real kube-scheduler accepts it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from harness import schedconfig
from harness.cluster import Binaries
from harness.pki import Pki

CONFIGS = schedconfig.config_files()
TLS = schedconfig.ExtenderTls(
    cert_file=Path("/t/client.crt"), key_file=Path("/t/client.key"), ca_file=Path("/t/ca.crt")
)


def _render(source: Path, tmp_path: Path) -> dict:
    dest = schedconfig.render(
        source, tmp_path / source.name, kubeconfig=Path("/k/kubeconfig"), extender_url="http://127.0.0.1:4321", tls=TLS
    )
    return yaml.safe_load(dest.read_text())


def test_there_are_configs_to_check() -> None:
    assert {p.name for p in CONFIGS} >= {
        "drsched-scheduler.yaml",
        "drsched-scheduler-bind.yaml",
        "drsched-scheduler-mtls.yaml",
    }


@pytest.mark.parametrize("source", CONFIGS, ids=lambda p: p.name)
def test_render_fills_in_local_fields_only(source: Path, tmp_path: Path) -> None:
    original = yaml.safe_load(source.read_text())
    rendered = _render(source, tmp_path)
    assert rendered["clientConnection"]["kubeconfig"] == "/k/kubeconfig"
    assert rendered["leaderElection"]["leaderElect"] is False
    for before, after in zip(original["extenders"], rendered["extenders"], strict=True):
        assert after["urlPrefix"] == "http://127.0.0.1:4321/"
        assert before["nodeCacheCapable"] is True  # names-only payloads; see README.md
        if before.get("enableHTTPS"):
            assert after["tlsConfig"]["certFile"] == "/t/client.crt"
        unchanged = {k: v for k, v in before.items() if k not in {"urlPrefix", "tlsConfig"}}
        assert {k: after[k] for k in unchanged} == unchanged
    assert rendered["profiles"] == original["profiles"]


def test_render_refuses_https_without_tls_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="tls="):
        schedconfig.render("drsched-scheduler-mtls.yaml", tmp_path / "x.yaml", kubeconfig=Path("/k"))


@pytest.mark.e2e
@pytest.mark.parametrize("source", CONFIGS, ids=lambda p: p.name)
def test_kube_scheduler_accepts_the_config(source: Path, tmp_path: Path, controlplane_binaries: Binaries) -> None:
    # kube-scheduler reads the kubeconfig before it writes the config, but never dials the server.
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "x", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "x", "user": {}}],
        "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}],
    }))  # fmt: skip
    pki = Pki(tmp_path / "pki")  # the scheduler loads the extender's TLS files at start-up
    client = pki.issue("client", common_name="drsched-scheduler", client=True)
    tls = schedconfig.ExtenderTls(cert_file=client.cert, key_file=client.key, ca_file=pki.ca.cert)
    rendered = schedconfig.render(
        source, tmp_path / "config.yaml", kubeconfig=kubeconfig, extender_url="http://127.0.0.1:4321", tls=tls
    )
    done = subprocess.run(
        [controlplane_binaries["kube-scheduler"], f"--config={rendered}", f"--write-config-to={tmp_path / 'out.yaml'}"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    effective = yaml.safe_load((tmp_path / "out.yaml").read_text())
    assert [p["schedulerName"] for p in effective["profiles"]] == ["drsched"]
    assert effective["extenders"][0]["httpTimeout"] == yaml.safe_load(source.read_text())["extenders"][0]["httpTimeout"]
