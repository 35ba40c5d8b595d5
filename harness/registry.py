"""A CNCF distribution registry on 127.0.0.1 for the tests that push and pull images (docs/deploy.md).

Why it exists: the deploy guide has users push the drsched images to *their* registry and the cluster pull
them; its tests do the same against a real registry instead of importing archives into containerd. The
binary is built from its Go module by ``harness/controlplane/build-registry.sh`` (pinned in
``harness/controlplane/registry/go.mod``, cached under ``harness.cache.cache_root()/registry/<version>/bin``).
A ``LocalRegistry`` owns one running registry: its process (a ``procs.Component``), a temporary storage
directory and its config file; ``stop`` ends the process and removes the storage. It listens on loopback,
over plain HTTP and with no auth: a test registry, never one to expose.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import tempfile
import urllib.request
from collections.abc import Callable
from pathlib import Path

import yaml

from harness.procs import Component, ComponentError, free_port, run_to_completion, tail

log = logging.getLogger(__name__)

BUILD_SCRIPT = Path(__file__).resolve().parent / "controlplane" / "build-registry.sh"
START_S = 20.0


def registry_bin_dir() -> Path:
    """Where build-registry.sh puts the binary (asks the script, so the path is computed in one place)."""
    done = subprocess.run([str(BUILD_SCRIPT), "--bin-dir"], capture_output=True, text=True, check=True)
    return Path(done.stdout.strip().splitlines()[-1])


def ensure_registry_binary(*, timeout: float = 1800.0, progress: Callable[[str], None] | None = None) -> Path:
    """Run build-registry.sh (a no-op when its stamp matches) and return the registry binary."""
    bin_dir = registry_bin_dir()
    log_path = bin_dir.parent / "build.out"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    run_to_completion(name="build-registry.sh", argv=[str(BUILD_SCRIPT)], log_path=log_path, timeout=timeout,
                      progress=progress)  # fmt: skip
    binary = bin_dir / "registry"
    if not binary.is_file():
        raise ComponentError(f"build-registry.sh finished but {binary} is missing\n{tail(log_path)}")
    return binary


def _config(*, storage: Path, port: int) -> dict:
    return {
        "version": 0.1,
        "log": {"level": "info", "accesslog": {"disabled": False}},
        "storage": {"filesystem": {"rootdirectory": str(storage)}, "delete": {"enabled": True}},
        "http": {"addr": f"127.0.0.1:{port}", "headers": {"X-Content-Type-Options": ["nosniff"]}},
    }


class LocalRegistry:
    """One registry process on 127.0.0.1:<free port>, its storage in a temporary directory."""

    def __init__(self, *, binary: Path, workdir: Path | None = None) -> None:
        self.binary = binary
        self.workdir = Path(tempfile.mkdtemp(prefix="drsched-registry-", dir=workdir))
        self.port = free_port()
        self.component: Component | None = None

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``: what ``buildah push`` and the image names take."""
        return f"127.0.0.1:{self.port}"

    def get_json(self, path: str) -> dict:
        """GET ``/v2/...`` from the registry as JSON (raises OSError / ValueError when it does not answer)."""
        with urllib.request.urlopen(f"http://{self.address}{path}", timeout=5) as resp:  # noqa: S310 (loopback)
            return json.loads(resp.read())

    def catalog(self) -> list[str]:
        return self.get_json("/v2/_catalog")["repositories"] or []

    def tags(self, repository: str) -> list[str]:
        return self.get_json(f"/v2/{repository}/tags/list")["tags"] or []

    def start(self) -> LocalRegistry:
        storage = self.workdir / "storage"
        storage.mkdir()
        config = self.workdir / "config.yml"
        config.write_text(yaml.safe_dump(_config(storage=storage, port=self.port)))
        self.component = Component(name="registry", argv=[str(self.binary), "serve", str(config)],
                                   log_path=self.workdir / "registry.log")  # fmt: skip
        self.component.start()
        # /v2/ answers 200 with {} once the registry serves (no auth configured).
        self.component.wait_ready(lambda: self.get_json("/v2/") == {}, timeout=START_S)
        log.info("registry ready address=%s storage=%s", self.address, storage)
        return self

    def stop(self) -> None:
        if self.component is not None:
            self.component.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> LocalRegistry:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
