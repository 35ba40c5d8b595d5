import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from policy import obs as obs_layout
from policy.env import ClusterEnv, EnvConfig
from policy.errors import ConfigError
from policy.sim.config import SimConfig

SMALL = EnvConfig(clusters=("standard:3-5",), n_jobs=30, max_nodes=8)


def _rollout(env, seed, choose):
    obs, _ = env.reset(seed=seed)
    total, done, info = 0.0, False, {}
    trace = []
    while not done:
        a = choose(env)
        obs, r, done, _, info = env.step(a)
        total += r
        trace.append((a, round(r, 12)))
    return total, info["result"], trace


def test_check_env_passes():
    check_env(ClusterEnv(SMALL), skip_render_check=True)


@pytest.mark.parametrize("reward", ["slowdown", "imbalance", "mix"])
def test_deterministic_by_seed(reward):
    cfg = EnvConfig(clusters=("mixed:4-8",), n_jobs=30, max_nodes=8, reward=reward)
    first = lambda env: int(np.flatnonzero(env.action_masks())[0])  # noqa: E731
    assert _rollout(ClusterEnv(cfg), 7, first)[2] == _rollout(ClusterEnv(cfg), 7, first)[2]
    assert _rollout(ClusterEnv(cfg), 7, first)[2] != _rollout(ClusterEnv(cfg), 8, first)[2]


def test_slowdown_return_is_minus_total_excess_slowdown():
    total, result, _ = _rollout(ClusterEnv(SMALL), 3, lambda env: int(np.flatnonzero(env.action_masks())[-1]))
    assert result["finished"] == 30
    assert total == pytest.approx(-(result["mean_slowdown"] - 1.0) * 30, rel=1e-6)


def test_known_best_action_spreading_beats_piling():
    # Two identical idle nodes, cpu-bound jobs that each need a whole node's cpu: always choosing one node
    # makes them share it, alternating keeps them alone. The reward must tell the two apart.
    cfg = EnvConfig(clusters=("standard:2",), workloads=("cpu",), load=(0.5, 0.5), profile_error=(0, 0),
                    n_jobs=20, max_nodes=2)
    pile, _, _ = _rollout(ClusterEnv(cfg), 1, lambda env: 0 if env.action_masks()[0] else 1)
    spread, _, _ = _rollout(ClusterEnv(cfg), 1, lambda env: int(np.argmin(env.sim.fleet.pods)))
    assert spread > pile


def test_masked_action_defers_the_pod_and_is_reported():
    env = ClusterEnv(SMALL)
    env.reset(seed=0)
    padding = env.config.max_nodes - 1
    assert not env.action_masks()[padding]
    _, _, _, _, info = env.step(padding)
    assert info["invalid_action"] is True


def test_observation_layout_round_trips():
    env = ClusterEnv(SMALL)
    obs, _ = env.reset(seed=0)
    mask, nodes, pod, cluster = obs_layout.unpack(obs[None, :], SMALL.max_nodes)
    n = env.sim.nodes.n
    assert mask[0, :n].tolist() == env.action_masks()[:n].tolist()
    assert not mask[0, n:].any() and not nodes[0, n:].any()
    assert obs.shape == env.observation_space.shape


def test_step_before_reset_is_an_error():
    with pytest.raises(gym.error.ResetNeeded):
        ClusterEnv(SMALL).step(0)


@pytest.mark.parametrize("kwargs", [dict(reward="speed"), dict(load=(1.0, 0.5)), dict(clusters=()),
                                    dict(sample_intervals=(0.0,)), dict(max_nodes=0)])
def test_bad_config_is_refused(kwargs):
    with pytest.raises(ConfigError):
        EnvConfig(**kwargs)


def test_cluster_larger_than_padding_is_refused():
    env = ClusterEnv(EnvConfig(clusters=("standard:10",), max_nodes=4, base=SimConfig()))
    with pytest.raises(ConfigError, match="max_nodes=4"):
        env.reset(seed=0)


def test_shaped_reward_keeps_the_return_and_charges_the_placement():
    cfg = dict(clusters=("mixed:4-8",), n_jobs=30, max_nodes=8)
    rng_choice = lambda env: int(np.random.default_rng(len(env.sim.jobs)).choice(np.flatnonzero(env.action_masks())))  # noqa: E731
    plain, _, _ = _rollout(ClusterEnv(EnvConfig(reward="slowdown", **cfg)), 5, rng_choice)
    shaped, _, _ = _rollout(ClusterEnv(EnvConfig(reward="shaped", shaping_gamma=1.0, **cfg)), 5, rng_choice)
    assert shaped == pytest.approx(plain, rel=1e-9)  # potential-based: same return when gamma = 1


def test_projection_matches_hand_computed_sharing():
    from policy.shaping import project

    # Two cpu-bound jobs of 10 s on one core: both run at 1/2 until t=20; excess = 2 jobs * 20 s * (1/2) / 10 s
    times, cum = project([(1, 0, 0, 0), (1, 0, 0, 0)], [10, 10], [0.1, 0.1], (1, 16, 125, 200))
    assert times[-1] == pytest.approx(20) and cum[-1] == pytest.approx(2.0)
    # A 10 s and a 30 s job: shared until the first ends at 20 s, then the second runs its last 20 s alone.
    times, cum = project([(1, 0, 0, 0), (1, 0, 0, 0)], [10, 30], [0.1, 1 / 30], (1, 16, 125, 200))
    assert times == pytest.approx([0, 20, 40]) and cum[-1] == pytest.approx(20 * 0.5 * 0.1 + 20 * 0.5 / 30)


def test_training_sees_stale_usage_and_pods_without_a_profile():
    from policy.features import N_NODE, NODE_FEATURES, POD_FEATURES

    m = 8
    env = ClusterEnv(EnvConfig(clusters=("standard:4",), sample_intervals=(90.0,), profiles=("noisy", "learned"),
                               unprofiled=(0.2, 0.4), n_jobs=60, max_nodes=m))
    stale, known = set(), set()
    for seed in (1, 2):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            nodes = obs[m:m + m * N_NODE].reshape(m, N_NODE)
            stale.add(float(nodes[0, NODE_FEATURES.index("stale")]))
            known.add(float(obs[m + m * N_NODE + POD_FEATURES.index("demand_known")]))
            obs, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert stale == {0.0, 1.0} and known == {0.0, 1.0}
