"""The successor pod: the source pod's spec and volumes, renamed, with lineage and a node affinity. Pure.

Why it exists: the migration protocol deletes the source before it creates the successor, so the template is
taken from the source while it still exists (``template_of``), kept on the window Lease, and turned into a
pod body per placement attempt (``successor_body``).

What changes from the source:
* name ``<base>-m<attempt>``; label ``drsched.io/job=<base>`` (the job's identity across moves);
  annotations ``drsched.io/migrated-from=<source pod>`` and the migration record (lineage, budget history);
  the job's progress annotation and controller-owned keys are dropped (they describe the old process).
* ``spec.nodeName`` is removed: the successor goes through the scheduler (and the extender) with *required*
  node affinity added to every existing node-selector term (terms are ORed, so each must carry it):
  ``metadata.name NotIn [source node]`` on every attempt, so a move never lands the job back on the node it
  left, and ``metadata.name In [node]`` for a named candidate (the last candidate has only the ``NotIn``).
  The scheduler still validates the fit.
* a source that is itself a successor carries the affinity its own move added; it is removed first (found
  through its lineage record), so a second move is pinned to its new target and excluded from the node it
  just left only. Nodes it left earlier may take it again (a transient cut is over; the rule's blocklist
  and its time test decide), which keeps a job from running out of nodes in a small cluster.
* the auto-mounted service-account token volume is dropped (admission adds a fresh one).
* with ``resume=scratch`` (the no-checkpoint baseline) every volume that could carry the source's state
  (anything but configMap, secret, projected, downwardAPI, emptyDir and ephemeral volumes) is replaced by an
  empty ``emptyDir`` of the same name: the successor finds no checkpoint and starts from zero. No env var
  or argument names a checkpoint in this project, so nothing else is changed.
Everything else (containers, volumes, tolerations, scheduler name, priority) is kept as it was.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from migration.errors import RecordError
from migration.record import ANY_NODE, MigrationRecord, Resume

JOB_LABEL = "drsched.io/job"
MIGRATE_LABEL = "drsched.io/migrate"
MIGRATED_FROM_ANNOTATION = "drsched.io/migrated-from"
_DROPPED_ANNOTATIONS = ("drsched.io/migration", "drsched.io/progress",
                        "kubectl.kubernetes.io/last-applied-configuration")
_STATELESS_VOLUMES = ("configMap", "secret", "projected", "downwardAPI", "emptyDir", "ephemeral")
"""Volume kinds that cannot hand the source's state to a successor (fresh per pod, or read-only config)."""
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_SA_VOLUME = re.compile(r"^kube-api-access-[a-z0-9]+$")
_SUCCESSOR = re.compile(r"^(?P<base>.+)-m(?P<k>\d+)$")


def job_base(pod: Mapping) -> str:
    """The job's original pod name: its ``drsched.io/job`` label, else the pod's own name."""
    meta = pod.get("metadata") or {}
    return str((meta.get("labels") or {}).get(JOB_LABEL) or meta.get("name") or "")


def template_of(pod: Mapping, *, resume: Resume = Resume.CHECKPOINT) -> dict[str, Any]:
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
    if resume is Resume.SCRATCH:
        spec["volumes"] = [v if any(k in v for k in _STATELESS_VOLUMES) else {"name": v.get("name"), "emptyDir": {}}
                           for v in spec.get("volumes") or []]
        if not spec["volumes"]:
            del spec["volumes"]
    try:
        lineage = MigrationRecord.from_storage(meta.get("annotations"))
    except RecordError:
        lineage = None
    if lineage is not None:
        spec = _without_requirements(spec, _requirements(lineage.placement, lineage.source_node))
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _DROPPED_ANNOTATIONS}
    return {"labels": dict(meta.get("labels") or {}), "annotations": annotations, "spec": spec}


def _requirements(placement: str, source: str) -> list[dict[str, Any]]:
    """The matchFields a move adds: never the source; the named candidate unless it is ``ANY_NODE``."""
    out = [{"key": "metadata.name", "operator": "NotIn", "values": [source]}]
    if placement != ANY_NODE:
        out.insert(0, {"key": "metadata.name", "operator": "In", "values": [placement]})
    return out


def _with_node_affinity(spec: dict[str, Any], placement: str, source: str) -> dict[str, Any]:
    spec = copy.deepcopy(spec)
    added = _requirements(placement, source)
    required = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {}).setdefault(_REQUIRED, {})
    terms = required.get("nodeSelectorTerms") or [{}]
    for term in terms:  # terms are ORed: the requirements must be added to each of them
        term["matchFields"] = [*(term.get("matchFields") or []), *copy.deepcopy(added)]
    required["nodeSelectorTerms"] = terms
    return spec


def _without_requirements(spec: dict[str, Any], added: list[dict[str, Any]]) -> dict[str, Any]:
    """``spec`` without the matchFields an earlier move added; the affinity it created is removed whole."""
    spec = copy.deepcopy(spec)
    affinity = spec.get("affinity") or {}
    required = (affinity.get("nodeAffinity") or {}).get(_REQUIRED) or {}
    terms = required.get("nodeSelectorTerms") or []
    for term in terms:
        kept = [f for f in term.get("matchFields") or [] if f not in added]
        if kept:
            term["matchFields"] = kept
        else:
            term.pop("matchFields", None)
    if terms and all(not t for t in terms):  # the move created the whole required block: take it away again
        del affinity["nodeAffinity"][_REQUIRED]
        if not affinity["nodeAffinity"]:
            del affinity["nodeAffinity"]
        if not affinity:
            del spec["affinity"]
    return spec


def successor_body(template: Mapping[str, Any], record: MigrationRecord) -> dict[str, Any]:
    """The v1.Pod to create for the record's current placement attempt."""
    annotations = {**template.get("annotations", {}), MIGRATED_FROM_ANNOTATION: record.source_pod,
                   **record.for_storage()}
    labels = {**template.get("labels", {}), JOB_LABEL: record.base}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": record.successor, "namespace": record.namespace, "labels": labels,
                         "annotations": annotations},
            "spec": _with_node_affinity(dict(template.get("spec") or {}), record.placement, record.source_node)}


def is_successor_name(name: str, base: str) -> bool:
    match = _SUCCESSOR.match(name)
    return bool(match and match.group("base") == base)
