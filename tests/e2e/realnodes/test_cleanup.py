"""A real-node cluster interrupted with SIGINT leaves the machine as it found it: no process, mount,
network namespace, cgroup, bridge/veth or iptables rule of its own behind.

It drives `python -m harness.realnodes up` as a user would (Ctrl-C), with a pod running so that there is
a container, a sandbox, a netns, a veth and volume mounts to clean up. The package's shared cluster is
not up yet when this module runs (modules run in file order; its fixture starts with the first user).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kubernetes import client, config

from harness import hostres, nodes
from harness.cluster import Binaries
from harness.realcluster import BUSY_IMAGE, NodeBinaries

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes]
REPO_ROOT = Path(__file__).resolve().parents[3]


def _processes_mentioning(text: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{entry.name}: {cmdline}")
    return found


def test_sigint_teardown_leaves_nothing_behind(
    node_binaries: NodeBinaries, controlplane_binaries: Binaries, tmp_path: Path
) -> None:
    before = hostres.snapshot()
    workdir, ready = tmp_path / "cluster", tmp_path / "ready"
    log_path = tmp_path / "realnodes.log"
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.realnodes", "up", f"--workdir={workdir}", f"--ready-file={ready}"],
            cwd=REPO_ROOT, stdout=log_file, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while not ready.exists():
            assert proc.poll() is None, f"realnodes up exited {proc.returncode}:\n{log_path.read_text()[-4000:]}"
            assert time.monotonic() < deadline, f"cluster not up in 240 s:\n{log_path.read_text()[-4000:]}"
            time.sleep(1)
        api = config.new_client_from_config(config_file=ready.read_text().strip())
        core = client.CoreV1Api(api)
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(name="sleeper"),
            spec=client.V1PodSpec(containers=[client.V1Container(
                name="s", image=BUSY_IMAGE, image_pull_policy="Never", args=["-threads", "1", "-seconds", "600"],
            )]),
        )  # fmt: skip
        core.create_namespaced_pod("default", pod)
        deadline = time.monotonic() + 90
        while core.read_namespaced_pod("sleeper", "default").status.phase != "Running":
            assert time.monotonic() < deadline, "pod sleeper never ran"
            time.sleep(0.5)
        during = hostres.snapshot().added_since(before)
        # The pod really made host-side state, so an empty diff afterwards means it was cleaned up.
        assert during.get("mounts") and during.get("cgroups") and during.get("links"), during
        api.close()
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=180)
    log_text = log_path.read_text()
    assert code == 0, log_text[-4000:]
    assert "cluster down" in log_text
    assert hostres.snapshot().added_since(before) == {}, log_text[-4000:]
    assert _processes_mentioning(str(workdir)) == []
    assert sorted(nodes.DATA_ROOT.glob("*/run")) == []  # only the image stores are kept, as a cache
