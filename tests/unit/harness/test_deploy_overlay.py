"""The registry overlay as docs/deploy.md renders it: every drsched image at the user's registry and tag.

The guide's own render block runs (bash, with REGISTRY/TAG/SITE set as a user sets them) and ``kubectl
kustomize`` (the control-plane build's kubectl, the same kustomize a user's kubectl has) reads the result.
Needs only the kubectl binary: no cluster, no images.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from harness.images import __main__ as cli
from harness.images.push import PushError, destination, is_loopback
from tests.guide import block_with, e2e_blocks, run_block
from tests.helpers import REPO

BUILD_SH = REPO / "harness" / "controlplane" / "build.sh"
DRSCHED_IMAGES = {"drsched-extender": "extender", "drsched-monitor": "monitor", "drsched-migration": "migration"}


@pytest.fixture(scope="module")
def kubectl_dir() -> Path:
    bin_dir = Path(subprocess.run([str(BUILD_SH), "--bin-dir"], capture_output=True, text=True,
                                  check=True).stdout.strip())  # fmt: skip
    if not (bin_dir / "kubectl").is_file():
        found = shutil.which("kubectl")
        if found is None:
            pytest.skip(f"OVERLAY NOT RENDERED: no kubectl in {bin_dir} (harness/controlplane/build.sh) or on PATH")
        return Path(found).parent
    return bin_dir


def _render(kubectl_dir: Path, path: Path) -> list[dict]:
    done = subprocess.run([str(kubectl_dir / "kubectl"), "kustomize", str(path)], capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def _containers(doc: dict) -> list[dict]:
    spec = doc.get("spec", {}).get("template", {}).get("spec", {})
    return [*spec.get("initContainers", []), *spec.get("containers", [])]


def _keys(docs: list[dict]) -> set[tuple[str, str]]:
    return {(doc["kind"], doc["metadata"]["name"]) for doc in docs}


def test_the_guides_kustomization_points_every_drsched_image_at_the_registry(kubectl_dir: Path,
                                                                             tmp_path: Path) -> None:  # fmt: skip
    site = tmp_path / "site"
    env = {"REGISTRY": "registry.example.com:5000/team", "TAG": "abc123", "SITE": str(site),
           "PATH": f"{kubectl_dir}:/usr/bin:/bin"}  # fmt: skip
    done = run_block(block_with(e2e_blocks(), "kubectl kustomize"), env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    docs = _render(kubectl_dir, site)
    images = {doc["metadata"]["name"]: [c["image"] for c in _containers(doc)] for doc in docs if _containers(doc)}
    for workload, name in DRSCHED_IMAGES.items():
        assert images[workload] == [f"registry.example.com:5000/team/drsched/{name}:abc123"]
    # The second scheduler is there, with the stock image; nothing else is pulled from anywhere.
    assert images.pop("drsched-scheduler") == ["registry.k8s.io/kube-scheduler:v1.35.4"]
    assert set(images) == set(DRSCHED_IMAGES)
    # What the guide's block printed is what the cluster will pull.
    assert sorted(line.split("image:")[1].strip() for line in done.stdout.splitlines()) == sorted(
        i for found in [*images.values(), ["registry.k8s.io/kube-scheduler:v1.35.4"]] for i in found)
    for doc in docs:
        for container in _containers(doc):
            assert container["imagePullPolicy"] == "IfNotPresent", doc["metadata"]["name"]


def test_the_overlay_is_everything_in_manifests_with_the_second_scheduler(kubectl_dir: Path) -> None:
    overlay = _render(kubectl_dir, REPO / "manifests" / "overlays" / "registry")
    assert _keys(overlay) == _keys(_render(kubectl_dir, REPO / "manifests"))
    (config,) = [d for d in overlay if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith(
        "drsched-scheduler-config")]  # fmt: skip
    scheduler = yaml.safe_load(config["data"]["config.yaml"])
    assert [p["schedulerName"] for p in scheduler["profiles"]] == ["drsched"]
    # Unconfigured, it names no real registry: a pull fails instead of fetching someone else's drsched/*.
    hosts = {c["image"].split("/")[0] for d in overlay for c in _containers(d)}
    assert hosts == {"registry.invalid", "registry.k8s.io"}


@pytest.mark.parametrize(("registry", "name", "tag", "expected", "loopback"), [
    ("127.0.0.1:5000", "monitor", "0.1.0", "127.0.0.1:5000/drsched/monitor:0.1.0", True),
    ("localhost:32000", "extender", "abc", "localhost:32000/drsched/extender:abc", True),
    ("registry.example.com/team", "migration", "v1", "registry.example.com/team/drsched/migration:v1", False),
    ("127.0.0.1.example.com:443", "monitor", "t", "127.0.0.1.example.com:443/drsched/monitor:t", False),
])  # fmt: skip
def test_push_destinations_and_which_registries_skip_tls(registry: str, name: str, tag: str, expected: str,
                                                          loopback: bool) -> None:  # fmt: skip
    assert destination(registry, name, tag) == expected
    assert is_loopback(registry) is loopback


@pytest.mark.parametrize(("registry", "tag"), [
    ("https://registry.example.com", "t"), ("registry.example.com/", "t"), ("reg:5000", "-bad"),
    ("reg:5000", "a:b"), ("", "t"),
])  # fmt: skip
def test_push_refuses_a_registry_or_tag_that_cannot_name_an_image(registry: str, tag: str) -> None:
    with pytest.raises(PushError):
        destination(registry, "monitor", tag)


def test_the_push_command_refuses_a_bad_registry_before_building(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:

    def no_build(**_: object) -> None:
        raise AssertionError("built images for a push that cannot name them")

    monkeypatch.setattr(cli, "ensure_images", no_build)
    assert cli.main(["push", "--registry", "https://registry.example.com", "--tag", "t"]) == 2
    assert "is not host[:port][/path]" in capsys.readouterr().err
