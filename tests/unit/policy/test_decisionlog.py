"""The decision log's reader: rows round-trip, outcomes join by UID, bad input names file, row and field."""

import json

import numpy as np
import orjson
import pytest

from policy.decisionlog import (
    SCHEMA_VERSION,
    DecisionInputs,
    LogError,
    LogSchemaError,
    check_row,
    decision_row,
    outcome_row,
    read_log,
    top_positions,
)
from policy.features import encode
from policy.state import PodView

from .helpers import snapshot


def decision(uid="u1", **over):
    row = decision_row(ts=100.0, replica="r0", mode="shadow", pod=("ns", "p", uid), requests=[1, 2],
                       demand=[1, 2, 0, 0], demand_source="requests", policy="demand-aware",
                       model_version="heuristic:demand-aware", nodes=["n1", "n2"], scores=[10, 0],
                       raw=[-0.1, float("-inf")], chosen="n1", actual="n2", scheduler="default-scheduler",
                       slowdown={"n1": 1.0, "n2": 1.5}, predicted_gain=0.5)
    return {**row, **over}


def outcome(uid="u1"):
    return outcome_row(ts=200.0, replica="r0", pod=("ns", "p", uid), node="n2", phase="Succeeded", created=100.0,
                       started=101.0, finished=161.0)


def write(path, rows, tail=b""):
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows) + tail)
    return path


def test_rows_round_trip_and_outcomes_join_by_uid(tmp_path):
    write(tmp_path / "decisions-1.jsonl", [decision("u1"), decision("u2")])
    write(tmp_path / "decisions-2.jsonl", [outcome("u1")])
    log = read_log(tmp_path)
    joined = log.joined()
    assert [d["uid"] for d, _ in joined] == ["u1", "u2"]
    assert joined[0][1]["jct_s"] == 61.0 and joined[0][1]["run_s"] == 60.0 and joined[1][1] is None
    assert joined[0][0]["raw"] == [-0.1, None] and joined[0][0]["propensity"] == 1.0


def test_a_torn_last_line_is_skipped_and_listed_but_strict_refuses_it(tmp_path):
    path = write(tmp_path / "decisions-1.jsonl", [decision()], tail=b'{"v": 1, "kind": "deci')
    log = read_log(path)
    assert len(log.decisions) == 1 and log.torn == [(str(path), 2)]
    with pytest.raises(LogError, match=r"decisions-1.jsonl:2: <row>: truncated row"):
        read_log(path, strict=True)


@pytest.mark.parametrize(("content", "where", "cls"), [
    # a line cut in the middle of the file (not the crash's last line): an error, not skipped
    (b'{"v": 1, "kind": "deci\n' + json.dumps(decision()).encode() + b"\n", ":1: <row>: not JSON", LogError),
    (b"pod,node\np1,n1\n", ":1: <row>: not JSON", LogError),                          # a foreign file
    (json.dumps({"pod": "p"}).encode() + b"\n", ":1: v: missing", LogError),             # foreign JSON lines
    (json.dumps(decision(v=1)).encode() + b"\n", ":1: v: schema version 1; this reader reads 2 and 3",
     LogSchemaError),
    (json.dumps(decision(v=SCHEMA_VERSION + 1)).encode() + b"\n", ":1: v: schema version 4", LogSchemaError),
    (json.dumps(decision(v="3")).encode() + b"\n", ":1: v: schema version '3'", LogSchemaError),
    (json.dumps(decision(kind="guess")).encode() + b"\n", ":1: kind:", LogError),
    (json.dumps(decision(scores=[1])).encode() + b"\n", ":1: scores: 1 values for 2 nodes", LogError),
    (json.dumps(decision(propensity="1")).encode() + b"\n", ":1: propensity: expected int or float, got str",
     LogError),
    (json.dumps(decision(workload=7)).encode() + b"\n", ":1: workload: expected str or NoneType, got int", LogError),
    (json.dumps(decision()).encode() + b"\n" + json.dumps({k: v for k, v in outcome().items() if k != "phase"})
     .encode() + b"\n", ":2: phase: missing", LogError),
])
def test_bad_input_names_file_row_and_field_and_changes_nothing(tmp_path, content, where, cls):
    path = tmp_path / "decisions-x.jsonl"
    path.write_bytes(content)
    with pytest.raises(cls) as err:
        read_log(path)
    assert type(err.value) is cls and f"decisions-x.jsonl{where}" in str(err.value)
    assert path.read_bytes() == content and [p.name for p in tmp_path.iterdir()] == ["decisions-x.jsonl"]


