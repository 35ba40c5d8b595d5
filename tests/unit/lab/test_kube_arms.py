"""``lab.kube.Lab.set_arm`` binds the taint baseline's nodes-patch right before its first arm, once: the controller's
own RBAC cannot change a node, and without the binding every taint failed with 403 (the baseline then ran as
drsched without migration)."""

from __future__ import annotations

import subprocess

import pytest

from lab import arms
from lab.errors import RunError
from lab.kube import TAINT_RBAC, Lab


class _Cluster:
    def __init__(self, rc: int = 0) -> None:
        self.rc, self.calls = rc, []

    def kubectl(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        self.calls.append(args)
        return subprocess.CompletedProcess(args, self.rc, "", "forbidden" if self.rc else "")


class _Apps:
    def patch_namespaced_deployment_scale(self, *_a, **_k) -> None:
        pass


def _lab(cluster: _Cluster) -> Lab:
    lab = Lab.__new__(Lab)
    lab.cluster, lab.apps = cluster, _Apps()
    lab.policy, lab.hot_filter, lab.migration_on, lab.controller, lab.taint_rbac = "model", None, False, (), False
    lab._patch_args = lambda *_a, **_k: None
    lab._rollout = lambda *_a, **_k: None
    return lab


def _set(lab: Lab, base: str) -> None:
    _scheduler, policy, controller = arms.BASES[base]
    lab.set_arm(policy=policy, migration=controller is not None, controller=tuple(controller or ()))


def test_the_taint_arm_binds_nodes_patch_once_and_no_other_arm_does() -> None:
    assert TAINT_RBAC.is_file()
    cluster = _Cluster()
    lab = _lab(cluster)
    for base in ("model", "migration", "restart"):
        _set(lab, base)
    assert cluster.calls == []  # the controller that moves jobs never gets to change a node
    _set(lab, "taint")
    _set(lab, "migration")
    _set(lab, "taint")
    assert cluster.calls == [("apply", "-f", str(TAINT_RBAC))]


def test_a_failed_binding_stops_the_arm_with_what_kubectl_said() -> None:
    lab = _lab(_Cluster(rc=1))
    with pytest.raises(RunError, match="forbidden"):
        _set(lab, "taint")
