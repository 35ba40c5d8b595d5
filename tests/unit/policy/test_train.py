"""``policy.train``: ``--contention`` (training and its held-out evaluation run in the named set, or refuse it)
and ``--n-steps`` (the TD target is the n-step discounted return)."""

import numpy as np
import pytest

from policy.sim.calibration import shipped
from policy.train import make_env_config, parse_args


def test_the_named_set_is_the_training_worlds():
    args = parse_args(["--contention", "fitted-lab"])
    assert make_env_config(args).base.contention == shipped("fitted-lab")
    assert make_env_config(parse_args([])).base.contention is None  # the calibration file's active set


def test_an_unknown_set_stops_before_training(capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(["--contention", "moon"])
    assert exc.value.code == 2
    assert "no parameter set 'moon'; known: original" in capsys.readouterr().err


def test_n_steps_makes_the_td_target_an_n_step_discounted_return():
    from policy.train import make_env, make_model

    args = parse_args(["--n-steps", "3", "--gamma", "0.9", "--clusters", "standard:3-4", "--n-jobs", "12",
                       "--max-nodes", "4", "--learning-starts", "1000", "--buffer-size", "500"])
    model = make_model(args, make_env(args))
    model.learn(total_timesteps=60)  # masked random placements only: fills the buffer, no gradient step
    buf = model.replay_buffer
    n = buf.pos
    done = buf.dones[:n, 0] > 0.5
    inside = np.array([i for i in range(n - 3) if not done[i:i + 2].any()])  # 3 rewards from one episode
    sample = buf._get_samples(inside)
    r = buf.rewards[:, 0]
    expected = r[inside] + 0.9 * r[inside + 1] + 0.81 * r[inside + 2]
    assert len(inside) > 20
    np.testing.assert_allclose(sample.rewards.numpy()[:, 0], expected, rtol=1e-5)
    np.testing.assert_allclose(sample.discounts.numpy()[:, 0], 0.9 ** 3, rtol=1e-6)  # bootstraps gamma^3 Q(s+3)
    np.testing.assert_array_equal(sample.dones.numpy()[:, 0], done[inside + 2].astype(np.float32))


def test_n_steps_below_one_is_refused_before_training(capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(["--n-steps", "0"])
    assert exc.value.code == 2
    assert "--n-steps: must be at least 1, got 0" in capsys.readouterr().err


def test_the_imitation_and_selection_flags_are_off_by_default_and_checked(capsys):
    args = parse_args([])
    assert (args.imitation_weight, args.imitation_decay, args.select) == (0.0, 0, "argmax")
    args = parse_args(["--warm-start", "logs/", "--imitation-weight", "1", "--imitation-decay", "30000",
                       "--imitation-margin", "0.1", "--select", "served", "--select-mapping", "minmax",
                       "--select-weight", "10"])
    assert (args.imitation_weight, args.imitation_decay, args.imitation_margin) == (1.0, 30000, 0.1)
    assert (args.select, args.select_mapping, args.select_weight) == ("served", "minmax", 10.0)
    for argv, message in ((["--imitation-weight", "1"], "needs --warm-start"),
                          (["--warm-start", "l", "--imitation-weight", "1", "--imitation-margin", "0"],
                           "--imitation-margin above 0"),
                          (["--select", "best"], "invalid choice: 'best'"),
                          (["--select-mapping", "band"], "--select-mapping: score mapping band needs a band"),
                          (["--select-seeds", "0"], "--select-seeds must be at least 1")):
        with pytest.raises(SystemExit) as exc:
            parse_args(argv)
        assert exc.value.code == 2 and message in capsys.readouterr().err, argv


def test_served_selection_keeps_the_check_with_the_lowest_served_ratio_step_0_included(tmp_path, caplog):
    import json
    import logging

    from policy.train import train

    args = parse_args(["--steps", "300", "--learning-starts", "100", "--eval-every", "150", "--eval-seeds", "1",
                       "--clusters", "standard:3-6", "--n-jobs", "30", "--max-nodes", "8", "--no-progress",
                       "--select", "served", "--select-seeds", "1", "--out", str(tmp_path / "m")])
    with caplog.at_level(logging.INFO, logger="policy.train"):
        train(args)
    checks = [r.args for r in caplog.records if r.msg.startswith("served check")]  # (steps, ratio) of every check
    assert [s for s, _ in checks] == [0, 150, 300, 300]  # step 0, the periodic ones, the one after training
    kept = json.loads((tmp_path / "m.json").read_text())
    first_best = min(checks, key=lambda c: c[1])  # min keeps the first of equal ones, as the rule does
    assert kept["eval_excess_slowdown"]["served_ratio"] == first_best[1]
    assert kept["trained_steps"] == first_best[0]
    history = kept["eval_excess_slowdown"]["history"]  # the checks up to the kept one; baselines measured once
    assert all(h["served_ratio"] > 0 and h["default-k8s"] == history[0]["default-k8s"] for h in history)