def test_a_missing_log_is_an_error_naming_it(tmp_path):
    with pytest.raises(LogError, match="nope.jsonl:0: <file>: no such file"):
        read_log(tmp_path / "nope.jsonl")


def test_a_boolean_is_not_a_number():
    with pytest.raises(LogError, match="propensity"):
        check_row(decision(propensity=True), path="f", line=1)


def test_keep_skips_a_chosen_or_actual_node_the_row_does_not_score():
    row = decision_row(ts=1.0, replica="r", mode="shadow", pod=("ns", "p", "u"), requests=[1, 1], demand=[1, 1, 0, 0],
                       demand_source="requests", policy="p", model_version="v", nodes=["a", "b", "c"],
                       scores=[3, 10, 0], raw=[0.3, 0.9, 0.1], chosen="gone", actual="c", keep=1)
    assert row["nodes"] == ["b", "c"] and row["chosen"] == "gone" and row["nodes_total"] == 3


def test_keep_holds_the_best_nodes_and_the_chosen_and_actual_ones_in_order():
    row = decision_row(ts=1.0, replica="r", mode="shadow", pod=("ns", "p", "u"), requests=[1, 1], demand=[1, 1, 0, 0],
                       demand_source="requests", policy="p", model_version="v", nodes=["a", "b", "c", "d", "e"],
                       scores=[3, 10, 0, 10, 7], raw=[0.3, 0.9, float("-inf"), 1.0, 0.7], chosen="d", actual="c",
                       keep=2)
    assert row["nodes"] == ["b", "c", "d"] and row["scores"] == [10, 0, 10] and row["raw"] == [0.9, None, 1.0]
    assert row["nodes_total"] == 5
    check_row(row, path="f", line=1)
    assert decision_row(**{**{k: row[k] for k in ("ts", "replica", "mode", "demand_source", "policy", "chosen")},
                           "pod": ("ns", "p", "u"), "requests": [1, 1], "demand": [1, 1, 0, 0], "model_version": "v",
                           "nodes": ["a"], "scores": [10], "raw": [1.0], "keep": 2})["nodes_total"] == 1


def test_top_positions_are_the_first_of_a_stable_sort_by_score_then_raw_value():
    """``top_positions`` partitions instead of sorting; it must pick the very set the stable lexsort's first ``keep``
    are, ties and non-finite raw values included (positions break ties, NaN goes last)."""
    rng = np.random.default_rng(3)
    values = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 0.5, 0.5000001, -1.0])
    for _ in range(3000):
        n = int(rng.integers(1, 60))
        scores = rng.integers(0, rng.integers(1, 11), n).astype(np.float64)
        raw = rng.choice(values, n) if rng.random() < 0.5 else rng.normal(size=n).round(int(rng.integers(0, 3)))
        keep = int(rng.integers(1, n + 2))
        r = raw if np.isfinite(raw).all() else np.nan_to_num(raw, nan=-np.inf)
        assert top_positions(scores, raw, keep) == sorted(np.lexsort((-r, -scores))[:keep].tolist())


def with_inputs(keep=0, daemon_pods=None, snap=None, **given):
    """A shadow decision over 5 nodes whose inputs are recorded: node b has no usage sample, node c is full
    (``given``: ``DecisionInputs`` fields the caller computed, as the shadow hands its encoder's over)."""
    snap = snapshot([[4, 16, 125, 200]] * 5, requested=[[1, 2]] * 5, pods=[1, 1, 110, 1, 1],
                    usage=[[1, 2, 3, 4], [np.nan] * 4, [1, 1, 1, 1], [0.5, 1, 0, 0], [2, 2, 2, 2]],
                    age=[1.0, np.inf, 1.0, 1.0, 90.0]) if snap is None else snap
    return decision_row(ts=1.0, replica="r", mode="shadow", pod=("ns", "p", "u"), requests=[0.1 + 0.2, 1],
                        demand=[1 / 3, 1, 0, 0], demand_source="learned", policy="p", model_version="v",
                        nodes=snap.names, scores=[3, 10, 0, 10, 7], raw=[0.3, 0.9, float("-inf"), 1.0, 0.7],
                        chosen="n3", actual="n2", keep=keep,
                        inputs=DecisionInputs(snap=snap, cluster=np.arange(10, dtype=np.float32) / 7,
                                              max_usage_age=60.0, daemon_pods=daemon_pods, **given))


