"""``lab shadow``: a default arm's shadow rows against the drsched arm's measured JCT, per seed and over seeds."""

import json
import math

import numpy as np
import pytest
import yaml

from lab import report
from lab.cli import main
from lab.shadow import ShadowError, co_runners, markdown, shadow_check
from policy.decisionlog import DecisionInputs, decision_row, outcome_row
from policy.features import encode
from policy.model import SHIPPED_MODEL, load_model, save_model
from policy.sim import calibration
from policy.sim.sharing import ORIGINAL
from policy.state import ClusterSnapshot, PodView

SNAP = ClusterSnapshot(names=("a", "b"), capacity=np.array([[4.0, 16.0, 1000.0, 500.0]] * 2),
                       requested=np.array([[1.0, 2.0], [0.0, 0.0]]),
                       usage=np.array([[3.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]), usage_age=np.array([5.0, 5.0]),
                       assumed=np.zeros((2, 4)), pods=np.array([1.0, 0.0]), max_pods=np.full(2, 110.0),
                       ready=np.array([True, True]))
POD = PodView(requests=[2.0, 1.0], demand=[2.0, 1.0, 0.0, 0.0], demand_source="learned")


def results(tmp_path, measured: dict[int, float], *, policy="model", jobs=4, slowdowns=("", ""),
            served: str | None = None, nodes: tuple[str, ...] = ()):
    """Seeds of a default arm (each pod bound to the busy node a, 5 s wait + 30 s run; the shadow chose the idle
    b) and a model arm whose mean JCT is ``measured[seed]`` x the default's; ``served``: the model arm also
    logged a serve row with that model version; ``nodes``: nodes.csv's job nodes (none: no nodes.csv)."""
    out = tmp_path / "run"
    (out / "decisions").mkdir(parents=True)
    lines = []
    for seed, ratio in measured.items():
        ids = {"default": f"def-un{seed}-1{seed}", "model": f"mod-un{seed}-2{seed}"}
        report.append_rows(out, "runs.csv", [{"seed": seed, "arm": a, "variant": "under", "run_id": r}
                                             for a, r in ids.items()])
        report.append_rows(out, "jobs.csv", [{"seed": seed, "arm": a, "variant": "under", "job": f"j{k}", "kind": "cpu",
                                              "jct_s": 35.0 * (ratio if a == "model" else 1.0),
                                              "run_slowdown": slowdowns[0], "best_slowdown": slowdowns[1],
                                              "solo_s": 30.0, "best_solo_s": 25.0}
                                             for a in ids for k in range(jobs)])
        if served is not None:
            lines.append(decision_row(ts=0, replica="r", mode="serve", pod=("lab", f"{ids['model']}-j0", f"m{seed}"),
                                      requests=POD.requests, demand=POD.demand, demand_source="learned",
                                      policy="model", model_version=served, nodes=["a", "b"], scores=[0, 10],
                                      raw=[-1.0, 0.0], chosen="b"))
        for k in range(jobs):
            uid = ("lab", f"{ids['default']}-j{k}", f"u{seed}-{k}")
            lines.append(decision_row(ts=k, replica="r", mode="shadow", pod=uid, requests=POD.requests,
                                      demand=POD.demand, demand_source="learned", policy=policy, model_version="v",
                                      nodes=["a", "b"], scores=[0, 10], raw=[-1.0, 0.0], chosen="b", actual="a",
                                      scheduler="default-scheduler", workload="lab/cpu",
                                      inputs=DecisionInputs(snap=SNAP, cluster=encode(SNAP, POD).cluster,
                                                            max_usage_age=60.0)))
            lines.append(outcome_row(ts=k + 40, replica="r", pod=uid, node="a", phase="Succeeded", created=0.0,
                                     started=5.0, finished=35.0))
    (out / "decisions" / "decisions-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    if nodes:
        report.append_rows(out, "nodes.csv", [{"node": n, "node_type": n} for n in nodes])
    return out


def test_a_prediction_inside_the_measured_interval_is_said_so_and_one_outside_by_how_much(tmp_path):
    # the contention model (original rule): on a the pod runs at 4/5 of its demand; on b alone: 5 + 30/1.25 = 29 s
    res = shadow_check(results(tmp_path / "in", {1: 0.80, 2: 0.84, 3: 0.86}), params=ORIGINAL, draws=50)
    assert [s["predicted"] for s in res["seeds"]] == [pytest.approx(29 / 35, abs=1e-4)] * 3
    assert [s["shadowed"] for s in res["seeds"]] == [4, 4, 4] and res["paired_seeds"] == 3
    geo = math.exp(sum(math.log(x) for x in (0.80, 0.84, 0.86)) / 3)  # the endpoint: exp of the mean log ratio
    assert res["measured_mean"] == pytest.approx(geo, abs=1e-4) and res["inside"] and res["miss"] == 0.0
    out = shadow_check(results(tmp_path / "out", {1: 0.99, 2: 1.0, 3: 1.01}), params=ORIGINAL, draws=50)
    assert out["inside"] is False and out["miss"] == pytest.approx(29 / 35 - out["measured_low"], abs=1e-3)
    assert out["measured_low"] == pytest.approx(0.9752, abs=1e-3)  # exp(-t_0.975,2 * sd / sqrt 3), sd 0.01
    text = markdown(out)
    assert "outside it, by -0.1" in text and "| 1 | under | 4 | 0 (0) | 4 | 0 | 0.829" in text


def test_rows_of_another_policy_are_left_out_and_one_seed_gives_no_verdict(tmp_path):
    res = shadow_check(results(tmp_path, {1: 0.9}, policy="worst-fit"), params=ORIGINAL, draws=50)
    assert res["left_out_other_policy"] == 4 and res["seeds"] == [] and res["inside"] is None
    one = shadow_check(results(tmp_path / "one", {1: 0.9}), params=ORIGINAL, draws=50)
    assert one["inside"] is None and "no verdict" in markdown(one)


def test_the_command_prints_the_table_and_names_what_is_missing(tmp_path, capsys):
    out = results(tmp_path, {1: 0.8, 2: 0.85})
    assert main(["shadow", str(out), "--params", "original"]) == 0
    assert "| 2 | under | 4 | 0 (0) | 4 | 0 |" in capsys.readouterr().out
    assert main(["shadow", str(tmp_path / "nothing")]) == 2
    assert "no runs.csv" in capsys.readouterr().out
    assert main(["shadow", str(out), "--arm", "default"]) == 2
    assert "--arm must be a drsched arm" in capsys.readouterr().out
    with pytest.raises(ShadowError, match="no decisions/"):
        (out / "decisions" / "decisions-1.jsonl").unlink()
        (out / "decisions").rmdir()
        shadow_check(out)


def test_a_seed_whose_run_a_gate_flagged_is_left_out_and_named(tmp_path):
    out = results(tmp_path, {1: 0.80, 2: 0.84, 3: 2.0})
    report.append_rows(out, "gates.csv", [
        {"seed": 3, "arm": "model", "variant": "under", "gate": "host-interference", "flagged": 1, "value": 0.4,
         "detail": "8 of 20 busy samples below 90 % of quota"},
        {"seed": 2, "arm": "default", "variant": "under", "gate": "host-interference", "flagged": 0, "value": 0.0,
         "detail": "0 of 9"}])
    res = shadow_check(out, params=ORIGINAL, draws=50)
    assert [s["seed"] for s in res["seeds"]] == [1, 2] and res["paired_seeds"] == 2
    assert res["measured_mean"] == pytest.approx(math.sqrt(0.80 * 0.84), abs=1e-4)
    assert res["left_out_flagged"] == [{"seed": 3, "variant": "under",
                                        "why": ["host-interference: 8 of 20 busy samples below 90 % of quota"]}]
    assert "Seed 3 (under) left out: a gate flagged its run (host-interference" in markdown(res)


def test_the_contention_model_at_the_binding_is_set_beside_the_measured_slowdown(tmp_path):
    # every default-arm pod ran on a, where the model (original rule) gives it 4/5 of its demand: slowdown 1.25;
    # the jobs measured 1.02 on that node and 1.4 against their best node
    out = results(tmp_path, {1: 0.80, 2: 0.84, 3: 0.9}, slowdowns=(1.02, 1.4))
    report.append_rows(out, "gates.csv", [{"seed": 3, "arm": "default", "variant": "under",
                                           "gate": "host-interference", "flagged": 1, "value": 0.4, "detail": "x"}])
    res = shadow_check(out, params=ORIGINAL, draws=50)
    # the model arm has no serve rows here, and seed 3's pods are left out with its flagged run
    # alone on a the model gives the pod its whole demand (1); solo on a's type took 30 s, on the best 25 s
    assert res["at_binding"] == [{"arm": "default", "node": "a", "pods": 8, "predicted": 1.25, "alone": 1.0,
                                  "sharing": 1.25, "measured": 1.02, "vs_best_node": 1.4, "solo_vs_best": 1.2,
                                  "co_start": None, "co_run": None}]  # no start and finish times here
    assert "| `default` | a | 8 | 1.250 | 1.000 | 1.250 | 1.020 | 1.400 | 1.200 | – | – |" in markdown(res)
    assert shadow_check(results(tmp_path / "none", {1: 0.8, 2: 0.9}), params=ORIGINAL, draws=50)["at_binding"] == []


def test_the_prediction_can_use_a_set_from_another_calibration_file(tmp_path, capsys):
    # a calibration file written by `policy.calibrate log --write --calibration FILE`: its sets, by name
    doc = calibration.read(calibration.DEFAULT_PATH)
    doc["sets"]["from-log"] = dict(doc["sets"]["original"])
    path = tmp_path / "cal.yaml"
    path.write_text(yaml.safe_dump(doc))
    out = results(tmp_path, {1: 0.8, 2: 0.85})
    assert main(["shadow", str(out), "--calibration", str(path), "--params", "from-log"]) == 0
    assert "| 1 | under | 4 | 0 (0) | 4 | 0 | 0.829" in capsys.readouterr().out  # the original rule's 29/35
    assert main(["shadow", str(out), "--calibration", str(tmp_path / "none.yaml")]) == 2
    assert "none.yaml: cannot read" in capsys.readouterr().out


SHIPPED = load_model(SHIPPED_MODEL).version


def test_rows_of_another_policy_are_re_scored_with_the_arm_s_model_and_labelled_so(tmp_path):
    # the extender served worst-fit when the default arm ran; the model arm served the shipped model: its rows
    # are re-scored with that model as served (a is 75 % busy, hot under prefer-cool: b, the idle node)
    res = shadow_check(results(tmp_path, {1: 0.8, 2: 0.85}, policy="worst-fit", served=SHIPPED), params=ORIGINAL,
                       draws=50)
    assert res["left_out_other_policy"] == 0 and res["rescored_with"] == "model"
    assert [(s["rescored"], s["off_nodes"], s["agreed"]) for s in res["seeds"]] == [(4, 0, 0)] * 2
    assert [s["predicted"] for s in res["seeds"]] == [pytest.approx(29 / 35, abs=1e-4)] * 2
    assert "**Re-scored, not live**" in markdown(res)
    # ... never with a model the arm did not serve, nor when nothing says which it served
    for served, why in (("other-version", "the arm served other-version"), (None, "logged no serve row")):
        res = shadow_check(results(tmp_path / str(served), {1: 0.8, 2: 0.85}, policy="worst-fit", served=served),
                           params=ORIGINAL, draws=50)
        assert res["left_out_other_policy"] == 8 and res["seeds"] == [] and why in res["not_rescored_why"]
    # and only when asked
    assert shadow_check(results(tmp_path / "no", {1: 0.8}, policy="worst-fit", served=SHIPPED), params=ORIGINAL,
                        draws=50, rescore=False)["left_out_other_policy"] == 4


def test_a_run_whose_arm_served_an_earlier_model_is_re_scored_with_that_model_when_named(tmp_path, capsys):
    # the model arm served a model that is no longer the shipped one (a promotion came between): the shipped
    # model is refused by version, and --model names the earlier artifact, which re-scores the rows
    shipped = load_model(SHIPPED_MODEL)
    earlier = save_model(tmp_path / "archive" / "earlier.npz", list(shipped.weights), list(shipped.biases),
                         activation=shipped.activation, meta={"version": "earlier-1"})
    out = results(tmp_path, {1: 0.8, 2: 0.85}, policy="worst-fit", served="earlier-1")
    refused = shadow_check(out, params=ORIGINAL, draws=50)
    assert refused["seeds"] == [] and refused["left_out_other_policy"] == 8
    assert f"here it is {SHIPPED}" in refused["not_rescored_why"] and "--model" in refused["not_rescored_why"]
    res = shadow_check(out, params=ORIGINAL, draws=50, model=earlier)
    assert res["rescored_with"] == "model" and [s["rescored"] for s in res["seeds"]] == [4, 4]
    assert main(["shadow", str(out), "--params", "original", "--model", str(earlier)]) == 0
    assert "**Re-scored, not live**" in capsys.readouterr().out
    assert main(["shadow", str(out), "--model", str(tmp_path / "none.npz")]) == 2
    assert "none.npz" in capsys.readouterr().out


def test_a_live_choice_no_job_could_go_to_is_re_scored_among_the_job_nodes(tmp_path):
    # the shadow chose b, but nodes.csv says the jobs run on a (and c, not in the rows): b is the system node
    out = results(tmp_path, {1: 0.8, 2: 0.85}, served=SHIPPED, nodes=("a", "c"))
    res = shadow_check(out, params=ORIGINAL, draws=50)
    assert [(s["rescored"], s["off_nodes"], s["agreed"], s["predicted"]) for s in res["seeds"]] == [(4, 4, 4, 1.0)] * 2
    assert res["job_nodes"] == ["a", "c"]
    gone = shadow_check(results(tmp_path / "gone", {1: 0.8}, nodes=("a",)), params=ORIGINAL, draws=50)
    assert gone["left_out_off_nodes"] == 4 and "a node no job could go to" in markdown(gone)


def test_cross_fitted_parameters_never_see_the_judged_seed(tmp_path, capsys):
    out = results(tmp_path, {1: 0.8, 2: 0.85, 3: 0.9})
    res = shadow_check(out, draws=50, crossfit=True)
    assert sorted(res["crossfit"]) == ["1", "2", "3"] and res["params"] == "cross-fitted"
    assert all(s["params"].startswith("cross-fitted") for s in res["seeds"])
    assert main(["shadow", str(out), "--crossfit"]) == 0
    assert "fitted on the other seeds' pods" in capsys.readouterr().out
    assert main(["shadow", str(out), "--crossfit", "--params", "original"]) == 2
    with pytest.raises(ShadowError, match="seed 1: 0 pods of the other seeds"):
        shadow_check(results(tmp_path / "one", {1: 0.8}), draws=50, crossfit=True)


def test_the_lab_s_monitor_pod_is_no_job_and_kinds_can_be_told_apart(tmp_path, capsys):
    out = results(tmp_path, {1: 0.8, 2: 0.85}, slowdowns=(1.02, 1.4))
    assert shadow_check(out, params=ORIGINAL, draws=50)["daemon_pods"] == 1
    assert main(["shadow", str(out), "--daemon-pods", "0", "--by-kind", "--params", "original"]) == 0
    text = capsys.readouterr().out
    assert "0 daemon pod(s) per node" in text and "| `default` | cpu | a | 8 |" in text


def test_several_results_are_judged_each_and_pooled(tmp_path, capsys):
    a, b = results(tmp_path / "a", {1: 0.80, 2: 0.84}), results(tmp_path / "b", {3: 0.86, 4: 0.82})
    assert main(["shadow", str(a), str(b), "--params", "original", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert len(res["results"]) == 2 and res["pooled"]["paired_seeds"] == 4 and res["pooled"]["inside"]
    geo = math.exp(sum(math.log(x) for x in (0.80, 0.84, 0.86, 0.82)) / 4)
    assert res["pooled"]["gap_mean"] == pytest.approx(geo / (29 / 35), abs=1e-3)  # measured / predicted
    assert main(["shadow", str(a), str(b), "--params", "original"]) == 0
    assert "Over 4 seeds of 2 results pooled (post hoc)" in capsys.readouterr().out


def test_co_runners_at_the_start_and_over_the_run():
    def job(name, start, finish, node="a", seed=1):
        return {"seed": seed, "arm": "default", "variant": "under", "job": name, "node": node,
                "start_s": start, "finish_s": finish}

    # j0 runs 0-10: j1 (0-5) is there at its start and half its run, j2 (5-15) the other half; j2 starts beside
    # j0 and has it half its run; j3 is elsewhere
    jobs = [job("j0", 0.0, 10.0), job("j1", 0.0, 5.0), job("j2", 5.0, 15.0), job("j3", 0.0, 10.0, node="b"),
            job("j4", 0.0, "")]
    co = co_runners(jobs)
    assert co[id(jobs[0])] == (1.0, 1.0) and co[id(jobs[2])] == (1.0, 0.5) and co[id(jobs[3])] == (0.0, 0.0)
    assert id(jobs[4]) not in co  # unfinished


def test_re_scored_rows_are_encoded_over_the_context_asked_for(tmp_path, capsys, monkeypatch):
    import policy.offline

    seen = []
    real = policy.offline.encoding
    monkeypatch.setattr(policy.offline, "encoding", lambda d, **kw: seen.append(kw.get("context")) or real(d, **kw))
    out = results(tmp_path, {1: 0.8, 2: 0.85}, policy="worst-fit", served=SHIPPED)
    res = shadow_check(out, params=ORIGINAL, draws=50, context="kept")
    assert res["context"] == "kept" and [s["rescored"] for s in res["seeds"]] == [4, 4]
    assert "kept" in seen and "logged" not in seen  # None: the contention model at the binding, no features
    assert shadow_check(out, params=ORIGINAL, draws=50)["context"] == "logged"
    assert main(["shadow", str(out), "--params", "original", "--context", "kept", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["context"] == "kept"
