"""The successor pod: the source pod's spec and volumes, renamed, with lineage and a node affinity. Pure.

Why it exists: the migration protocol deletes the source before it creates the successor, so the template is
taken from the source while it still exists (``template_of``), kept on the window Lease, and turned into a
pod body per placement attempt (``successor_body``).

What changes from the source:
* name ``<base>-m<attempt>``; label ``drsched.io/job=<base>`` (the job's identity across moves);
  annotations ``drsched.io/migrated-from=<source pod>`` and the migration record (lineage, budget history);
  the job's progress annotation and controller-owned keys are dropped (they describe the old process).
* ``spec.nodeName`` is removed: the successor goes through the scheduler (and the extender) with a
  *required* node affinity ``metadata.name In [node]`` added to every existing node-selector term, so the
  scheduler still validates the fit; the last placement candidate has no added affinity at all.
* the auto-mounted service-account token volume is dropped (admission adds a fresh one).
Everything else (containers, volumes, tolerations, scheduler name, priority) is kept as it was.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from migration.record import ANY_NODE, MigrationRecord

JOB_LABEL = "drsched.io/job"
MIGRATE_LABEL = "drsched.io/migrate"
MIGRATED_FROM_ANNOTATION = "drsched.io/migrated-from"
_DROPPED_ANNOTATIONS = ("drsched.io/migration", "drsched.io/progress",
                        "kubectl.kubernetes.io/last-applied-configuration")
_SA_VOLUME = re.compile(r"^kube-api-access-[a-z0-9]+$")
_SUCCESSOR = re.compile(r"^(?P<base>.+)-m(?P<k>\d+)$")


def job_base(pod: Mapping) -> str:
    """The job's original pod name: its ``drsched.io/job`` label, else the pod's own name."""
    meta = pod.get("metadata") or {}
    return str((meta.get("labels") or {}).get(JOB_LABEL) or meta.get("name") or "")


def template_of(pod: Mapping) -> dict[str, Any]:
    """The parts of a v1.Pod (camelCase JSON) a successor is made from: labels, annotations, spec."""
    meta = pod.get("metadata") or {}
    spec = copy.deepcopy(dict(pod.get("spec") or {}))
    spec.pop("nodeName", None)
    dropped = {v.get("name") for v in spec.get("volumes") or [] if _SA_VOLUME.match(str(v.get("name", "")))}
    if dropped:
        spec["volumes"] = [v for v in spec["volumes"] if v.get("name") not in dropped]
        for key in ("containers", "initContainers"):
            for c in spec.get(key) or []:
                mounts = [m for m in c.get("volumeMounts") or [] if m.get("name") not in dropped]
                if mounts:
                    c["volumeMounts"] = mounts
                else:
                    c.pop("volumeMounts", None)
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _DROPPED_ANNOTATIONS}
    return {"labels": dict(meta.get("labels") or {}), "annotations": annotations, "spec": spec}


def _with_node_affinity(spec: dict[str, Any], node: str) -> dict[str, Any]:
    spec = copy.deepcopy(spec)
    if node == ANY_NODE:
        return spec
    requirement = {"key": "metadata.name", "operator": "In", "values": [node]}
    affinity = spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms") or [{}]
    for term in terms:  # terms are ORed: the node must be added to each of them
        term["matchFields"] = [*(term.get("matchFields") or []), requirement]
    required["nodeSelectorTerms"] = terms
    return spec


def successor_body(template: Mapping[str, Any], record: MigrationRecord) -> dict[str, Any]:
    """The v1.Pod to create for the record's current placement attempt."""
    annotations = {**template.get("annotations", {}), MIGRATED_FROM_ANNOTATION: record.source_pod,
                   **record.for_storage()}
    labels = {**template.get("labels", {}), JOB_LABEL: record.base}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": record.successor, "namespace": record.namespace, "labels": labels,
                         "annotations": annotations},
            "spec": _with_node_affinity(dict(template.get("spec") or {}), record.placement)}


def is_successor_name(name: str, base: str) -> bool:
    match = _SUCCESSOR.match(name)
    return bool(match and match.group("base") == base)