def test_inputs_from_the_encoder_s_mask_and_mean_capacity_are_those_recomputed():
    """The shadow hands the row its encoder's feasibility and mean capacity instead of recomputing them on the
    writer: the row is byte for byte the recomputed one, on snapshots with full, unready and overcommitted nodes."""
    rng = np.random.default_rng(11)
    pod = PodView(requests=[0.1 + 0.2, 1.0], demand=[1 / 3, 1, 0, 0], demand_source="learned")
    for _ in range(50):
        cap = rng.choice([2.0, 4.0, 64.0], size=(5, 4)) * rng.uniform(0.9, 1.1, size=(5, 4))
        snap = snapshot(cap, requested=cap[:, :2] * rng.choice([0.0, 0.5, 0.99, 1.0], size=(5, 2)),
                        pods=rng.choice([0.0, 3.0, 110.0], size=5), ready=rng.random(5) > 0.2,
                        usage=cap * rng.random((5, 4)), age=rng.choice([1.0, 90.0, np.inf], size=5))
        enc = encode(snap, pod)
        reused = with_inputs(keep=2, snap=snap, feasible=enc.mask, mean_cap=enc.mean_cap)
        assert orjson.dumps(reused) == orjson.dumps(with_inputs(keep=2, snap=snap))


def test_inputs_are_recorded_exactly_for_the_kept_nodes():
    row = json.loads(json.dumps(with_inputs(keep=2)))  # as written and read back
    check_row(row, path="f", line=1)
    inp = row["inputs"]
    assert row["nodes"] == ["n1", "n2", "n3"] and row["requests"] == [0.1 + 0.2, 1.0]  # not rounded
    assert row["demand"][0] == 1 / 3
    assert inp["usage"][0] == [None] * 4 and inp["usage_age"] == [None, 1.0, 1.0] and inp["pods"][1] == 110
    assert inp["n_nodes"] == 5 and inp["n_feasible"] == 4 and inp["mean_capacity"] == [4, 16, 125, 200]
    assert inp["est_util_mean"] == np.float32(np.arange(4) / 7).tolist()  # the float32 values, exactly
    assert inp["ready"] == [True] * 3 and inp["max_usage_age"] == 60.0


@pytest.mark.parametrize(("change", "where"), [
    (lambda i: i.pop("n_feasible"), "inputs.n_feasible: missing"),
    (lambda i: i.update(capacity=i["capacity"][:1]), "inputs.capacity: 1 values for 5 nodes"),
    (lambda i: i.update(n_nodes=5.0), "inputs.n_nodes: expected int, got float"),
    (lambda i: i.pop("daemon_pods"), "inputs.daemon_pods: missing"),
    (lambda i: i.update(daemon_pods=[0]), "inputs.daemon_pods: 1 values for 5 nodes"),
    (lambda i: i.update(daemon_pods=[0, 1, -1, None, 0]), "inputs.daemon_pods: a count >= 0 or null"),
])
def test_bad_inputs_name_their_field(change, where):
    row = with_inputs()
    change(row["inputs"])
    with pytest.raises(LogError, match=f"f:3: {where}"):
        check_row(row, path="f", line=3)


def test_a_row_without_the_workload_field_still_reads_and_says_none(tmp_path):
    """``workload`` came after schema 2's other fields: rows written before it are read, as None."""
    old = {k: v for k, v in decision(uid="u-old").items() if k != "workload"}
    path = tmp_path / "decisions-1.jsonl"
    path.write_text(json.dumps(old) + "\n" + json.dumps(decision(uid="u-new", workload="ns/Job/train")) + "\n")
    rows = read_log(path).decisions
    assert [r.get("workload") for r in rows] == [None, "ns/Job/train"]


def test_inputs_count_each_kept_node_s_daemonset_pods_null_where_not_counted():
    """Schema 3: ``inputs.daemon_pods`` per node of ``inputs.at``; a writer that did not count them writes null."""
    row = with_inputs()
    assert row["v"] == 3 and row["inputs"]["daemon_pods"] == [None] * 5
    counted = json.loads(json.dumps(with_inputs(keep=2, daemon_pods=np.array([0.0, 1.0, 2.0, 0.0, 1.0]))))
    assert check_row(counted, path="f", line=1)["inputs"]["daemon_pods"] == [1, 2, 0]  # n1, n2, n3 kept


def test_a_schema_2_log_still_reads_its_inputs_without_daemon_pods(tmp_path):
    """Logs written before schema 3 (the lab's results) read as written; their rows say which schema they are."""
    old = with_inputs()
    old["v"] = 2
    del old["inputs"]["daemon_pods"]
    rows = read_log(write(tmp_path / "decisions-1.jsonl", [old, with_inputs()])).decisions
    assert [r.version for r in rows] == [2, 3] and "daemon_pods" not in rows[0]["inputs"]
