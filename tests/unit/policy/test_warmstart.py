"""The warm start: imitating a logged rule lifts held-out agreement far above an untrained net's; a log it
cannot learn from is a clear error; a torn last line is skipped, as the reader does; the calibration maps the
imitated values onto the return without changing a single pick."""

import json

import numpy as np
import pytest

pytest.importorskip("torch")

import torch as th  # noqa: E402

from policy.decisionlog import DecisionInputs, LogError, decision_row, read_log  # noqa: E402
from policy.features import encode  # noqa: E402
from policy.logged import encoding, examples  # noqa: E402
from policy.state import ClusterSnapshot, PodView  # noqa: E402
from policy.train import Args, make_env, make_model, parse_args  # noqa: E402
from policy.warmstart import WarmStartError, bellman_fit, calibrate, load_examples, warm_start  # noqa: E402


def decision(rng: np.random.Generator, i: int, *, mode: str = "shadow") -> dict:
    """A decision over 4-10 random nodes whose pick is the feasible node with the least requested cpu share."""
    n = int(rng.integers(4, 11))
    cap = np.column_stack([rng.choice([2.0, 4, 8, 16], n), rng.choice([8.0, 16, 64], n), np.full(n, 1250.0),
                           np.full(n, 500.0)])
    snap = ClusterSnapshot(names=tuple(f"n{j}" for j in range(n)), capacity=cap,
                           requested=cap[:, :2] * rng.uniform(0, 0.9, (n, 2)), usage=cap * rng.uniform(0, 1, (n, 4)),
                           usage_age=rng.uniform(0, 90, n), assumed=np.zeros((n, 4)), pods=rng.integers(0, 30, n),
                           max_pods=np.full(n, 110.0), ready=rng.random(n) > 0.1)
    pod = PodView(requests=[rng.uniform(0.1, 1.0), rng.uniform(0.5, 4)], demand=rng.uniform(0, 2, 4),
                  demand_source="learned")
    enc = encode(snap, pod)
    share = np.where(enc.mask, snap.requested[:, 0] / cap[:, 0], np.inf)
    pick = snap.names[int(np.argmin(share))] if enc.mask.any() else None
    return decision_row(ts=float(i), replica="r", mode=mode, pod=("ns", f"p{i}", f"u{i}"), requests=pod.requests,
                        demand=pod.demand, demand_source=pod.demand_source, policy="least-requested",
                        model_version="v", nodes=snap.names, scores=np.zeros(n, int), raw=np.zeros(n),
                        chosen=pick, actual=pick if mode == "shadow" else None,
                        inputs=DecisionInputs(snap=snap, cluster=enc.cluster, max_usage_age=60.0))


def write_log(directory, rows, tail: bytes = b""):
    directory.mkdir(exist_ok=True)
    path = directory / "decisions-20261203T000000.000000Z.jsonl"
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows) + tail)
    return directory


@pytest.fixture(scope="module")
def model():
    args = Args(buffer_size=100, learning_starts=0, progress=False)
    return make_model(args, make_env(args))


def test_warm_start_learns_a_logged_rule_far_above_an_untrained_net(tmp_path, model):
    rng = np.random.default_rng(0)
    log_dir = write_log(tmp_path / "log", [decision(rng, i, mode=("shadow", "serve")[i % 2]) for i in range(600)])
    report = warm_start(model, log_dir, epochs=30, holdout=0.25, seed=0)
    assert report.usable > 500 and report.held_out == round(report.usable * 0.25)
    # seen at 0.16 before, 0.91 after (chance 0.23: 4-10 nodes, some infeasible)
    assert report.agreement_before < 0.4 and report.agreement_after > 0.8 and report.chance < 0.3
    assert report.agreement_after > report.agreement_before + 0.4 and report.losses[-1] < report.losses[0]
    # DQN training goes on from the fitted weights: the target network holds them too
    for online, target in zip(model.q_net.parameters(), model.q_net_target.parameters(), strict=True):
        assert np.array_equal(online.detach().numpy(), target.detach().numpy())


def test_examples_are_the_feasible_candidates_with_the_pick_among_them():
    rng = np.random.default_rng(1)
    row = read_row(decision(rng, 0))
    ex = examples(type("L", (), {"decisions": [row]})())
    dec = encoding(row)
    assert len(ex) == 1 and ex.offsets.tolist() == [0, int(dec.enc.mask.sum())]
    feasible = [n for n, m in zip(dec.names, dec.enc.mask, strict=True) if m]
    assert feasible[ex.picks[0]] == row["actual"]


def read_row(data):
    from policy.decisionlog import Row, check_row

    return Row(path="f", line=1, data=check_row(json.loads(json.dumps(data)), path="f", line=1))


def test_a_log_without_usable_rows_is_a_clear_error(tmp_path):
    rng = np.random.default_rng(2)
    no_inputs = {**decision(rng, 0), "inputs": None}
    no_pick = {**decision(rng, 1), "actual": None}
    log_dir = write_log(tmp_path / "log", [no_inputs, no_pick])
    with pytest.raises(WarmStartError, match=r"no usable decision to imitate \(2 decision rows; skipped: "
                                             r"no_inputs 1, no_target 1\)"):
        load_examples(log_dir)
    with pytest.raises(WarmStartError, match="no usable decision.*none in the log"):
        load_examples(write_log(tmp_path / "empty", []))
    with pytest.raises(LogError, match="f:1: inputs: null"):
        encoding(read_row(no_inputs))


