"""The torch side of the policy: masking in greedy and exploration, export parity with numpy."""

import numpy as np
import pytest
import torch as th

from policy import obs as obs_layout
from policy.dqn import MASKED_Q, MaskedDQN, PerNodeDQNPolicy, export_weights, masked_random_actions
from policy.env import ClusterEnv, EnvConfig
from policy.features import N_CLUSTER, N_NODE, N_POD, Encoded
from policy.model import load_model, save_model

CFG = EnvConfig(clusters=("standard:3-6",), n_jobs=20, max_nodes=8)


@pytest.fixture(scope="module")
def model():
    return MaskedDQN(PerNodeDQNPolicy, ClusterEnv(CFG), learning_starts=10, buffer_size=1000, seed=0,
                     policy_kwargs=dict(net_arch=[16, 16]), device="cpu")


def _random_obs(rng, n_real, m=8, mask=None):
    enc = Encoded(nodes=rng.normal(size=(n_real, N_NODE)).astype(np.float32),
                  pod=rng.normal(size=N_POD).astype(np.float32), cluster=rng.normal(size=N_CLUSTER).astype(np.float32),
                  mask=np.ones(n_real, dtype=bool) if mask is None else mask)
    return obs_layout.pack(enc, m), enc


def test_greedy_never_picks_a_masked_node(model):
    rng = np.random.default_rng(0)
    for _ in range(50):
        mask = rng.random(5) < 0.4
        mask[rng.integers(5)] = True
        obs, _ = _random_obs(rng, 5, mask=mask)
        action, _ = model.predict(obs, deterministic=True)
        assert mask[int(action)]
        q = model.q_net(th.as_tensor(obs[None, :]))[0].detach().numpy()
        assert np.all(q[~np.r_[mask, np.zeros(3, bool)]] == MASKED_Q)


def test_exploration_never_picks_a_masked_node(model):
    rng = np.random.default_rng(1)
    model.exploration_rate = 1.0
    seen = set()
    for _ in range(200):
        mask = np.array([False, True, False, True, False])
        obs, _ = _random_obs(rng, 5, mask=mask)
        action, _ = model.predict(obs, deterministic=False)
        seen.add(int(action))
    assert seen == {1, 3}
    batch = np.stack([_random_obs(rng, 5, mask=np.array([0, 0, 1, 0, 0], bool))[0] for _ in range(4)])
    assert masked_random_actions(batch, 8, rng).tolist() == [2, 2, 2, 2]


def test_warmup_actions_are_masked_too(model):
    model.learn(total_timesteps=60)  # learning_starts=10: 10 warm-up steps then epsilon-greedy
    assert model.num_timesteps >= 60  # the env raises nothing; invalid actions would show in the buffer below
    actions = model.replay_buffer.actions[: model.replay_buffer.size()].reshape(-1)
    obs = model.replay_buffer.observations[: model.replay_buffer.size()].reshape(len(actions), -1)
    masks = obs[:, : CFG.max_nodes] > 0.5
    assert masks[np.arange(len(actions)), actions].all()


def test_numpy_export_matches_torch(model, tmp_path):
    weights, biases, act = export_weights(model.q_net)
    path = save_model(tmp_path / "m", weights, biases, activation=act, meta={"version": "t"})
    qm = load_model(path)
    rng = np.random.default_rng(2)
    for n in (1, 3, 8):
        obs, enc = _random_obs(rng, n)
        torch_q = model.q_net(th.as_tensor(obs[None, :]))[0, :n].detach().numpy()
        np.testing.assert_allclose(qm.q_values(enc), torch_q, atol=1e-5)


def test_save_load_gives_identical_scores(model, tmp_path):
    weights, biases, act = export_weights(model.q_net)
    enc = _random_obs(np.random.default_rng(3), 6)[1]
    a = load_model(save_model(tmp_path / "a", weights, biases, activation=act)).q_values(enc)
    b = load_model(save_model(tmp_path / "b", weights, biases, activation=act)).q_values(enc)
    assert a.tolist() == b.tolist()
