"""Which nodes a pod's labels constraints allow: its ``nodeSelector`` and required node affinity. Pure, no I/O.

Why it exists: shadow mode scores every node it caches, while kube-scheduler offered the other scheduler only
the nodes a pod may use, so drsched's shadow choice must be judged among those too, or it credits drsched with
a move the pod could never make (the lab's tainted system node did that at a third of the bindings,
``results/lab/shadow-rejudged-2026-12-07``; taints are ``kube.objects.tolerates``). This is kube-scheduler's
NodeAffinity filter on node labels:

* ``spec.nodeSelector``: every key must be a label of the node with exactly that value;
* ``spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms``: the node
  must match at least one term (the terms are ORed; no term: no node); a term matches when every one of its
  ``matchExpressions`` does (ANDed), and an empty term matches no node. Operators: ``In`` (the label is set to
  one of ``values``), ``NotIn`` (unset, or set to none of them), ``Exists``, ``DoesNotExist``.

Not supported, and taken as met (the node stays a candidate, as before shadow mode read affinity, so a node the
pod could use is never ruled out): the ``Gt`` / ``Lt`` operators and any other, ``matchFields`` (which
kube-scheduler allows on ``metadata.name`` only). Not constraints of this filter at all: preferred node affinity
(scoring), pod affinity and anti-affinity, topology spread constraints (they depend on the other pods).

Over many nodes (``LabelIndex.allowed``): a requirement reads only the label keys it names (``NodeRequirement.keys``),
so the nodes that agree on those keys get one answer. The index codes each key's value on every node once (per
key, the first time a requirement names it), groups the nodes by their codes on the requirement's keys, and asks
``matches`` once per group, of one node of it: the answer of ``matches`` on every node, in a few numpy passes
instead of a Python call per node (a cluster's nodes take a handful of zones and pools; a requirement on
``kubernetes.io/hostname`` still gets one group per node).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kube.objects import child_list, child_map

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
"""The ``matchExpressions`` operators judged here (module doc)."""

Expression = tuple[str, str, frozenset[str]]
"""(key, operator, values) of one supported match expression."""


@dataclass(frozen=True, slots=True)
class NodeRequirement:
    """A pod's required node constraints on labels (module doc)."""

    selector: tuple[tuple[str, str], ...] = ()
    """``spec.nodeSelector``'s (key, value) pairs, all required"""
    terms: tuple[tuple[Expression, ...], ...] | None = None
    """the required affinity's terms that can match, each the expressions judged (None: no required affinity)"""

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with ``labels`` satisfies the requirement."""
        if any(labels.get(k) != v for k, v in self.selector):
            return False
        return self.terms is None or any(all(_holds(e, labels) for e in term) for term in self.terms)

    @property
    def keys(self) -> tuple[str, ...]:
        """The label keys ``matches`` reads: two nodes whose labels agree on these get the same answer."""
        return tuple(sorted({k for k, _ in self.selector} | {e[0] for t in self.terms or () for e in t}))


class LabelIndex:
    """Which nodes of one node list a ``NodeRequirement`` allows, judged per group of nodes alike (module doc).

    State: per label key asked about, each node's value as a code (-1: unset). It describes the ``names`` and
    ``labels`` it was built with and is never updated: build a new one when a node or a label changes."""

    def __init__(self, names: Sequence[str], labels: Mapping[str, Mapping[str, str]]) -> None:
        self.names, self.labels = names, labels
        self._codes: dict[str, np.ndarray] = {}

    def _column(self, key: str) -> np.ndarray:
        """(N,) the code of each node's value of ``key``: 0, 1, ... in order of first sight, -1 where unset."""
        col = self._codes.get(key)
        if col is None:
            seen: dict[str, int] = {}
            get, none = self.labels.get, {}
            values = (get(n, none).get(key) for n in self.names)
            col = np.fromiter((-1 if v is None else seen.setdefault(v, len(seen)) for v in values), dtype=np.int64,
                              count=len(self.names))
            self._codes[key] = col
        return col

    def allowed(self, need: NodeRequirement) -> np.ndarray:
        """(N,) ``need.matches`` of each node's labels."""
        n = len(self.names)
        group, size = np.zeros(n, dtype=np.int64), 1  # nodes alike on the keys so far share a group id < size
        for key in need.keys:
            codes = self._column(key)
            width = int(codes.max(initial=-1)) + 2
            group, size = group * width + (codes + 1), size * width
            if size > 4 * n + 64:  # keep the ids small: number the groups that occur
                uniq, group = np.unique(group, return_inverse=True)
                size = uniq.size
        member = np.full(size, -1, dtype=np.int64)
        member[group] = np.arange(n)  # one node of each group (any: they agree on every key need reads)
        present = np.flatnonzero(member >= 0)
        get, none = self.labels.get, {}
        answer = np.zeros(size, dtype=bool)
        answer[present] = np.fromiter((need.matches(get(self.names[i], none)) for i in member[present].tolist()),
                                      dtype=bool, count=present.size)
        return answer[group]


def _holds(expression: Expression, labels: Mapping[str, str]) -> bool:
    key, op, values = expression
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return labels.get(key) not in values
    return (key in labels) is (op == "Exists")


def node_requirement(pod: Mapping) -> NodeRequirement | None:
    """The pod's required node constraints on labels (module doc); None when it has none."""
    spec = child_map(pod, "spec")
    selector = tuple(sorted((str(k), str(v)) for k, v in child_map(spec, "nodeSelector").items()))
    required = child_map(child_map(child_map(spec, "affinity"), "nodeAffinity"),
                         "requiredDuringSchedulingIgnoredDuringExecution")
    terms = None
    if required:
        terms = tuple(_term(t) for t in child_list(required, "nodeSelectorTerms")
                      if isinstance(t, Mapping) and (child_list(t, "matchExpressions") or child_list(t, "matchFields")))
    return None if not selector and terms is None else NodeRequirement(selector, terms)


def _term(term: Mapping) -> tuple[Expression, ...]:
    """A term's expressions that are judged; the others (module doc: not supported) are taken as met."""
    return tuple((str(e.get("key") or ""), e["operator"], frozenset(str(v) for v in child_list(e, "values")))
                 for e in child_list(term, "matchExpressions")
                 if isinstance(e, Mapping) and e.get("operator") in OPERATORS)
