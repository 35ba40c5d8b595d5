"""An in-memory stand-in for ``migration.kube.Kube`` (same keyword-only methods), for executor and cycle tests."""

from __future__ import annotations

import copy
import itertools
import json
import time
from typing import Any

from kube.errors import Conflict, NotFound

_uids = itertools.count(1)

SHA = "cd" * 32


def progress_doc(*, units_done: int = 200, rate: float = 1.0, started_at: float | None = None, resumed_from: int = 0,
                 checkpoint: int | None = 200, state: str = "running", updated_at: float | None = None) -> str:
    now = time.time()
    ckpt = None if checkpoint is None else {"units_done": checkpoint, "path": "/s/c", "sha256": SHA, "at": now}
    return json.dumps({"schema": 1, "kind": "cpu", "units_done": units_done, "units_total": 1000,
                       "progress": units_done / 1000, "rate": rate, "started_at": started_at or now - 100,
                       "updated_at": updated_at or now, "resumed_from": resumed_from, "checkpoint": ckpt,
                       "state": state, "pid": 7})


def node(name: str, cpu: str = "4", memory: str = "16Gi") -> dict:
    return {"metadata": {"name": name, "labels": {}, "resourceVersion": "0"},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}


def pod(name: str, *, node: str | None, cpu: str = "500m", ns: str = "default", phase: str = "Running",
        progress: str | None = None, labels: dict | None = None, annotations: dict | None = None) -> dict:
    ann = {"drsched.io/expected-duration": "100", "drsched.io/restore-cost": "1", **(annotations or {})}
    if progress is not None:
        ann["drsched.io/progress"] = progress
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "x",
                                            "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": ns, "uid": f"uid-{next(_uids)}",
                         "labels": {"drsched.io/migrate": "true", **(labels or {})}, "annotations": ann},
            "spec": spec, "status": {"phase": phase}}


class FakeKube:
    """Pods, nodes and Leases in dicts. ``evict_refusals`` makes evictions answer 'PDB says no' that often."""

    def __init__(self, nodes: list[dict], pods: list[dict]) -> None:
        self.nodes = nodes
        self.pods = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}
        self.leases: dict[tuple[str, str], dict] = {}
        self.calls: list[tuple[str, str]] = []
        self.evict_refusals = 0
        self.rv = itertools.count(1)

    def list_nodes(self) -> list[dict]:
        return copy.deepcopy(self.nodes)

    def list_pods(self, *, namespace: str | None, label_selector: str | None = None) -> list[dict]:
        return [copy.deepcopy(p) for (ns, _), p in self.pods.items() if namespace in (None, ns)]

    def read_pod(self, *, namespace: str, name: str) -> dict | None:
        p = self.pods.get((namespace, name))
        return copy.deepcopy(p) if p is not None else None

    def create_pod(self, *, namespace: str, body: dict) -> dict:
        self.calls.append(("create", body["metadata"]["name"]))
        key = (namespace, body["metadata"]["name"])
        if key in self.pods:
            raise Conflict("exists")
        p = copy.deepcopy(body)
        p["metadata"]["uid"] = f"uid-{next(_uids)}"
        p["status"] = {"phase": "Pending"}
        self.pods[key] = p
        return copy.deepcopy(p)

    def delete_pod(self, *, namespace: str, name: str, uid: str, grace_period_s: int | None = None) -> None:
        self.calls.append(("delete", name))
        p = self.pods.get((namespace, name))
        if p is not None and p["metadata"]["uid"] == uid:
            del self.pods[(namespace, name)]

    def evict_pod(self, *, namespace: str, name: str, uid: str, grace_period_s: int | None) -> bool:
        self.calls.append(("evict", name))
        if self.evict_refusals:
            self.evict_refusals -= 1
            return False
        p = self.pods.get((namespace, name))
        if p is not None and p["metadata"]["uid"] == uid:
            del self.pods[(namespace, name)]  # KWOK-like: gone at once
        return True

    def set_node_taints(self, *, node: dict, taints: list[dict]) -> None:
        self.calls.append(("taint", node["metadata"]["name"]))
        current = next(n for n in self.nodes if n["metadata"]["name"] == node["metadata"]["name"])
        if current["metadata"].get("resourceVersion") != node["metadata"].get("resourceVersion"):
            raise Conflict("node changed")
        current.setdefault("spec", {})["taints"] = copy.deepcopy(taints)
        current["metadata"]["resourceVersion"] = str(next(self.rv))

    def list_windows(self, *, namespace: str | None) -> list[dict]:
        return [copy.deepcopy(v) for (ns, _), v in self.leases.items() if namespace in (None, ns)]

    def create_window(self, *, namespace: str, name: str, annotations: dict, holder: str) -> dict:
        if (namespace, name) in self.leases:
            raise Conflict("exists")
        lease = {"metadata": {"name": name, "namespace": namespace, "annotations": dict(annotations),
                              "resourceVersion": str(next(self.rv))}}
        self.leases[(namespace, name)] = lease
        return copy.deepcopy(lease)

    def update_window(self, *, lease: dict, annotations: dict) -> dict:
        meta = lease["metadata"]
        key = (meta["namespace"], meta["name"])
        current = self.leases.get(key)
        if current is None:
            raise NotFound("gone")
        if current["metadata"]["resourceVersion"] != meta["resourceVersion"]:
            raise Conflict("changed")
        current["metadata"]["annotations"].update(annotations)
        current["metadata"]["resourceVersion"] = str(next(self.rv))
        return copy.deepcopy(current)

    def delete_window(self, *, namespace: str, name: str) -> None:
        self.leases.pop((namespace, name), None)

    # -- what the scheduler and kubelet would do ----------------------------------------------------
    def schedule(self, name: str, ns: str = "default", *, fits: bool = True) -> None:
        p = self.pods[(ns, name)]
        terms = (p["spec"].get("affinity") or {}).get("nodeAffinity", {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms") or []
        if not fits:
            p["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
            return
        fields = terms[0].get("matchFields") or [] if terms else []
        pinned = [f["values"][0] for f in fields if f["operator"] == "In"]
        excluded = {v for f in fields if f["operator"] == "NotIn" for v in f["values"]}
        free = [n["metadata"]["name"] for n in self.nodes if n["metadata"]["name"] not in excluded]
        p["spec"]["nodeName"] = pinned[0] if pinned else (free[0] if free else "anywhere")
        assert p["spec"]["nodeName"] not in excluded, "the fake scheduler honours NotIn"
        p["status"] = {"phase": "Running"}
