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


# -- any policy, by the calibrated contention model -----------------------------------------------------------

from policy.baselines import make_scorer  # noqa: E402
from policy.decisionlog import DecisionInputs  # noqa: E402
from policy.features import encode  # noqa: E402
from policy.offline import model_based, predicted_at_binding  # noqa: E402
from policy.sim.sharing import ORIGINAL, ContentionParams  # noqa: E402
from policy.state import ClusterSnapshot, PodView  # noqa: E402

EQUAL_CPU = ContentionParams(cpu_share="equal")


def contended_pair(i: int, *, busy_cpu: float = 3.0, wait: float = 5.0, run: float = 30.0, daemons: int = 0):
    """Another scheduler bound a 2-core pod to node a (one pod there using ``busy_cpu`` of 4 cores) although
    b (same size) was idle; the pod waited ``wait`` s and ran ``run`` s. ``daemons``: pods on every node that
    use nothing (a DaemonSet's)."""
    cap = np.array([[4.0, 16.0, 1000.0, 500.0]] * 2)
    snap = ClusterSnapshot(names=("a", "b"), capacity=cap, requested=np.array([[1.0, 2.0], [0.0, 0.0]]),
                           usage=np.array([[busy_cpu, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]),
                           usage_age=np.array([5.0, 5.0]), assumed=np.zeros((2, 4)),
                           pods=np.array([1.0 + daemons, 0.0 + daemons]),
                           max_pods=np.full(2, 110.0), ready=np.array([True, True]))
    pod = PodView(requests=[2.0, 1.0], demand=[2.0, 1.0, 0.0, 0.0], demand_source="learned")
    uid = ("ns", f"p{i}", f"u{i}")
    d = decision_row(ts=i, replica="r", mode="shadow", pod=uid, requests=pod.requests, demand=pod.demand,
                     demand_source="learned", policy="model", model_version="v", nodes=["a", "b"], scores=[0, 10],
                     raw=[-1.0, 0.0], chosen="b", actual="a", scheduler="default-scheduler",
                     inputs=DecisionInputs(snap=snap, cluster=encode(snap, pod).cluster, max_usage_age=60.0))
    o = outcome_row(ts=i + 1, replica="r", pod=uid, node="a", phase="Succeeded", created=0.0, started=wait,
                    finished=wait + run)
    return Row("f", 2 * i + 1, d), Row("f", 2 * i + 2, o)


def test_a_policy_that_avoids_the_busy_node_is_credited_the_predicted_slowdown_and_keeps_the_wait():
    pairs = [contended_pair(i) for i in range(20)]
    # original rule: the 3-core pod and the 2-core pod rise together to 4/5 of their demand: slowdown 1.25
    # on a, 1 on the idle b; so jct 35 = 5 wait + 30 run becomes 5 + 30 / 1.25 = 29
    e = model_based(pairs, make_scorer("lookahead"), params=ORIGINAL, draws=100)
    assert (e.n, e.agreed) == (20, 0) and e.observed == pytest.approx(35.0)
    assert e.value == pytest.approx(29.0) and e.ratio == pytest.approx(29 / 35) and e.lo == e.hi == e.ratio
    # equal cpu shares (CFS): the newcomer gets its 2 cores, the other pod the rest: no predicted slowdown on a
    assert model_based(pairs, make_scorer("lookahead"), params=EQUAL_CPU, draws=100).value == pytest.approx(35.0)
    # a policy that picks where the pod was bound is credited exactly what happened
    same = model_based(pairs, make_scorer("worst-fit"), params=ORIGINAL, draws=100)
    assert (same.agreed, same.value, same.ratio) == (20, 35.0, 1.0)
    # run_s: the wait is not part of it
    assert model_based(pairs, make_scorer("lookahead"), params=ORIGINAL, reward="run_s").value == pytest.approx(24.0)


def test_the_interval_covers_the_spread_and_rows_it_cannot_use_are_counted():
    rng = np.random.default_rng(3)
    pairs = [contended_pair(i, run=float(rng.uniform(10, 50))) for i in range(60)]
    d, o = contended_pair(99)
    elsewhere = (Row("f", 1, {**d.data, "actual": "c"}), Row("f", 2, {**o.data, "node": None}))
    rows = [*pairs, (d, None), (Row("f", 1, {**d.data, "inputs": None}), o), elsewhere]
    e = model_based(rows, make_scorer("lookahead"), params=ORIGINAL, draws=300)
    assert e.n == 60 and (e.skipped["no_outcome"], e.skipped["no_inputs"], e.skipped["bound_not_kept"]) == (1, 1, 1)
    assert e.lo < e.ratio < e.hi < 1.0  # runs vary, the wait does not: the ratio moves with their mix


def test_the_command_estimates_a_shipped_model_and_a_baseline_and_names_a_bad_spec(tmp_path, capsys):
    lines = [r for i in range(10) for r in contended_pair(i)]
    (tmp_path / "decisions-1.jsonl").write_text("".join(json.dumps(r.data) + "\n" for r in lines))
    assert main([str(tmp_path), "--policy", "lookahead", "--policy", "dqn:policy/models/default.npz",
                 "--params", "original", "--draws", "50"]) == 0
    report = json.loads(capsys.readouterr().out)
    look, model = report["model_based"]
    assert look["policy"] == "lookahead" and look["value"] == pytest.approx(29.0) and look["params"] == "original"
    assert model["policy"] == "dqn:default" and model["n"] == 10
    assert main([str(tmp_path), "--policy", "no-such-rule"]) == 2
    assert "unknown scorer 'no-such-rule'" in capsys.readouterr().err
    assert main([str(tmp_path), "--policy", "lookahead", "--params", "nope"]) == 2
    assert "no parameter set 'nope'" in capsys.readouterr().err


def test_two_policies_on_the_same_pods_are_compared_paired():
    from policy.offline import model_paired

    rng = np.random.default_rng(5)
    pairs = [contended_pair(i, run=float(rng.uniform(10, 50))) for i in range(40)]
    look, worst = make_scorer("lookahead"), make_scorer("worst-fit")
    p = model_paired(pairs, look, worst, params=ORIGINAL, draws=300)
    # lookahead leaves the busy node (run / 1.25), worst-fit stays where the pod ran (observed): every pod differs
    assert (p.n, p.differ) == (40, 40) and p.baseline_value == pytest.approx(np.mean([o["jct_s"] for _, o in pairs]))
    assert p.ratio == pytest.approx(p.candidate_value / p.baseline_value) and p.lo < p.ratio < p.hi < 1.0
    back = model_paired(pairs, worst, look, params=ORIGINAL, draws=300)
    assert back.ratio == pytest.approx(1 / p.ratio, rel=1e-5) and back.lo > 1.0
    same = model_paired(pairs, look, look, params=ORIGINAL, draws=50)
    assert (same.differ, same.ratio, same.lo, same.hi) == (0, 1.0, 1.0, 1.0)


def test_the_recorded_choice_is_estimated_as_the_row_recorded_it():
    pairs = [contended_pair(i) for i in range(10)]  # drsched's shadow chose b, the idle node
    e = model_based(pairs, None, params=ORIGINAL, draws=50)
    assert e.policy == "recorded" and (e.n, e.agreed) == (10, 0) and e.value == pytest.approx(29.0)
    d, o = pairs[0]
    gone = (Row("f", 1, {**d.data, "chosen": None}), o)  # drsched allowed no node: nothing to estimate
    assert model_based([gone], None, params=ORIGINAL).skipped["no_pick"] == 1


def test_daemon_pods_are_no_jobs_sharing_the_node():
    pairs = [contended_pair(i, daemons=1) for i in range(10)]
    look = make_scorer("lookahead")
    # equal cpu shares: counted as a job, the monitor pod on a takes half of the 3 busy cores, so three jobs
    # want 1.5 + 1.5 + 2 of 4 cores and the pod gets 4/3 (slowdown 1.5); left out, the one busy job and the pod
    # get 2 each (no slowdown), as without any daemon
    d, o = pairs[0]
    assert predicted_at_binding(d, o, params=EQUAL_CPU) == ("a", pytest.approx(1.5))
    assert predicted_at_binding(d, o, params=EQUAL_CPU, daemon_pods=1) == ("a", pytest.approx(1.0))
    assert model_based(pairs, look, params=EQUAL_CPU, draws=50).value == pytest.approx(5 + 30 / 1.5)
    assert model_based(pairs, look, params=EQUAL_CPU, draws=50, daemon_pods=1).value == pytest.approx(35.0)


def test_a_policy_picks_as_served_with_the_hot_filter_and_keeps_ties_on_the_bound_node():
    pairs = [contended_pair(i) for i in range(10)]  # a is 75 % busy: hot at the extender's 65 % cpu threshold
    worst = make_scorer("worst-fit")  # prefers the busier node a, where the pods were bound
    assert model_based(pairs, worst, params=ORIGINAL, draws=50).agreed == 10
    served = model_based(pairs, worst, params=ORIGINAL, draws=50, hot_filter="prefer-cool")
    assert served.agreed == 0 and served.value == pytest.approx(29.0)  # the filter sends them to b
    assert model_based(pairs, worst, params=ORIGINAL, draws=50, hot_filter="off").agreed == 10

    class Flat:
        name = "flat"

        def score(self, snap, pod):
            return np.zeros(snap.n_nodes)

    assert model_based(pairs, Flat(), params=ORIGINAL, draws=50).agreed == 10  # argmax: the first, a
    cool = [contended_pair(i, busy_cpu=1.0) for i in range(10)]
    assert model_based(cool, Flat(), params=ORIGINAL, draws=50, hot_filter="prefer-cool").agreed == 10  # a tie


def test_only_the_nodes_a_pod_could_go_to_are_picked():
    pairs = [contended_pair(i) for i in range(10)]  # the shadow chose b; say b is a node no pod could go to
    only_a = frozenset({"a"})
    assert model_based(pairs, make_scorer("lookahead"), params=ORIGINAL, draws=50, nodes=only_a).agreed == 10
    assert model_based(pairs, None, params=ORIGINAL, draws=50, nodes=only_a).skipped["no_pick"] == 10


def test_two_policies_compared_paired_pick_as_served_among_the_nodes_a_pod_could_go_to():
    from policy.offline import model_paired

    pairs = [contended_pair(i) for i in range(10)]  # bound to the busy a; b idle
    look, worst = make_scorer("lookahead"), make_scorer("worst-fit")  # lookahead picks b, worst-fit a
    assert model_paired(pairs, look, worst, params=ORIGINAL, draws=50).differ == 10
    # b is a node no pod could go to (a schema 2 shadow row cannot say so): both pick a, nothing differs
    only_a = model_paired(pairs, look, worst, params=ORIGINAL, draws=50, nodes=frozenset({"a"}))
    assert (only_a.n, only_a.differ, only_a.ratio) == (10, 0, 1.0)
    # as served: a is hot, so the extender's filter sends worst-fit to b too
    served = model_paired(pairs, look, worst, params=ORIGINAL, draws=50, hot_filter="prefer-cool")
    assert (served.differ, served.ratio) == (0, 1.0) and served.baseline_value == pytest.approx(29.0)
    # the node's DaemonSet pod is no job: with it left out, the busy pod and the newcomer alone share a
    daemons = [contended_pair(i, daemons=1) for i in range(10)]
    assert model_paired(daemons, look, worst, params=EQUAL_CPU, draws=50, daemon_pods=1).ratio == pytest.approx(1.0)


def test_the_command_re_encodes_over_the_context_asked_for_and_says_which(tmp_path, capsys):
    lines = [r for i in range(4) for r in contended_pair(i)]
    (tmp_path / "decisions-1.jsonl").write_text("".join(json.dumps(r.data) + "\n" for r in lines))
    for context in ("logged", "kept"):
        assert main([str(tmp_path), "--policy", "dqn:policy/models/default.npz", "--draws", "20",
                     *(["--context", context] if context == "kept" else [])]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["context"] == context and report["model_based"][0]["n"] == 4
