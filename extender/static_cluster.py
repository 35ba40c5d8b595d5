"""``--static-cluster FILE``: a whole cluster (nodes, pods, usage, learned profiles) from one YAML file.

Schema (every quantity is a Kubernetes quantity in Kubernetes base units: cpu cores, memory bytes,
net and disk bytes per second -- ``8``, ``500m``, ``32Gi``, ``1250M``)::

    defaults:                 # optional, for every node
      pods: 110               #   pod slots                       (default 110)
      net: 1250M              #   network bandwidth, bytes/s      (default: settings default_net_mbps)
      disk: 500M              #   disk bandwidth, bytes/s         (default: settings default_disk_mbps)
    nodes:                    # required, a list, names unique
    - name: node-a            #   required
      cpu: "8"                #   required, allocatable
      memory: 32Gi            #   required, allocatable
      net: 1250M              #   optional
      disk: 500M              #   optional
      pods: 110               #   optional
      ready: true             #   optional (false: not ready, filtered out; still in every pod's pool)
      unschedulable: true     #   optional, a cordon (kubectl cordon; default false): not ready, and out of the
                              #   pool of a pod that does not tolerate node.kubernetes.io/unschedulable:NoSchedule
      taints:                 #   optional, as a v1.Node's spec.taints; (key, effect) pairs unique
      - key: dedicated        #     required, a label key
        value: gpu            #     optional, a label value (default "")
        effect: NoSchedule    #     required: NoSchedule, PreferNoSchedule or NoExecute
      labels:                 #   optional, the node's labels (strings: quote "on", "true", "1")
        topology.kubernetes.io/zone: zone-a
      usage:                  #   optional; without it the node has no sample and is scored from requests
        cpu: "2.5"            #     measured usage, same units
        memory: 10Gi
        net: 100M
        disk: 20M
        age_s: 0              #     the sample is this old at every fetch (> max_usage_age_s: stale)
    pods:                     # optional
    - name: web-1             #   required
      namespace: default      #   optional
      node: node-a            #   optional; unset = pending (GET /debug/explain can explain it)
      cpu: 500m               #   requests
      memory: 1Gi
      profile: "cpu=1,mem=1,net=50,disk=10"   # optional drsched.io/profile annotation value
      workload: default/Deployment/web        # optional learned-profile key
      labels: {drsched: "on"}                 # optional, the pod's labels
    profiles:                 # optional learned profiles, by workload key
      default/Deployment/web: {cpu: "1", memory: 2Gi, net: 50M, disk: 10M}

Any mistake raises ``StaticClusterError`` with the file, the line and the field path
(``cluster.yaml:14: nodes[2].memory: cannot parse quantity '3GB' ...``). The same ``usage`` blocks,
alone, form a usage file for the static usage provider (``load_usage``).

Labels, so that the label-based options can be tried offline with curl (extender/README.md, "Canary"). A
node's go where a watched node's do (``NodeInfo.labels``, the cache's ``labels``): what shadow mode's node
selector and affinity check reads, and what ``GET``/``POST /debug/explain`` judges the pod's ``nodeSelector`` and
required node affinity against (``node_selector`` per node). A pod's are kept by name (``pod_labels``), since
the cache keeps no pod labels: ``GET /debug/explain`` of a static pod says whether the canary selector picks it
(``canary``); a request's own ``Pod`` carries its labels itself. Keys and values are checked as Kubernetes
checks them (``label_problem``): an unquoted ``on`` or ``true`` is a YAML boolean, not a string, and is refused.

Taints and cordons, so that a static node a pod could never go to leaves that pod's pool (``kube.pool``) as a
watched one does: they become ``NodeInfo.taints`` through ``kube.objects.node_taints``, the one reading of a
v1.Node's ``spec.taints`` and ``spec.unschedulable``, so the NoSchedule and NoExecute taints are kept and a cordon
adds ``UNSCHEDULABLE_TAINT``. A ``PreferNoSchedule`` taint is checked and accepted but, as on a watched node, not
kept: it only steers kube-scheduler's own scoring. A cordoned node is also not ready, as a watched one is
(``kube.objects.node_info``). Taints are checked as the apiserver checks them: the key as a label key, the value
as a label value, the effect one of ``kube.objects.TAINT_EFFECTS``, no (key, effect) pair twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from extender.errors import StaticClusterError
from kube.cache import NodeUsage, PodRecord
from kube.errors import ProfileError, QuantityError
from kube.objects import TAINT_EFFECTS, TERMINAL_PHASES, NodeInfo, node_taints
from kube.profiles import parse_profile
from kube.quantity import cpu_cores, mem_gib, parse_quantity, rate_mbps
from policy.state import DEFAULT_DISK_MBPS, DEFAULT_NET_MBPS

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")  # a label name or value, <= 63 chars
_DNS = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")  # a key's prefix


def label_problem(key: str, value: str) -> str | None:
    """What Kubernetes would refuse in the label ``key: value`` (its label syntax), or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS.fullmatch(prefix)):
        return f"key {key!r}: the prefix must be a DNS subdomain (lower case, digits, '-', '.')"
    if not _NAME.fullmatch(name):
        return f"key {key!r}: the name must be 1-63 of A-Z a-z 0-9 - _ . starting and ending alphanumeric"
    if value and not _NAME.fullmatch(value):
        return f"value {value!r}: at most 63 of A-Z a-z 0-9 - _ . starting and ending alphanumeric, or empty"
    return None


