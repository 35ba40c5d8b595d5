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
