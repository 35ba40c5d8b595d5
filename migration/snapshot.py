"""One cycle's picture of the cluster, built from one list of nodes and pods: the ``ClusterSnapshot`` the rule
decides on and the ``PodView`` of every pod. Pure: the lists come from ``migration.kube``.

Why it exists: the controller must see the cluster the way the extender does, so it is built by the same
shared code (``kube.cache.ClusterCache`` for the per-node rows, ``kube.objects`` for requests and node
capacity, ``kube.profiles.pod_view_for`` for demand profiles), never a copy of it.

Reservations: a migration in flight whose successor does not exist yet (or is not bound yet) has its pod's
requests and demand added to its current placement node, so the rule does not send another job onto the
capacity this one is about to use (a soft reservation; the scheduler validates the real fit at placement).
Node usage: none is read yet (nodes are scored from requests, as the extender does with usage provider
``none``); ``usage`` samples can be passed in once the controller polls the monitor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from kube.cache import ClusterCache, NodeUsage, record_for
from kube.errors import QuantityError
from kube.objects import DISK_ANNOTATION, NET_ANNOTATION, node_info, pod_key, pod_requests
from kube.profiles import PROFILE_ANNOTATION, pod_view_for
from kube.selectors import matches
from policy.state import DEFAULT_DISK_MBPS, DEFAULT_NET_MBPS, ClusterSnapshot, PodView


@dataclass(frozen=True)
class NodeAnnotations:
    """How node bandwidth is read (the extender's defaults)."""

    net: str = NET_ANNOTATION
    disk: str = DISK_ANNOTATION
    default_net_mbps: float = DEFAULT_NET_MBPS
    default_disk_mbps: float = DEFAULT_DISK_MBPS


@dataclass(frozen=True, eq=False)
class Picture:
    """A cycle's snapshot plus the PodView of each parsed pod, keyed ``namespace/name``."""

    snapshot: ClusterSnapshot
    views: Mapping[str, PodView]
    bad_pods: Mapping[str, str]          # namespace/name -> why its requests did not parse


def build_picture(*, nodes: Iterable[Mapping], pods: Iterable[Mapping], now: float,
                  annotations: NodeAnnotations = NodeAnnotations(), profile_annotation: str = PROFILE_ANNOTATION,
                  node_selector: Mapping[str, str] | None = None, usage: Mapping[str, NodeUsage] | None = None,
                  reservations: Iterable[tuple[str, Mapping]] = ()) -> Picture:
    """The snapshot of ``nodes`` (only those matching ``node_selector``) with ``pods`` accounted.

    ``reservations``: (node, pod JSON -- a window's template will do) pairs to count on that node too.
    """
    cache = ClusterCache(assume_grace_s=0.0, clock=lambda: now)
    infos = []
    for node in nodes:
        if node_selector and not matches((node.get("metadata") or {}).get("labels"), node_selector):
            continue
        try:
            infos.append(node_info(node, net_annotation=annotations.net, disk_annotation=annotations.disk,
                                   default_net_mbps=annotations.default_net_mbps,
                                   default_disk_mbps=annotations.default_disk_mbps))
        except QuantityError:
            continue  # the extender ignores such nodes too; the rule never sees them
    cache.replace_nodes(infos)
    views: dict[str, PodView] = {}
    bad: dict[str, str] = {}
    records = []
    for pod in pods:
        ns, name, uid = pod_key(pod)
        try:
            requests = pod_requests(pod)
        except QuantityError as exc:
            bad[f"{ns}/{name}"] = str(exc)
            continue
        view, _ = pod_view_for(pod, requests=requests, annotation_key=profile_annotation, store=None)
        views[f"{ns}/{name}"] = view
        records.append(record_for(pod, view))
    cache.replace_pods(records)
    if usage:
        cache.apply_usage(dict(usage))
    snap = cache.view().snapshot(now)
    for node, pod in reservations:
        view = view_of(pod, profile_annotation=profile_annotation)
        if view is not None:
            snap = reserve(snap, node, view)
    return Picture(snapshot=snap, views=views, bad_pods=bad)


def view_of(pod: Mapping, *, profile_annotation: str = PROFILE_ANNOTATION) -> PodView | None:
    """The ``PodView`` of one pod JSON (a window's template will do); None when its requests do not parse."""
    try:
        view, _ = pod_view_for(pod, requests=pod_requests(pod), annotation_key=profile_annotation, store=None)
    except QuantityError:
        return None
    return view


def reserve(snap: ClusterSnapshot, node: str, pod: PodView) -> ClusterSnapshot:
    """``snap`` with ``pod`` counted on ``node`` (requests, assumed demand, one pod slot); unknown node: as is."""
    if node not in snap.names:
        return snap
    i = snap.names.index(node)
    requested, assumed, pods = snap.requested.copy(), snap.assumed.copy(), snap.pods.copy()
    requested[i] += pod.requests
    assumed[i] += pod.demand
    pods[i] += 1
    return ClusterSnapshot(names=snap.names, capacity=snap.capacity, requested=requested, usage=snap.usage,
                           usage_age=snap.usage_age, assumed=assumed, pods=pods, max_pods=snap.max_pods,
                           ready=snap.ready, now=snap.now)


def fits(snap: ClusterSnapshot, node: str, pod: PodView) -> bool:
    """Whether ``pod``'s requests fit on ``node`` now (ready, a free pod slot, cpu and memory)."""
    if node not in snap.names:
        return False
    i = snap.names.index(node)
    free = snap.capacity[i, :2] - snap.requested[i]
    return bool(snap.ready[i] and snap.pods[i] < snap.max_pods[i] and np.all(pod.requests <= free + 1e-9))
