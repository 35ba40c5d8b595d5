"""Fitting the contention model from a decision log: a log written under known parameters gives them back."""

import json

import numpy as np
import pytest

from policy.calibrate.__main__ import main
from policy.calibrate.fit import grid
from policy.calibrate.fromlog import fit_from_log, samples, score, split
from policy.decisionlog import DecisionInputs, decision_row, outcome_row, read_log
from policy.features import encode, estimated_usage
from policy.predicted import slowdown_on
from policy.sim.calibration import DEFAULT_PATH, params_of, read
from policy.sim.sharing import ContentionParams
from policy.state import ClusterSnapshot, PodView

TRUE = ContentionParams(cpu_share="equal", cpu_efficiency=0.9, interference=0.1)
SMALL = {"cpu_share": ("rate", "equal", "requests"), "request_exponent": (1.0,), "cpu_efficiency": (1.0, 0.9, 0.8),
         "interference": (0.0, 0.1, 0.2)}
WORKLOADS = {f"ns/Job/w{k}": (float(c), float(solo)) for k, (c, solo) in
             enumerate([(1, 30), (2, 60), (1.5, 45), (3, 90), (0.5, 20), (2.5, 120)])}


def write_log(path, *, n=240, params=TRUE, noise=0.02, seed=4, workload=True):
    """``n`` pods of six workloads (cpu demand, solo run time), each bound to one of two 4-core nodes that held
    0-3 other pods using 0-5 cores; run = solo x the slowdown ``params`` predicts x lognormal noise."""
    rng = np.random.default_rng(seed)
    names = list(WORKLOADS)
    lines = []
    for i in range(n):
        pods = rng.integers(0, 4, 2).astype(float)
        busy = np.where(pods > 0, rng.uniform(0.0, 5.0, 2), 0.0)
        snap = ClusterSnapshot(names=("a", "b"), capacity=np.array([[4.0, 16.0, 1000.0, 500.0]] * 2),
                               requested=np.stack([pods * 0.5, pods]).T, usage=np.stack([busy, pods, 0 * pods,
                                                                                         0 * pods]).T,
                               usage_age=np.array([5.0, 5.0]), assumed=np.zeros((2, 4)), pods=pods,
                               max_pods=np.full(2, 110.0), ready=np.array([True, True]))
        w = names[i % len(names)]
        cpu, solo = WORKLOADS[w]
        pod = PodView(requests=[cpu, 1.0], demand=[cpu, 1.0, 0.0, 0.0], demand_source="learned")
        node = int(rng.integers(2))
        s = slowdown_on(snap, pod, node, estimated_usage(snap, 60.0), params)
        run = solo * s * float(np.exp(rng.normal(0, noise)))
        uid = ("ns", f"p{i}", f"u{i}")
        lines.append(decision_row(ts=10.0 * i, replica="r", mode="shadow", pod=uid, requests=pod.requests,
                                  demand=pod.demand, demand_source="learned", policy="p", model_version="v",
                                  nodes=["a", "b"], scores=[10, 0], raw=[0.0, -1.0], chosen="a", actual="ab"[node],
                                  workload=w if workload else None,
                                  inputs=DecisionInputs(snap=snap, cluster=encode(snap, pod).cluster,
                                                        max_usage_age=60.0)))
        lines.append(outcome_row(ts=10.0 * i + run, replica="r", pod=uid, node="ab"[node], phase="Succeeded",
                                 created=10.0 * i, started=10.0 * i + 1, finished=10.0 * i + 1 + run))
    path.mkdir(parents=True, exist_ok=True)
    (path / "decisions-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def test_a_log_written_under_known_parameters_gives_them_back_and_beats_no_contention(tmp_path):
    items, skipped = samples(read_log(write_log(tmp_path / "log")).joined())
    assert len(items) == 240 and not any(skipped.values())
    sp = split(items)
    assert (len(sp.fit), len(sp.held), sp.unseen) == (168, 72, 0)
    best = fit_from_log(sp, grid(SMALL))
    assert best.params == TRUE
    assert best.held.median < 0.03 and best.held.p90 < 0.06  # the noise (2 %) is all that is left
    null = score(sp, None)
    assert null.held.median > 3 * best.held.median  # contention explains the spread the null cannot


def test_pods_a_fit_cannot_use_are_counted_and_later_pods_of_unseen_workloads_are_not_guessed(tmp_path):
    rows = read_log(write_log(tmp_path / "log", n=24)).joined()
    d, o = rows[0]
    rows += [(d, None), (d, type(o)(o.path, o.line, {**o.data, "phase": "Failed"})),
             (type(d)(d.path, d.line, {**d.data, "workload": None}), o),
             (type(d)(d.path, d.line, {**d.data, "actual": "c"}), type(o)(o.path, o.line, {**o.data, "node": None}))]
    items, skipped = samples(rows)
    assert len(items) == 24
    assert (skipped["no_outcome"], skipped["not_succeeded"], skipped["no_workload"],
            skipped["bound_not_kept"]) == (1, 1, 1, 1)
    late_newcomer = split(items[:4] + [items[5]], fit_fraction=0.8)  # workload 5 appears only after the fit's pods
    assert (len(late_newcomer.fit), len(late_newcomer.held), late_newcomer.unseen) == (4, 0, 1)


def test_the_command_reports_writes_a_named_set_and_refuses_a_log_it_cannot_fit(tmp_path, capsys):
    log = write_log(tmp_path / "log")
    cal = tmp_path / "calibration.yaml"
    cal.write_text(DEFAULT_PATH.read_text())
    grid_args = [a for k, v in SMALL.items() for a in ("--grid", f"{k}={','.join(map(str, v))}")]
    assert main(["log", "--log", str(log), "--calibration", str(cal), "--no-progress", "--write", *grid_args]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["fitted"] == TRUE.as_dict() and report["beats_no_contention"]
    assert report["pods"] == {"usable": 240, "fit": 168, "held_out": 72, "held_out_unseen_workload": 0,
                              "workloads": 6}
    assert report["errors"]["fitted"]["held_out"]["median"] < report["errors"]["no contention"]["held_out"]["median"]
    doc = read(cal)
    assert params_of(doc, "from-log") == TRUE and doc["active"] == read(DEFAULT_PATH)["active"]
    assert doc["fits"]["from-log"]["pods"]["held_out"] == 72
    # rows without a workload (written before the field) give nothing to pool: one line, exit 2, nothing written
    old = write_log(tmp_path / "old", n=30, workload=False)
    before = cal.read_text()
    assert main(["log", "--log", str(old), "--calibration", str(cal), "--no-progress", "--write"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "0 usable pods" in err and "'no_workload': 30" in err
    assert cal.read_text() == before
    assert main(["log", "--log", str(log), "--fit-fraction", "1.5"]) == 2
    assert "--fit-fraction" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "decisions-1.jsonl").write_text('{"v": 2, "kind": "outcome"}\n{"v": 2}\n')
    assert main(["log", "--log", str(bad)]) == 2
    assert "decisions-1.jsonl:1:" in capsys.readouterr().err


@pytest.mark.parametrize("frac", [0.3, 0.9])
def test_the_split_is_in_time_the_fit_never_sees_a_held_out_pod(tmp_path, frac):
    items, _ = samples(read_log(write_log(tmp_path / "log", n=60)).joined())
    sp = split(items, frac)
    assert max(s.ts for s in sp.fit) < min(s.ts for s in sp.held)


def test_daemon_pods_are_left_out_of_each_node_s_pods(tmp_path):
    pairs = read_log(write_log(tmp_path / "log", n=20)).joined()
    plain, _ = samples(pairs)
    less, _ = samples(pairs, daemon_pods=1)
    assert [s.snap.pods.tolist() for s in less] == [np.maximum(s.snap.pods - 1, 0).tolist() for s in plain]
