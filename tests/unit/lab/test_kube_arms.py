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


class _Pods:
    """The extender's pods as the API lists them: the old one terminating for ``terminating`` lists, then gone."""

    def __init__(self, terminating: int) -> None:
        self.left, self.lists = terminating, 0

    def list_namespaced_pod(self, _ns: str, label_selector: str):
        from types import SimpleNamespace as NS

        self.lists += 1
        assert label_selector == "app.kubernetes.io/name=drsched-extender"
        new = NS(metadata=NS(deletion_timestamp=None))
        old = NS(metadata=NS(deletion_timestamp="2026-12-07T12:00:00Z"))
        self.left -= 1
        return NS(items=[new, old] if self.left >= 0 else [new])


class _RolloutCluster(_Cluster):
    def __init__(self, pods: _Pods) -> None:
        super().__init__()
        self.core = pods

    def poll(self, check, *, timeout: float, what: str):
        for _ in range(10):
            if (got := check()) is not None:
                return got
        raise RunError(f"timed out waiting for {what}")


def test_a_rollout_waits_until_the_previous_policy_s_pods_are_gone() -> None:
    """`rollout status` returns while the old extender pod still terminates and can answer kube-scheduler: the lab
    waits for it, so an arm's first pod is not scored by the previous arm's policy."""
    pods = _Pods(terminating=3)
    lab = Lab.__new__(Lab)
    lab.cluster = _RolloutCluster(pods)
    lab._rollout("drsched-extender")
    assert pods.lists == 4 and lab.cluster.calls[0][:4] == ("-n", "drsched-system", "rollout", "status")
