"""`python -m harness.images push` against a real registry: the CNCF distribution registry on 127.0.0.1.

The registry is built from its Go module (harness/controlplane/build-registry.sh; a no-op once built) and
started with its own temporary storage (harness.registry). One image, the monitor (the smallest drsched
image), is pushed by the same command docs/deploy.md gives users, then read back through the registry's
API: the catalog, the tag list, and the manifest, whose config digest must be the built image's id.
About a minute once the registry binary and the monitor image are cached.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.images import ensure_images, unavailable_reason
from harness.registry import LocalRegistry, ensure_registry_binary
from tests.helpers import REPO

pytestmark = [pytest.mark.images, pytest.mark.slow]

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRegistry]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"PUSH NOT TESTED: this machine cannot build the drsched images: {reason}")
    if shutil.which("go") is None and not Path("/usr/local/go/bin/go").is_file():
        pytest.skip("PUSH NOT TESTED: no Go toolchain to build the registry (harness/controlplane/build-registry.sh)")
    with LocalRegistry(binary=ensure_registry_binary(), workdir=tmp_path_factory.mktemp("registry")) as running:
        yield running


def _manifest(registry: LocalRegistry, repository: str, tag: str) -> dict:
    request = urllib.request.Request(f"http://{registry.address}/v2/{repository}/manifests/{tag}",
                                     headers={"Accept": f"{OCI_MANIFEST}, {DOCKER_MANIFEST}"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=5) as resp:  # noqa: S310 (loopback)
        return json.loads(resp.read())


def test_the_push_command_puts_the_built_monitor_image_in_the_registry(registry: LocalRegistry) -> None:
    (monitor,) = [image for image in ensure_images(only=("monitor",)) if image.name == "monitor"]
    assert registry.catalog() == []
    done = subprocess.run(
        [sys.executable, "-m", "harness.images", "push", "--registry", registry.address, "--tag", "pushed-1",
         "--only", "monitor"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == [f"{registry.address}/drsched/monitor:pushed-1"]
    assert "--tls-verify=false" in done.stderr  # said out loud: plain HTTP, loopback only
    assert registry.catalog() == ["drsched/monitor"]
    assert registry.tags("drsched/monitor") == ["pushed-1"]
    manifest = _manifest(registry, "drsched/monitor", "pushed-1")
    assert manifest["config"]["digest"] == monitor.image_id  # the very image that was built, not a rebuild
    assert len(manifest["layers"]) >= 2
