"""``policy.logged.encoding``'s contexts: ``logged`` rebuilds what the server scored, ``kept`` what the one encoder
makes of the kept nodes alone (today's extender over a pod's pool), bitwise; a row without what ``kept`` needs is
named."""

import json

import numpy as np
import pytest

from policy.baselines import make_scorer
from policy.decisionlog import DecisionInputs, LogError, Row, decision_row, outcome_row
from policy.features import CAP_REL, POD_DEMAND, encode
from policy.logged import CONTEXTS, encoding
from policy.model import ModelScorer
from policy.offline import model_based
from policy.promote import log_summary
from policy.sim.sharing import ORIGINAL
from policy.state import ClusterSnapshot, PodView

# two job nodes and a tainted system node with a far bigger link and more cores (the lab's rn-system): it moves the
# mean capacity, so every node's cap_rel and the pod's demand over the mean, and the cluster's size
FULL = ClusterSnapshot(names=("a", "b", "sys"),
                       capacity=np.array([[0.2, 1.0, 2.5, 500.0], [0.4, 2.0, 1.25, 500.0], [2.0, 8.0, 100.0, 1250.0]]),
                       requested=np.array([[0.1, 0.2], [0.0, 0.5], [0.5, 1.0]]),
                       usage=np.array([[0.15, 0.3, 0.5, 100.0], [0.05, 0.6, 0.0, 20.0], [0.3, 2.0, 1.0, 5.0]]),
                       usage_age=np.array([5.0, 12.0, 3.0]), assumed=np.array([[0.0] * 4, [0.1, 0.2, 0.0, 30.0],
                                                                               [0.0] * 4]),
                       pods=np.array([2.0, 1.0, 9.0]), max_pods=np.full(3, 110.0), ready=np.array([True, True, True]))
POD = PodView(requests=[0.1, 0.25], demand=[0.1, 0.2, 0.3, 150.0], demand_source="learned", name="p")
JOB_NODES = frozenset({"a", "b"})


def row(*, nodes=("a", "b"), rows=(0, 1), keep=0, keep_inputs=0, line=7) -> Row:
    """A serve row over ``nodes`` (kube-scheduler's candidates: ``FULL``'s ``rows``) that the old extender
    encoded over all of ``FULL``, read back from its JSON as ``read_log`` would."""
    d = decision_row(ts=1.0, replica="r", mode="serve", pod=("ns", "p", "u"), requests=POD.requests,
                     demand=POD.demand, demand_source="learned", policy="model", model_version="v", nodes=list(nodes),
                     scores=list(range(len(nodes))), raw=[float(i) for i in range(len(nodes))], chosen=nodes[-1],
                     keep=keep, keep_inputs=keep_inputs,
                     inputs=DecisionInputs(snap=FULL, cluster=encode(FULL, POD).cluster, max_usage_age=60.0,
                                           rows=np.array(rows)))
    return Row("decisions-1.jsonl", line, json.loads(json.dumps(d)))


def same(x: np.ndarray, y: np.ndarray) -> bool:
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def test_logged_rebuilds_the_served_encoding_over_every_cached_node():
    served, dec = encode(FULL, POD), encoding(row())
    assert CONTEXTS[0] == "logged" and dec.names == ("a", "b")
    assert same(dec.enc.nodes, served.nodes[:2]) and same(dec.enc.pod, served.pod)
    assert same(dec.enc.cluster, served.cluster) and same(dec.enc.mask, served.mask[:2])
    assert same(encoding(row(), context="logged").enc.nodes, dec.enc.nodes)  # the default


@pytest.mark.parametrize("nodes", [None, JOB_NODES])
def test_kept_is_the_encoder_over_the_kept_nodes_alone(nodes):
    alone, logged = encode(FULL.subset([0, 1]), POD), encoding(row())
    dec = encoding(row(), context="kept", nodes=nodes)
    assert dec.names == ("a", "b") and dec.snap.names == ("a", "b")
    for got, want in ((dec.enc.nodes, alone.nodes), (dec.enc.pod, alone.pod), (dec.enc.cluster, alone.cluster),
                      (dec.enc.mask, alone.mask)):
        assert same(got, want)
    # the system node's capacity is gone from the mean: every cap_rel column and the pod's demand over it moved
    assert (dec.enc.nodes[:, CAP_REL] != logged.enc.nodes[:, CAP_REL]).all()
    assert (dec.enc.pod[POD_DEMAND] > logged.enc.pod[POD_DEMAND]).all()
    assert not same(dec.enc.cluster, logged.enc.cluster)