@dataclass
class StaticCluster:
    nodes: list[NodeInfo]
    pods: list[PodRecord]
    usage: dict[str, tuple[np.ndarray, float]]     # node -> ((4,) usage, age_s)
    profiles: dict[str, np.ndarray] = field(default_factory=dict)
    pod_labels: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)  # (ns, name) -> labels


class _Doc:
    """Walks a composed YAML tree, turning scalars into values and mistakes into located errors."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def fail(self, node: yaml.Node | None, where: str, problem: str) -> StaticClusterError:
        line = node.start_mark.line + 1 if node is not None else None
        return StaticClusterError(self.path, line, where, problem)

    def mapping(self, node: yaml.Node, where: str, allowed: set[str]) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, where, "must be a mapping")
        out: dict[str, yaml.Node] = {}
        for k, v in node.value:
            key = str(k.value)
            if allowed and key not in allowed:
                raise self.fail(k, f"{where}.{key}" if where else key,
                                f"unknown field; expected one of {', '.join(sorted(allowed))}")
            if key in out:
                raise self.fail(k, f"{where}.{key}" if where else key, "given twice")
            out[key] = v
        return out

    def seq(self, node: yaml.Node, where: str) -> list[yaml.Node]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, where, "must be a list")
        return list(node.value)

    def scalar(self, node: yaml.Node, where: str) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, where, "must be a single value")
        if node.tag == "tag:yaml.org,2002:str":
            return node.value
        return yaml.constructor.SafeConstructor().construct_object(node)

    def string(self, node: yaml.Node, where: str) -> str:
        value = self.scalar(node, where)
        if not isinstance(value, str) or not value:
            raise self.fail(node, where, f"must be a non-empty string, got {value!r}")
        return value

    def boolean(self, node: yaml.Node, where: str) -> bool:
        value = self.scalar(node, where)
        if not isinstance(value, bool):
            raise self.fail(node, where, f"must be true or false, got {value!r}")
        return value

    def text(self, node: yaml.Node, where: str) -> str:
        """A string, possibly empty: a label's or a taint's value."""
        value = self.scalar(node, where)
        if not isinstance(value, str):
            raise self.fail(node, where, f"must be a string, got {value!r} (quote it: YAML reads on, yes, true and "
                                         "numbers as other types)")
        return value

    def labels(self, node: yaml.Node, where: str) -> dict[str, str]:
        out = {}
        for key, value in self.mapping(node, where, set()).items():
            text = self.text(value, f"{where}.{key}")
            problem = label_problem(key, text)
            if problem is not None:
                raise self.fail(value, f"{where}.{key}", problem)
            out[key] = text
        return out

    def taints(self, node: yaml.Node, where: str) -> list[dict[str, str]]:
        """A v1.Node's ``spec.taints``, each checked as the apiserver checks it."""
        out: list[dict[str, str]] = []
        seen: set[tuple[str, str]] = set()
        for i, item in enumerate(self.seq(node, where)):
            at = f"{where}[{i}]"
            fields = self.mapping(item, at, {"key", "value", "effect"})
            for req in ("key", "effect"):
                if req not in fields:
                    raise self.fail(item, f"{at}.{req}", "required")
            key = self.string(fields["key"], f"{at}.key")
            problem = label_problem(key, "")
            if problem is not None:
                raise self.fail(fields["key"], f"{at}.key", problem)
            value = self.text(fields["value"], f"{at}.value") if "value" in fields else ""
            problem = label_problem(key, value)  # the key passed: any problem is the value's
            if problem is not None:
                raise self.fail(fields["value"], f"{at}.value", problem)
            effect = self.scalar(fields["effect"], f"{at}.effect")
            if effect not in TAINT_EFFECTS:
                raise self.fail(fields["effect"], f"{at}.effect",
                                f"must be one of {', '.join(TAINT_EFFECTS)}, got {effect!r}")
            if (key, effect) in seen:
                raise self.fail(item, at, f"taint {key}:{effect} given twice; (key, effect) pairs must be unique")
            seen.add((key, effect))
            out.append({"key": key, "value": value, "effect": effect})
        return out

    def quantity(self, node: yaml.Node, where: str, convert) -> float:
        value = self.scalar(node, where)
        try:
            return float(convert(value if isinstance(value, str) else value))
        except QuantityError as exc:
            raise self.fail(node, where, str(exc)) from None

    def resources(self, node: yaml.Node, where: str, *, extra: set[str] = frozenset()) -> tuple[dict, dict]:
        fields = self.mapping(node, where, {"cpu", "memory", "net", "disk", *extra})
        conv = {"cpu": cpu_cores, "memory": mem_gib, "net": rate_mbps, "disk": rate_mbps}
        values = {k: self.quantity(v, f"{where}.{k}", conv[k]) for k, v in fields.items() if k in conv}
        return values, fields