def test_a_schema_1_log_is_refused_naming_file_row_and_field(tmp_path):
    rng = np.random.default_rng(3)
    log_dir = write_log(tmp_path / "log", [decision(rng, 0), {**decision(rng, 1), "v": 1}])
    with pytest.raises(WarmStartError, match=r"decisions-.*\.jsonl:2: v: schema version 1; this reader reads 2"):
        load_examples(log_dir)


def test_a_torn_last_line_is_skipped(tmp_path):
    rng = np.random.default_rng(4)
    rows = [decision(rng, i) for i in range(5)]
    torn = json.dumps(decision(rng, 5)).encode()[:-40]
    ex, decisions, n_torn = load_examples(write_log(tmp_path / "log", rows, tail=torn))
    assert decisions == 5 and n_torn == 1 and len(ex) == len(examples(read_log(tmp_path / "log")))


@pytest.mark.parametrize(("scale", "shift", "gamma"), [(0.01, -0.4, 0.5), (2.0, 0.0, 0.5), (0.5, 1.0, 0.0),
                                                    (0.1, -2.0, 0.95)])
def test_bellman_fit_recovers_the_affine_map_that_makes_the_values_consistent(scale, shift, gamma):
    # rewards made from f by the Bellman equation of Q = scale * f + shift, terminal rows included
    rng = np.random.default_rng(5)
    f, f_next = rng.normal(0, 30, 500), rng.normal(0, 30, 500)
    done = rng.random(500) < 0.1
    g = np.where(done, 0.0, gamma)
    reward = scale * f + shift - g * (scale * f_next + shift)
    a, b, fallback = bellman_fit(f, np.where(done, 0.0, f_next), reward, done, gamma=gamma)
    assert not fallback and a == pytest.approx(scale, rel=1e-9) and b == pytest.approx(shift, abs=1e-9)


def test_bellman_fit_falls_back_to_the_rewards_spread_when_the_ranking_goes_against_the_return():
    rng = np.random.default_rng(6)
    f, f_next = rng.normal(0, 10, 300), np.zeros(300)
    reward = -0.02 * f + rng.normal(0, 1e-3, 300)  # the higher f, the worse: no positive scale fits
    a, b, fallback = bellman_fit(f, f_next, reward, np.ones(300, bool), gamma=0.5)
    assert fallback and a == pytest.approx(np.std(reward) / np.std(f)) and a > 0
    assert b == pytest.approx(np.mean(reward) / 0.5 - a * np.mean(f))


def test_calibration_keeps_every_pick_and_brings_the_values_to_the_returns_scale(tmp_path):
    # the imitated values are far off the return's scale (the strong-rule study saw a spread of ~50 against ~0.3)
    args = Args(buffer_size=100, learning_starts=0, progress=False, seed=3)
    model = make_model(args, make_env(args))
    rng = np.random.default_rng(7)
    log_dir = write_log(tmp_path / "log", [decision(rng, i) for i in range(300)])
    warm_start(model, log_dir, epochs=20, holdout=0.2, seed=0)
    last = [m for m in model.q_net.q_net if isinstance(m, th.nn.Linear)][-1]
    with th.no_grad():
        last.weight.mul_(200.0)
        last.bias.add_(-25.0)
    ex, _, _ = load_examples(log_dir)
    before = model.q_net.q_net(th.as_tensor(ex.rows)).detach().numpy().ravel()
    cal = calibrate(model, make_env(args), steps=300, gamma=args.gamma, seed=11)
    after = model.q_net.q_net(th.as_tensor(ex.rows)).detach().numpy().ravel()
    assert cal.transitions == 300 and 0 < cal.scale < 1
    np.testing.assert_allclose(after, cal.scale * before + cal.shift, rtol=1e-4, atol=1e-4)
    assert cal.td_rmse_after < cal.td_rmse_before / 10
    for i in range(len(ex)):  # the same pick in every decision: a positive scale keeps the order
        lo, hi = ex.offsets[i], ex.offsets[i + 1]
        assert np.argmax(after[lo:hi]) == np.argmax(before[lo:hi])
    target = model.q_net_target.state_dict()
    assert all(np.array_equal(v.numpy(), target[k].numpy()) for k, v in model.q_net.state_dict().items())


def test_the_flags_and_their_checks():
    args = parse_args(["--warm-start", "logs/", "--warm-start-epochs", "3", "--warm-start-holdout", "0.1",
                       "--warm-start-calibrate", "500"])
    assert (args.warm_start, args.warm_start_epochs, args.warm_start_holdout) == ("logs/", 3, 0.1)
    assert args.warm_start_calibrate == 500 and Args().warm_start_calibrate == 0
    with pytest.raises(SystemExit):
        parse_args(["--warm-start-calibrate", "-1"])
    with pytest.raises(SystemExit):
        parse_args(["--warm-start", "logs/", "--resume", "x.sb3.zip"])
    with pytest.raises(SystemExit):
        parse_args(["--warm-start-holdout", "1.0"])