def test_kept_among_the_pool_leaves_out_a_kept_node_outside_it():
    # a shadow-style row that kept every cached node, the system node too: --nodes names the pool
    r = row(nodes=("a", "b", "sys"), rows=(0, 1, 2))
    assert same(encoding(r, context="kept").enc.nodes, encode(FULL, POD).nodes)  # nothing left out: as served
    dec = encoding(r, context="kept", nodes=JOB_NODES)
    assert dec.names == ("a", "b") and same(dec.enc.nodes, encode(FULL.subset([0, 1]), POD).nodes)
    assert same(dec.enc.cluster, encode(FULL.subset([0, 1]), POD).cluster)


@pytest.mark.parametrize(("kwargs", "nodes", "field", "says"), [
    ({"nodes": ("a", "b", "sys"), "rows": (0, 1, 2), "keep": 2}, None, "nodes", "keeps 2 of 3"),
    ({"nodes": ("a", "b", "sys"), "rows": (0, 1, 2), "keep_inputs": 1}, None, "inputs.at", "none for"),
    ({}, frozenset({"elsewhere"}), "inputs.capacity", "no node to encode over"),
])
def test_a_row_without_what_kept_needs_is_named_by_file_row_and_field(kwargs, nodes, field, says):
    r = row(**kwargs)
    encoding(r)  # the logged figures are all the logged context needs
    with pytest.raises(LogError) as exc:
        encoding(r, context="kept", nodes=nodes)
    assert (exc.value.path, exc.value.row, exc.value.field) == ("decisions-1.jsonl", 7, field)
    assert says in str(exc.value) and str(exc.value).startswith(f"decisions-1.jsonl:7: {field}: ")


def test_a_row_missing_inputs_only_outside_the_pool_is_kept_among_the_pool():
    # one node's inputs are missing (decision_log_input_nodes): a pool without that node does not need them
    r = row(nodes=("a", "b", "sys"), rows=(0, 1, 2), keep_inputs=2)
    missing = [n for i, n in enumerate(r["nodes"]) if i not in r["inputs"]["at"]]
    assert len(missing) == 1
    pool = frozenset(r["nodes"]) - set(missing)
    dec = encoding(r, context="kept", nodes=pool)
    assert set(dec.names) == pool


def test_an_unknown_context_is_refused():
    with pytest.raises(ValueError, match="context must be one of logged, kept"):
        encoding(row(), context="pool")


class NearHalfMean:
    """A model whose value peaks at a node half the cluster's mean cpu: over the logged cluster (the system node
    in the mean) b is nearer, over the kept nodes alone a is."""

    def q_values(self, enc):
        return -np.abs(enc.nodes[:, CAP_REL][:, 0] + 1.0)


def pairs(n=6):
    out = []
    for i in range(n):
        d = row(line=2 * i + 1)
        d = Row(d.path, d.line, {**d.data, "uid": f"u{i}", "name": f"p{i}"})
        o = outcome_row(ts=2.0, replica="r", pod=("ns", f"p{i}", f"u{i}"), node="b", phase="Succeeded", created=0.0,
                        started=5.0, finished=35.0)
        out.append((d, Row(d.path, d.line + 1, o)))
    return out


def test_the_offline_estimate_and_the_gate_re_score_over_the_context_asked_for():
    scorer = ModelScorer(NearHalfMean(), name="near-half")
    logged = model_based(pairs(), scorer, params=ORIGINAL, draws=20)
    kept = model_based(pairs(), scorer, params=ORIGINAL, draws=20, nodes=JOB_NODES, context="kept")
    assert (logged.n, logged.agreed, kept.n, kept.agreed) == (6, 6, 6, 0)  # bound to b: logged agrees, kept moves
    # the gate: the same model against a rule the context does not move (it reads the snapshot, not the features)
    worst = make_scorer("worst-fit")
    for context, differ in (("logged", 6), ("kept", 0)):
        s = log_summary(pairs(), served_version="v", candidate=scorer, served=worst, rows="served", nodes=JOB_NODES,
                        context=context)
        assert (s["context"], s["model_based"]["n"], s["model_based"]["differ"]) == (context, 6, differ)
