"""Table test of ``kube.affinity``: a pod's nodeSelector and required node affinity against node labels."""

import random

import numpy as np
import pytest

from kube.affinity import OPERATORS, LabelIndex, node_requirement

ZONE_A = {"zone": "a", "disk": "ssd", "kubernetes.io/hostname": "n1"}
ZONE_B = {"zone": "b", "kubernetes.io/hostname": "n2"}
BARE = {}


def pod(selector=None, *terms, preferred=None):
    spec = {}
    if selector is not None:
        spec["nodeSelector"] = selector
    affinity = {}
    if terms:
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": list(terms)}
    if preferred is not None:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    return {"spec": spec}


def expr(key, op, *values):
    return {"key": key, "operator": op, **({"values": list(values)} if values else {})}


def term(*exprs, fields=None):
    return {"matchExpressions": list(exprs), **({"matchFields": fields} if fields else {})}


CASES = [
    # (name, pod, allowed among ZONE_A, ZONE_B, BARE)
    ("nodeSelector: the exact value", pod({"zone": "a"}), (True, False, False)),
    ("nodeSelector: every key", pod({"zone": "a", "disk": "hdd"}), (False, False, False)),
    ("In", pod(None, term(expr("zone", "In", "a", "c"))), (True, False, False)),
    ("NotIn: also where unset", pod(None, term(expr("zone", "NotIn", "a"))), (False, True, True)),
    ("Exists", pod(None, term(expr("disk", "Exists"))), (True, False, False)),
    ("DoesNotExist", pod(None, term(expr("disk", "DoesNotExist"))), (False, True, True)),
    ("a term ANDs its expressions", pod(None, term(expr("zone", "Exists"), expr("disk", "DoesNotExist"))),
     (False, True, False)),
    ("terms are ORed", pod(None, term(expr("zone", "In", "a")), term(expr("zone", "In", "b"))), (True, True, False)),
    ("selector and affinity both", pod({"zone": "b"}, term(expr("zone", "In", "a", "b"))), (False, True, False)),
    ("an empty term matches no node", pod(None, term()), (False, False, False)),
    ("no term: no node", {"spec": {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}}}, (False, False, False)),
    # not supported, taken as met: the node stays a candidate
    ("Gt is taken as met", pod(None, term(expr("cores", "Gt", "4"), expr("zone", "In", "b"))), (False, True, False)),
    ("matchFields is taken as met",
     pod(None, term(fields=[{"key": "metadata.name", "operator": "In", "values": ["n9"]}])), (True, True, True)),
    ("preferred affinity only steers",
     pod(None, preferred=[{"weight": 1, "preference": term(expr("zone", "In", "a"))}]), (True, True, True)),
]


@pytest.mark.parametrize("name,p,allowed", CASES, ids=[c[0] for c in CASES])
def test_which_nodes_a_pod_s_label_constraints_allow(name, p, allowed):
    need = node_requirement(p)
    got = tuple(True if need is None else need.matches(labels) for labels in (ZONE_A, ZONE_B, BARE))
    assert got == allowed


@pytest.mark.parametrize("name,p,allowed", [c for c in CASES if node_requirement(c[1]) is not None],
                         ids=[c[0] for c in CASES if node_requirement(c[1]) is not None])
def test_the_index_allows_what_matches_allows(name, p, allowed):
    index = LabelIndex(("a", "b", "bare"), {"a": ZONE_A, "b": ZONE_B})  # "bare" has no labels entry at all
    assert tuple(index.allowed(node_requirement(p)).tolist()) == allowed


def test_the_index_agrees_with_matches_on_random_nodes_and_requirements():
    """``LabelIndex.allowed`` is ``matches`` per node, whatever the labels (unique hostnames, unset keys, values
    shared across keys) and the requirement (several keys, terms, operators, one index asked many times)."""
    rng = random.Random(23)
    keys, values = ["zone", "pool", "disk", "kubernetes.io/hostname", "gpu"], ["a", "b", "c", "d", "ssd", ""]
    for _ in range(150):
        n = rng.randint(0, 60)
        names = [f"n{i}" for i in range(n)]
        labels = {}
        for name in names:
            if rng.random() < 0.9:
                node = {k: rng.choice(values) for k in keys[:3] if rng.random() < 0.7}
                if rng.random() < 0.8:
                    node["kubernetes.io/hostname"] = name
                labels[name] = node
        index = LabelIndex(tuple(names), labels)
        for _ in range(5):
            selector = {k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 2))}
            terms = [term(*[expr(rng.choice(keys), rng.choice(OPERATORS + ("Gt",)),
                                 *rng.sample(values + names[:3], rng.randint(0, 3)))
                            for _ in range(rng.randint(0, 3))]) for _ in range(rng.randint(0, 3))]
            need = node_requirement(pod(selector or None, *terms))
            if need is None:
                continue
            want = np.array([need.matches(labels.get(x, {})) for x in names], dtype=bool)
            assert np.array_equal(index.allowed(need), want), (need, labels)


def test_a_pod_without_label_constraints_has_no_requirement_and_equal_ones_compare_equal():
    assert node_requirement({"spec": {}}) is None and node_requirement({}) is None
    assert node_requirement(pod(None, preferred=[])) is None
    assert node_requirement(pod({"zone": "a"})) == node_requirement(pod({"zone": "a"}))  # a memo key
