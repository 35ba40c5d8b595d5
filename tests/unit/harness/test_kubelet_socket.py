"""Kubelets start one at a time: each waits until the previous one has bound the device-plugin socket that every
kubelet binds at one fixed path (``harness.realcluster.wait_rebound``). Real child processes, a real socket."""

import socket
import sys

import pytest

from harness.procs import Component, ComponentError
from harness.realcluster import _file_identity, wait_rebound

BIND_AFTER = """
import os, socket, sys, time
time.sleep(float(sys.argv[2]))
if os.path.exists(sys.argv[1]):
    os.unlink(sys.argv[1])   # as the kubelet does: unlink, then bind
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen()
time.sleep(60)
"""


def _component(tmp_path, name, *args):
    return Component(name=name, argv=[sys.executable, "-c", *args], log_path=tmp_path / f"{name}.log")


@pytest.mark.parametrize("held", [True, False], ids=["held-by-an-earlier-kubelet", "stale"])
def test_waits_until_a_new_socket_is_bound_over_an_old_one(tmp_path, held):
    # held: an earlier kubelet's socket, still bound. stale: a socket file an earlier cluster left, held by nobody;
    # the new kubelet unlinks it and binds again, and the file system usually hands the freed inode number straight
    # back (how the lab's first kubelet waited the whole timeout on 2026-12-07 when the wait compared inodes alone).
    path = tmp_path / "kubelet.sock"
    first = socket.socket(socket.AF_UNIX)
    first.bind(str(path))
    if not held:
        first.close()
    before = _file_identity(path)
    proc = _component(tmp_path, "late", BIND_AFTER, str(path), "0.3")
    proc.start()
    try:
        assert wait_rebound(path, before, proc, timeout=10)
        assert _file_identity(path) != before
    finally:
        proc.stop()
        first.close()


def test_a_process_that_exits_before_binding_is_an_error(tmp_path):
    proc = _component(tmp_path, "dies", "import sys; sys.exit(3)")
    proc.start()
    with pytest.raises(ComponentError, match="exited with code 3"):
        wait_rebound(tmp_path / "never.sock", None, proc, timeout=20)


def test_gives_up_after_the_timeout_and_lets_the_next_one_start(tmp_path):
    proc = _component(tmp_path, "idle", "import time; time.sleep(60)")
    proc.start()
    try:
        assert wait_rebound(tmp_path / "never.sock", None, proc, timeout=0.3) is False
        assert proc.running
    finally:
        proc.stop()