def _compose(path: Path) -> yaml.Node | None:
    try:
        text = path.read_text()
    except OSError as exc:
        raise StaticClusterError(str(path), None, "", f"cannot read: {exc.strerror}") from None
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise StaticClusterError(str(path), line, "", f"not valid YAML: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise StaticClusterError(str(path), None, "", f"not valid YAML: {exc}") from None


def _usage_block(doc: _Doc, node: yaml.Node, where: str) -> tuple[np.ndarray, float]:
    values, fields = doc.resources(node, where, extra={"age_s"})
    missing = [k for k in ("cpu", "memory") if k not in values]
    if missing:
        raise doc.fail(node, f"{where}.{missing[0]}", "required")
    age = 0.0
    if "age_s" in fields:
        age = doc.scalar(fields["age_s"], f"{where}.age_s")
        if isinstance(age, bool) or not isinstance(age, int | float) or age < 0:
            raise doc.fail(fields["age_s"], f"{where}.age_s", f"must be a number >= 0, got {age!r}")
    return np.array([values["cpu"], values["memory"], values.get("net", 0.0), values.get("disk", 0.0)]), float(age)


def load_static_cluster(path: Path | str, *, default_net_mbps: float = DEFAULT_NET_MBPS,
                        default_disk_mbps: float = DEFAULT_DISK_MBPS) -> StaticCluster:
    """Parse and check the whole file; see the module docstring for the schema."""
    path = Path(path)
    doc = _Doc(path)
    root = _compose(path)
    if root is None:
        raise StaticClusterError(str(path), None, "", "file is empty; expected a mapping with 'nodes'")
    top = doc.mapping(root, "", {"defaults", "nodes", "pods", "profiles"})
    if "nodes" not in top:
        raise doc.fail(root, "nodes", "required")
    pods_default, net_default, disk_default = 110.0, default_net_mbps, default_disk_mbps
    if "defaults" in top:
        d = doc.mapping(top["defaults"], "defaults", {"pods", "net", "disk"})
        if "pods" in d:
            pods_default = doc.quantity(d["pods"], "defaults.pods", parse_quantity)
        if "net" in d:
            net_default = doc.quantity(d["net"], "defaults.net", rate_mbps)
        if "disk" in d:
            disk_default = doc.quantity(d["disk"], "defaults.disk", rate_mbps)

    nodes: list[NodeInfo] = []
    usage: dict[str, tuple[np.ndarray, float]] = {}
    seen: set[str] = set()
    for i, item in enumerate(doc.seq(top["nodes"], "nodes")):
        where = f"nodes[{i}]"
        values, fields = doc.resources(item, where, extra={"name", "pods", "ready", "unschedulable", "taints",
                                                           "usage", "labels"})
        if "name" not in fields:
            raise doc.fail(item, f"{where}.name", "required")
        name = doc.string(fields["name"], f"{where}.name")
        if name in seen:
            raise doc.fail(fields["name"], f"{where}.name", f"duplicate node name {name!r}")
        seen.add(name)
        for req in ("cpu", "memory"):
            if req not in values:
                raise doc.fail(item, f"{where}.{req}", "required")
            if values[req] <= 0:
                raise doc.fail(fields[req], f"{where}.{req}", "must be > 0")
        pods = doc.quantity(fields["pods"], f"{where}.pods", parse_quantity) if "pods" in fields else pods_default
        ready = doc.boolean(fields["ready"], f"{where}.ready") if "ready" in fields else True
        cordoned = doc.boolean(fields["unschedulable"], f"{where}.unschedulable") if "unschedulable" in fields \
            else False
        taints = doc.taints(fields["taints"], f"{where}.taints") if "taints" in fields else []
        cap = (values["cpu"], values["memory"], values.get("net", net_default), values.get("disk", disk_default))
        if min(cap) <= 0:
            raise doc.fail(item, where, "net and disk capacity must be > 0")
        labels = doc.labels(fields["labels"], f"{where}.labels") if "labels" in fields else {}
        nodes.append(NodeInfo(name=name, capacity=cap, max_pods=pods, ready=ready and not cordoned, labels=labels,
                              taints=node_taints({"spec": {"taints": taints, "unschedulable": cordoned}})))
        if "usage" in fields:
            usage[name] = _usage_block(doc, fields["usage"], f"{where}.usage")

    profiles: dict[str, np.ndarray] = {}
    if "profiles" in top:
        for key_node, value in top["profiles"].value if isinstance(top["profiles"], yaml.MappingNode) else []:
            key = str(key_node.value)
            values, _ = doc.resources(value, f"profiles.{key}")
            profiles[key] = np.array([values.get(r, 0.0) for r in ("cpu", "memory", "net", "disk")])
        if not isinstance(top["profiles"], yaml.MappingNode):
            raise doc.fail(top["profiles"], "profiles", "must be a mapping of workload: resources")

    pods_out: list[PodRecord] = []
    pod_labels: dict[tuple[str, str], dict[str, str]] = {}
    if "pods" in top:
        for i, item in enumerate(doc.seq(top["pods"], "pods")):
            where = f"pods[{i}]"
            values, fields = doc.resources(item, where, extra={"name", "namespace", "node", "profile", "workload",
                                                               "phase", "labels"})
            if "net" in values or "disk" in values:
                raise doc.fail(item, where, "pods request only cpu and memory; put net/disk in 'profile'")
            if "name" not in fields:
                raise doc.fail(item, f"{where}.name", "required")
            name = doc.string(fields["name"], f"{where}.name")
            ns = doc.string(fields["namespace"], f"{where}.namespace") if "namespace" in fields else "default"
            if (ns, name) in pod_labels:
                raise doc.fail(fields["name"], f"{where}.name", f"duplicate pod {ns}/{name}")
            pod_labels[(ns, name)] = doc.labels(fields["labels"], f"{where}.labels") if "labels" in fields else {}
            node = doc.string(fields["node"], f"{where}.node") if "node" in fields else None
            if node is not None and node not in seen:
                raise doc.fail(fields["node"], f"{where}.node", f"unknown node {node!r}")
            requests = np.array([values.get("cpu", 0.0), values.get("memory", 0.0)])
            demand, source = np.array([requests[0], requests[1], 0.0, 0.0]), "requests"
            workload = doc.string(fields["workload"], f"{where}.workload") if "workload" in fields else None
            if workload is not None and workload in profiles:
                demand, source = profiles[workload], "learned"
            if "profile" in fields:
                try:
                    demand = parse_profile(doc.string(fields["profile"], f"{where}.profile"), requests)
                    source = "annotation"
                except ProfileError as exc:
                    raise doc.fail(fields["profile"], f"{where}.profile", str(exc)) from None
            phase = doc.string(fields["phase"], f"{where}.phase") if "phase" in fields else "Running"
            pods_out.append(PodRecord(namespace=ns, name=name, uid=f"static-{ns}-{name}", node=node,
                                      requests=requests, demand=demand, demand_source=source,
                                      terminated=phase in TERMINAL_PHASES, bound_at=0.0))
    return StaticCluster(nodes=nodes, pods=pods_out, usage=usage, profiles=profiles, pod_labels=pod_labels)


def load_usage(path: Path | str) -> dict[str, tuple[np.ndarray, float]]:
    """Node usage from a static-cluster file (its nodes' ``usage`` blocks) or a usage-only file::

        usage:
          node-a: {cpu: "2.5", memory: 10Gi, net: 100M, disk: 20M, age_s: 0}
    """
    path = Path(path)
    doc = _Doc(path)
    root = _compose(path)
    if root is None:
        return {}
    top = doc.mapping(root, "", set())
    if "usage" not in top:
        return load_static_cluster(path).usage
    out = {}
    for key_node, value in doc.mapping(top["usage"], "usage", set()).items():
        out[key_node] = _usage_block(doc, value, f"usage.{key_node}")
    return out


def to_samples(usage: dict[str, tuple[np.ndarray, float]], now: float) -> dict[str, NodeUsage]:
    """Static usage as samples taken ``age_s`` before ``now``."""
    return {name: NodeUsage(*(float(x) for x in u), timestamp=now - age) for name, (u, age) in usage.items()}
