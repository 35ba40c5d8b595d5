"""Pod watch events decoded to the members the extender reads (issue #26).

Why it exists: a scheduled pod is 3-4 watch events (ADDED pending, MODIFIED bound, MODIFIED Running, DELETED), each
the whole pod -- managedFields, the defaulted spec, volumes, container statuses -- of which the extender reads a few
members. ``decode_pod_event`` decodes one line with ``extender.pruned_events`` into ``Pod`` below and skips the rest
without building it; a line the schema refuses, and every event but ADDED / MODIFIED / DELETED, is decoded whole as
before.

Who reads what of a watched pod (each member below is read by at least one):

* the cache (``extender.kube.pod_record``, ``kube.cache.record_for``): ``kube.objects.pod_key`` (namespace, name,
  uid); ``pod_requests`` (each container's and init container's ``resources``, an init container's
  ``restartPolicy``, ``overhead``, the pod-level ``resources``); ``nodeName``; the phase; the PodScheduled
  condition's status and ``lastTransitionTime``; ``is_daemon_pod`` and ``workload_key`` (``ownerReferences``,
  labels); ``pod_tolerations``; ``kube.profiles.pod_view_for`` (annotations; the profile store's ``workload_of``:
  labels, namespace, ``ownerReferences``);
* the pod index (``extender.pod_index``): the workload as above; an agent's labels, namespace, ``nodeName``,
  ``podIP`` / ``hostIP``, phase, ``deletionTimestamp`` and Ready condition;
* the recording observer: shadow mode's binding (``nodeName``, phase, ``schedulerName``, namespace, labels; on a
  binding the tolerations, ``nodeSelector`` and ``affinity``, ``extender.shadow``); outcomes
  (``extender.outcomes``: phase, ``nodeName``, ``creationTimestamp``, each container status's ``state``,
  ``startTime``);
* the watch itself: ``resourceVersion``, to resume from.

A member is kept as the JSON value it is (``Any``) unless it is a list of objects of which only some members are
read (containers, conditions, container statuses). ``tests/unit/extender/test_pod_events.py`` mutates every leaf of
a KWOK-shaped pod at each of its events and checks that every reader holds, from the decoded pod, exactly what it
holds from the whole one.

Not done: skipping an event that changes nothing a reader holds (the Running update, for most pods), as
``extender.node_events`` skips a node heartbeat. A pod's demand is read again from the profile store at each event
(a learned profile may have changed in between), so an exact skip would still build the pod's profile view, a
quarter of applying, to save ~5 us an event on average (``extender/README.md``, "Fifth pass").
"""

from __future__ import annotations

from typing import Any, TypedDict

from extender.pruned_events import pruned_decoder

CONDITION_KEYS = ("type", "status", "lastTransitionTime")
"""The members of a pod condition that are read (the PodScheduled time; an agent's Ready status)."""

Condition = TypedDict("Condition", dict.fromkeys(CONDITION_KEYS, Any), total=False)  # noqa: UP013 -- built from the keys


class Metadata(TypedDict, total=False):
    name: Any
    namespace: Any
    uid: Any
    resourceVersion: Any  # noqa: N815 -- the wire's keys, here and below
    labels: Any
    annotations: Any
    ownerReferences: Any  # noqa: N815
    creationTimestamp: Any  # noqa: N815
    deletionTimestamp: Any  # noqa: N815


class Container(TypedDict, total=False):
    resources: Any
    restartPolicy: Any  # noqa: N815 -- an init container's: "Always" makes it a sidecar


class Spec(TypedDict, total=False):
    nodeName: Any  # noqa: N815
    schedulerName: Any  # noqa: N815
    containers: list[Container]
    initContainers: list[Container]  # noqa: N815
    overhead: Any
    resources: Any
    tolerations: Any
    nodeSelector: Any  # noqa: N815
    affinity: Any


class ContainerStatus(TypedDict, total=False):
    state: Any


class Status(TypedDict, total=False):
    phase: Any
    conditions: list[Condition]
    podIP: Any  # noqa: N815
    hostIP: Any  # noqa: N815
    startTime: Any  # noqa: N815
    containerStatuses: list[ContainerStatus]  # noqa: N815


class Pod(TypedDict, total=False):
    """A v1.Pod as the extender reads it (module doc)."""

    metadata: Metadata
    spec: Spec
    status: Status


decode_pod_event = pruned_decoder(Pod)
"""One pod watch line as ``{"type", "object"}`` with the object pruned to ``Pod`` (``extender.pruned_events``)."""
