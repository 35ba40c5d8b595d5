"""Fixtures for the image tests: the built images, a shell into them, and a throwaway containerd.

``built_images`` builds (or reuses) the images once per session, or skips every test here with the reason
the machine cannot build them. ``in_image(tag, *cmd)`` runs a command in a fresh working container of an
image (buildah, the image's own user) and removes the container. ``containerd`` starts a containerd with
its own root, state and socket under the test's tmp dir (no CRI, nothing shared with other containerds),
and stops it and removes its directories at teardown.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.images import BuiltImage, ensure_images, open_buildah, unavailable_reason

CONTAINERD_START_S = 20.0


@pytest.fixture(scope="session")
def built_images(tmp_path_factory: pytest.TempPathFactory) -> dict[str, BuiltImage]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"IMAGES NOT TESTED: this machine cannot build the drsched images: {reason}")
    lines: list[str] = []
    images = ensure_images(progress=lines.append)
    return {image.name: image for image in images}


@pytest.fixture(scope="session")
def in_image(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., subprocess.CompletedProcess[str]]:
    buildah = open_buildah(log_file=tmp_path_factory.mktemp("buildah") / "test.log")

    def run(tag: str, *cmd: str) -> subprocess.CompletedProcess[str]:
        made = buildah.quiet("from", "--quiet", "--pull-never", tag)
        assert made.returncode == 0, made.stderr
        container = made.stdout.strip().splitlines()[-1]
        try:
            return buildah.quiet("run", container, "--", *cmd)
        finally:
            buildah.quiet("rm", container)

    return run


@dataclass
class Containerd:
    socket: Path
    log: Path

    def ctr(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ctr", "--address", str(self.socket), "--namespace", "k8s.io", *args],
                              capture_output=True, text=True, timeout=timeout, check=False)  # fmt: skip


@pytest.fixture
def containerd(tmp_path: Path) -> Iterator[Containerd]:
    missing = [tool for tool in ("containerd", "ctr", "runc") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"IMAGE IMPORT NOT TESTED: missing {' '.join(missing)} (apt-get install containerd runc)")
    # Short paths: a unix socket path must stay under 108 bytes.
    top = Path(subprocess.check_output(["mktemp", "-d", "/tmp/drsched-ctrd.XXXXXX"], text=True).strip())
    config = top / "config.toml"
    config.write_text(
        f'version = 2\nroot = "{top}/root"\nstate = "{top}/state"\n'
        'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
        f'[grpc]\n  address = "{top}/c.sock"\n[ttrpc]\n  address = "{top}/c.sock.ttrpc"\n'
        f'[debug]\n  address = "{top}/d.sock"\n'
        f'[plugins."io.containerd.internal.v1.opt"]\n  path = "{top}/opt"\n'
    )
    log = tmp_path / "containerd.log"
    with log.open("w") as out:
        proc = subprocess.Popen(["containerd", "--config", str(config)], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip
    daemon = Containerd(socket=top / "c.sock", log=log)
    try:
        deadline = time.monotonic() + CONTAINERD_START_S
        while daemon.ctr("version", timeout=10).returncode != 0:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"throwaway containerd did not start; log:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield daemon
    finally:
        # Shims outlive containerd: a task a failed test left running is killed through containerd first.
        for task in daemon.ctr("tasks", "ls", "--quiet", timeout=30).stdout.split():
            daemon.ctr("tasks", "kill", "--signal", "SIGKILL", task, timeout=30)
            daemon.ctr("tasks", "delete", "--force", task, timeout=30)
        for container in daemon.ctr("containers", "ls", "--quiet", timeout=30).stdout.split():
            daemon.ctr("containers", "delete", container, timeout=30)
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        shutil.rmtree(top)
