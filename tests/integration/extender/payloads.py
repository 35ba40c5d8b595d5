"""Payloads shaped exactly as kube-scheduler sends them, and a TestClient on the example static cluster."""

from __future__ import annotations

import copy
import urllib.error
import urllib.request

from extender.settings import build_settings
from tests.helpers import REPO

EXAMPLE = REPO / "examples" / "static-cluster.yaml"
NODE_NAMES = ["node-a", "node-b", "node-c", "node-d", "node-e"]

V1_POD = {
    "metadata": {
        "name": "trainer-7f9c-x2x", "generateName": "trainer-7f9c-", "namespace": "default",
        "uid": "0b6f3c9e-1111-4c2a-9d2e-5a1f0e7c3b21", "resourceVersion": "4711",
        "creationTimestamp": "2026-11-29T10:00:00Z",
        "labels": {"app": "trainer", "pod-template-hash": "7f9c"},
        "annotations": {"drsched.io/profile": '{"cpu":"1","memory":"2Gi","net":"300M","disk":"20M"}'},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "trainer-7f9c",
                             "uid": "rs-uid", "controller": True, "blockOwnerDeletion": True}],
    },
    "spec": {
        "volumes": [{"name": "kube-api-access", "projected": {"sources": []}}],
        "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "3600"],
                        "resources": {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"memory": "2Gi"}},
                        "terminationMessagePath": "/dev/termination-log", "imagePullPolicy": "IfNotPresent"}],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default", "schedulerName": "default-scheduler", "priority": 0,
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 300}],
        "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
    },
    "status": {"phase": "Pending", "qosClass": "Burstable"},
}


def v1_node(name: str, cpu: str = "8", mem: str = "32Gi", ready: str = "True") -> dict:
    return {
        "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": "100",
                     "labels": {"kubernetes.io/hostname": name, "type": "kwok"},
                     "annotations": {"drsched.io/net-mbps": "1250", "node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {"taints": []},
        "status": {
            "capacity": {"cpu": cpu, "memory": mem, "pods": "110"},
            "allocatable": {"cpu": cpu, "memory": mem, "pods": "110"},
            "conditions": [{"type": "Ready", "status": ready, "reason": "KubeletReady",
                            "lastHeartbeatTime": "2026-11-29T10:00:00Z",
                            "lastTransitionTime": "2026-11-29T09:00:00Z"}],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
            "nodeInfo": {"kubeletVersion": "v1.34.0", "architecture": "amd64", "operatingSystem": "linux"},
        },
    }


def args_names(names=None, pod=None) -> dict:
    """nodeCacheCapable: true -> {"Pod": ..., "Nodes": null, "NodeNames": [...]}."""
    return {"Pod": copy.deepcopy(pod or V1_POD), "Nodes": None, "NodeNames": list(names or NODE_NAMES)}


def args_nodes(nodes, pod=None) -> dict:
    """nodeCacheCapable: false -> {"Pod": ..., "Nodes": {"metadata": {}, "items": [...]}, "NodeNames": null}."""
    return {"Pod": copy.deepcopy(pod or V1_POD), "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None}


def static_settings(**kw):
    return build_settings(static_cluster=str(EXAMPLE), **kw)



def post(url: str, raw: bytes) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=raw, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
