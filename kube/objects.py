"""What drsched reads out of v1.Pod and v1.Node JSON, as plain numbers. Pure, no I/O.

Pod requests follow kube-scheduler's accounting (``resource.PodRequests``): the sum over app containers,
raised to the largest init container (an init container runs alone, but beside the restartable "sidecar"
init containers started before it), sidecars added to the running sum, plus ``spec.overhead``. A pod-level
``spec.resources.requests`` replaces the container sum where set. Node capacity is ``status.allocatable``;
net and disk bandwidth come from node annotations (Kubernetes has no such resources). A node's taints that keep
pods off (NoSchedule, NoExecute; a cordon counts as one) are kept so that the extender, which encodes a pod over
the nodes it could ever go to (``kube.pool``), and shadow mode, which scores nodes kube-scheduler never offered, can
tell which a pod tolerates (``tolerates``: kube-scheduler's TaintToleration rule); its labels, for the same reason,
so shadow mode can tell which nodes a pod's node selector and required affinity allow (``kube.affinity``).

Inputs are the camelCase Kubernetes JSON (what kube-scheduler embeds in ``Pod`` / ``Nodes``) or the same
shape from ``ApiClient.sanitize_for_serialization`` of a watched object.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson

from kube.errors import QuantityError
from kube.quantity import cpu_cores, mem_gib, parse_quantity

NET_ANNOTATION = "drsched.io/net-mbps"
"""Node annotation with its network bandwidth in MB/s (Kubernetes has no such resource; absent: the
``default_net_mbps`` callers pass, by default ``policy.state.DEFAULT_NET_MBPS``)."""
DISK_ANNOTATION = "drsched.io/disk-mbps"
"""Node annotation with its disk bandwidth in MB/s."""
WORKLOAD_LABEL = "drsched.io/workload"
"""A pod label that names its workload explicitly (for learned profiles); wins over owner references."""
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
"""Pod phases a pod never leaves; such a pod holds no resources and will not run again."""


def child_map(obj: Any, key: str) -> Mapping:
    """``obj[key]`` where ``obj`` and that value are mappings, else an empty dict: a field of a watched object,
    which may be missing or of the wrong type.

    Watched objects are plain dicts, so ``dict`` is checked first: ``isinstance(x, Mapping)`` goes through the
    ABC machinery (~0.4 us a call), and the watch path reads ~16 fields of every pod event (py-spy over the
    scheduler benchmark: the watch threads held 36 % of the extender's GIL time)."""
    if type(obj) is dict or isinstance(obj, Mapping):
        value = obj.get(key)
        if type(value) is dict or isinstance(value, Mapping):
            return value
    return {}


def child_list(obj: Any, key: str) -> list:
    """``obj[key]`` where ``obj`` is a mapping and that value a list, else an empty list."""
    value = obj.get(key) if type(obj) is dict or isinstance(obj, Mapping) else None
    return value if isinstance(value, list) else []


def _cpu_mem(resources: Mapping, where: str) -> np.ndarray:
    out = np.zeros(2)
    try:
        if "cpu" in resources:
            out[0] = cpu_cores(resources["cpu"])
        if "memory" in resources:
            out[1] = mem_gib(resources["memory"])
    except QuantityError as exc:
        raise QuantityError(f"{where}: {exc}") from None
    return out


REQUESTS_MEMO = 4096
"""Distinct request shapes ``pod_requests`` remembers (a workload's pods share one)."""


def pod_requests(pod: Mapping) -> np.ndarray:
    """(2,) cpu cores and memory GiB the scheduler accounts for ``pod``, read-only; raises ``QuantityError``.

    The extender reads one pod's requests five times as it schedules it (its ADDED, bound and Running watch
    events, then the filter and the prioritize request bodies), and most pods share their workload's
    template, so the answer is remembered by the bytes of the four ``spec`` fields it is computed from: the
    same bytes, the same answer, whichever pod or thread asks (an absent field is keyed as the empty value it
    is read as). A spec whose fields do not survive a JSON round trip unchanged is computed uncached: one
    orjson cannot write (a big integer, a non-string key) or one with a ``null`` inside, since orjson also
    writes a NaN or infinite float as ``null``."""
    spec = child_map(pod, "spec")
    try:
        key = orjson.dumps([spec.get("containers") or [], spec.get("initContainers") or [],
                            spec.get("overhead") or {}, spec.get("resources") or {}], option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError
        key = None
    if key is None or b"null" in key:
        return _read_only(_requests_of_spec(spec))
    return _requests_by_spec(key)


@functools.lru_cache(maxsize=REQUESTS_MEMO)
def _requests_by_spec(key: bytes) -> np.ndarray:
    """``pod_requests`` of the spec fields serialised as ``key`` (a failure raises and is not remembered)."""
    containers, init, overhead, resources = orjson.loads(key)
    return _read_only(_requests_of_spec({"containers": containers, "initContainers": init, "overhead": overhead,
                                         "resources": resources}))


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False  # shared by every pod with the same spec: nobody may write into it
    return a


def _requests_of_spec(spec: Mapping) -> np.ndarray:
    pod_level = child_map(child_map(spec, "resources"), "requests")
    total = np.zeros(2)
    for i, c in enumerate(child_list(spec, "containers")):
        total += _cpu_mem(child_map(child_map(c, "resources"), "requests"), f"spec.containers[{i}].resources.requests")
    sidecars = np.zeros(2)
    init_peak = np.zeros(2)
    for i, c in enumerate(child_list(spec, "initContainers")):
        req = _cpu_mem(child_map(child_map(c, "resources"), "requests"), f"spec.initContainers[{i}].resources.requests")
        if isinstance(c, Mapping) and c.get("restartPolicy") == "Always":
            total += req
            sidecars += req
            init_peak = np.maximum(init_peak, sidecars)
        else:
            init_peak = np.maximum(init_peak, req + sidecars)
    total = np.maximum(total, init_peak)
    if pod_level:
        given = _cpu_mem(pod_level, "spec.resources.requests")
        total = np.where([("cpu" in pod_level), ("memory" in pod_level)], given, total)
    overhead = child_map(spec, "overhead")
    if overhead:
        total += _cpu_mem(overhead, "spec.overhead")
    return total


def pod_key(pod: Mapping) -> tuple[str, str, str]:
    """(namespace, name, uid) of a pod; namespace defaults to ``default``."""
    meta = child_map(pod, "metadata")
    return (str(meta.get("namespace") or "default"), str(meta.get("name") or ""), str(meta.get("uid") or ""))


def pod_terminated(pod: Mapping) -> bool:
    """Succeeded or Failed pods hold no resources (kube-scheduler's cache drops them too)."""
    return child_map(pod, "status").get("phase") in TERMINAL_PHASES


def workload_key(pod: Mapping) -> str | None:
    """``namespace/Kind/name`` of the workload a pod belongs to, for learned profiles; None if standalone.

    The ``drsched.io/workload`` label wins; otherwise the controller owner, with a ReplicaSet's
    ``pod-template-hash`` suffix cut so all revisions of a Deployment share one profile.
    """
    meta = child_map(pod, "metadata")
    ns = str(meta.get("namespace") or "default")
    labels = child_map(meta, "labels")
    if labels.get(WORKLOAD_LABEL):
        return f"{ns}/{labels[WORKLOAD_LABEL]}"
    owners = [o for o in child_list(meta, "ownerReferences") if isinstance(o, Mapping)]
    owner = next((o for o in owners if o.get("controller")), owners[0] if owners else None)
    if owner is None:
        return None
    kind, name = str(owner.get("kind", "")), str(owner.get("name", ""))
    tmpl_hash = labels.get("pod-template-hash")
    if kind == "ReplicaSet" and tmpl_hash and name.endswith(f"-{tmpl_hash}"):
        return f"{ns}/Deployment/{name[: -len(tmpl_hash) - 1]}"
    return f"{ns}/{kind}/{name}"


def is_daemon_pod(pod: Mapping) -> bool:
    """Whether a DaemonSet owns the pod (an owner reference of kind DaemonSet): a pod that runs on every node it
    can, beside the jobs, and does none of their work (the lab's node monitor, a log shipper)."""
    return any(isinstance(o, Mapping) and o.get("kind") == "DaemonSet"
               for o in child_list(child_map(pod, "metadata"), "ownerReferences"))


Taint = tuple[str, str, str]
"""(key, value, effect) of a node taint."""
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
"""The taint effects Kubernetes accepts on a node (the apiserver refuses any other)."""
KEEP_OFF_EFFECTS = ("NoSchedule", "NoExecute")
"""The taint effects that keep a pod without a matching toleration off the node (``PreferNoSchedule`` only steers)."""
UNSCHEDULABLE_TAINT: Taint = ("node.kubernetes.io/unschedulable", "", "NoSchedule")
"""What a cordon (``spec.unschedulable``) means to a pod: kube-scheduler's NodeUnschedulable filter lets on only a
pod that tolerates this taint, which the node lifecycle controller also puts on a cordoned node."""


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """One node as the cache keeps it: (4,) capacity in policy units, pod slots, readiness, the taints that
    keep pods off it, and its labels."""

    name: str
    capacity: tuple[float, float, float, float]
    max_pods: float
    ready: bool
    taints: tuple[Taint, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)


def node_taints(node: Mapping) -> tuple[Taint, ...]:
    """The taints of a v1.Node that keep pods off it (``KEEP_OFF_EFFECTS``); a cordoned node's include
    ``UNSCHEDULABLE_TAINT`` (once), whether or not the node lifecycle controller has set it yet."""
    spec = child_map(node, "spec")
    taints = tuple((str(t.get("key") or ""), str(t.get("value") or ""), str(t["effect"]))
                   for t in child_list(spec, "taints")
                   if isinstance(t, Mapping) and t.get("effect") in KEEP_OFF_EFFECTS)
    if spec.get("unschedulable") and UNSCHEDULABLE_TAINT not in taints:
        taints += (UNSCHEDULABLE_TAINT,)
    return taints


TOLERATION_KEYS = ("key", "operator", "value", "effect")
"""The members of a toleration ``tolerates`` reads."""
Toleration = tuple[str | None, str | None, str | None, str | None]


def pod_tolerations(pod: Mapping) -> tuple[Toleration, ...] | None:
    """A v1.Pod's tolerations as ``TOLERATION_KEYS`` tuples, for a cache that keeps no pod objects
    (``as_pod`` gives a pod ``tolerates`` reads alike); None where one is not an object of strings (unknown).
    Equal lists give one shared tuple while recently seen: every pod of a workload has the same."""
    out = []
    for t in child_list(child_map(pod, "spec"), "tolerations"):
        if type(t) is not dict and not isinstance(t, Mapping):
            return None
        row = tuple(t.get(k) for k in TOLERATION_KEYS)
        if not all(v is None or type(v) is str for v in row):
            return None
        out.append(row)
    return _shared_tolerations(tuple(out)) if out else ()


@functools.lru_cache(maxsize=1024)
def _shared_tolerations(tolerations: tuple[Toleration, ...]) -> tuple[Toleration, ...]:
    return tolerations


def as_pod(tolerations: Sequence[Toleration]) -> dict:
    """A pod with just these tolerations, as ``tolerates`` and ``kube.pool`` read one (a missing member and
    None read the same)."""
    return {"spec": {"tolerations": [dict(zip(TOLERATION_KEYS, t, strict=True)) for t in tolerations]}}


def tolerates(pod: Mapping, taints: Sequence[Taint]) -> bool:
    """Whether the pod's tolerations tolerate every one of ``taints``: kube-scheduler's TaintToleration filter (a
    toleration matches a taint when its effect is empty or equal, and its key is empty with ``Exists``, or equal
    with ``Exists`` or an equal value)."""
    tolerations = [t for t in child_list(child_map(pod, "spec"), "tolerations") if isinstance(t, Mapping)]
    return all(any(_matches(t, taint) for t in tolerations) for taint in taints)


def _matches(toleration: Mapping, taint: Taint) -> bool:
    key, value, effect = taint
    if toleration.get("effect") and toleration["effect"] != effect:
        return False
    exists = toleration.get("operator") == "Exists"
    if not toleration.get("key"):
        return exists
    return toleration["key"] == key and (exists or str(toleration.get("value") or "") == value)


def node_info(node: Mapping, *, net_annotation: str, disk_annotation: str, default_net_mbps: float,
              default_disk_mbps: float) -> NodeInfo:
    """Read a v1.Node; raises ``QuantityError`` on an unparseable allocatable or bandwidth annotation.

    A node with no (or zero) allocatable cpu or memory gets a tiny capacity instead, so it never fits a
    request but does not break the snapshot (``ClusterSnapshot`` requires capacity > 0).
    """
    meta = child_map(node, "metadata")
    name = str(meta.get("name") or "")
    status = child_map(node, "status")
    alloc = child_map(status, "allocatable") or child_map(status, "capacity")
    ann = child_map(meta, "annotations")
    try:
        cpu = cpu_cores(alloc["cpu"]) if "cpu" in alloc else 0.0
        mem = mem_gib(alloc["memory"]) if "memory" in alloc else 0.0
        pods = parse_quantity(alloc["pods"]) if "pods" in alloc else 110.0
        net = float(parse_quantity(ann[net_annotation])) if net_annotation in ann else default_net_mbps
        disk = float(parse_quantity(ann[disk_annotation])) if disk_annotation in ann else default_disk_mbps
    except QuantityError as exc:
        raise QuantityError(f"node {name!r}: {exc}") from None
    conditions = [c for c in child_list(status, "conditions") if isinstance(c, Mapping)]
    ready_cond = next((c for c in conditions if c.get("type") == "Ready"), None)
    # A node with no conditions at all (hand-written JSON, a fresh KWOK node) counts as ready.
    ready = (ready_cond is None or ready_cond.get("status") == "True") and not child_map(node, "spec").get(
        "unschedulable", False)
    tiny = 1e-9
    return NodeInfo(name=name, capacity=(max(cpu, tiny), max(mem, tiny), max(net, tiny), max(disk, tiny)),
                    max_pods=pods, ready=bool(ready), taints=node_taints(node),
                    labels={str(k): str(v) for k, v in child_map(meta, "labels").items()})


