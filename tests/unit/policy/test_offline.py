"""Offline evaluation: importance weighting recovers a policy's mean JCT that the log never followed."""

import json

import numpy as np
import pytest

from policy.decisionlog import Row, decision_row, outcome_row, read_log
from policy.offline import TARGETS, importance_weighted, main, shadow_summary

JCT = {"a": 10.0, "b": 20.0}  # the truth: a pod on a takes 10 s, on b 20 s


def synthetic_log(path, n=2000, seed=1):
    """Serve rows exploring between the near-tied a and b (propensity 1/2); greedy would always pick a."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        chosen = "ab"[rng.integers(2)]
        pod = ("ns", f"p{i}", f"u{i}")
        lines.append(decision_row(ts=i, replica="r", mode="serve", pod=pod, requests=[1, 1], demand=[1, 1, 0, 0],
                                  demand_source="requests", policy="model", model_version="v1",
                                  nodes=["a", "b", "c"], scores=[10, 9, 0], raw=[-0.1, -0.2, float("-inf")],
                                  chosen=chosen, propensity=0.5, explored=["a", "b"]))
        jct = JCT[chosen] + rng.normal()
        lines.append(outcome_row(ts=i + 1, replica="r", pod=pod, node=chosen, phase="Succeeded", created=0.0,
                                 started=0.0, finished=jct))
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def test_ips_recovers_the_greedy_policys_mean_jct_and_the_logged_mean(tmp_path):
    pairs = read_log(synthetic_log(tmp_path / "decisions-1.jsonl")).joined()
    greedy = {e.estimator: e for e in importance_weighted(pairs, TARGETS["greedy"], draws=300)}
    logged = {e.estimator: e for e in importance_weighted(pairs, TARGETS["logged"], draws=300)}
    for e in greedy.values():
        assert e.lo <= 10.0 <= e.hi and e.value == pytest.approx(10.0, abs=0.8) and e.n == 2000
        assert 900 < e.matched < 1100  # half the logged choices were greedy's
    assert logged["snips"].value == pytest.approx(15.0, abs=0.5) and logged["snips"].matched == 2000
    assert greedy["snips"].hi < logged["snips"].lo  # the log tells the two apart


def test_shadow_rows_report_agreement_gain_and_observed_jct():
    def row(actual, chosen, gain, jct):
        d = decision_row(ts=0, replica="r", mode="shadow", pod=("ns", "p", actual + chosen), requests=[1, 1],
                         demand=[1, 1, 0, 0], demand_source="requests", policy="model", model_version="v",
                         nodes=["a", "b"], scores=[10, 0], raw=[0.0, -1.0], chosen=chosen, actual=actual,
                         predicted_gain=gain)
        o = outcome_row(ts=1, replica="r", pod=("ns", "p", actual + chosen), node=actual, phase="Succeeded",
                        created=0.0, started=0.0, finished=jct)
        return d, o

    pairs = [(Row("f", i, d), Row("f", i, o)) for i, (d, o) in
             enumerate([row("a", "a", 0.0, 10.0), row("b", "a", 0.5, 30.0), row("b", "a", 0.3, 20.0)])]
    s = shadow_summary(pairs)
    assert s["decisions"] == 3 and s["agreement_rate"] == pytest.approx(1 / 3, abs=1e-6)
    assert s["mean_predicted_gain"] == pytest.approx(0.8 / 3, abs=1e-6) and s["observed_mean_jct_where_agreed"] == 10.0
    assert s["observed_mean_jct_where_differed"] == 25.0


def test_the_command_prints_a_report_and_names_a_bad_log(tmp_path, capsys):
    synthetic_log(tmp_path / "decisions-1.jsonl", n=200)
    assert main([str(tmp_path), "--target", "greedy", "--draws", "50"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["serve"] == {"decisions": 200, "explored": 200, "bound_elsewhere": 0}
    assert report["estimates"][0]["estimator"] == "ips"
    bad = tmp_path / "decisions-2.jsonl"
    bad.write_text('{"v": 7, "kind": "decision"}\n')
    assert main([str(tmp_path)]) == 2
    assert "decisions-2.jsonl:1: v: schema version 7" in capsys.readouterr().err
