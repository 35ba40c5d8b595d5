"""The size-independent, masked DQN: one MLP scores every node; infeasible nodes are never chosen.

DRS fixed its network to 4 nodes (30 inputs -> 50 -> 4). Here the Q-network is shared across nodes: each
node's row ``[node features, pod features, cluster summary]`` (``policy.features.stack``) goes through
the same MLP and yields that node's Q-value, so weights trained on 4-16 nodes score 500 or 5,000.

Masking, in both places it matters:
  * greedy choice and the TD target: the Q-network returns ``MASKED_Q`` for padding and infeasible
    nodes, so ``argmax`` and ``max`` (stable-baselines3's target) only ever see feasible nodes;
  * exploration: ``MaskedDQN`` draws its random actions (warm-up and epsilon) uniformly among
    feasible nodes instead of over the whole action space.

This module imports torch and stable-baselines3; serving uses ``policy.model`` (numpy) with weights
exported by ``export_weights``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3 import DQN
from stable_baselines3.dqn.policies import DQNPolicy, QNetwork
from torch import nn

from policy import obs as obs_layout
from policy.features import N_CLUSTER, N_NODE, N_POD

MASKED_Q = -1e6
"""Q-value given to nodes that cannot be chosen: far below any real return, finite so 0 * it stays 0."""


def _mlp(sizes: list[int], activation: type[nn.Module]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(activation())
    return nn.Sequential(*layers)


class PerNodeQNetwork(QNetwork):
    """Q(s, node) = MLP([node_row, pod_row, cluster_row]) for each of the ``max_nodes`` slots."""

    def __init__(self, observation_space: spaces.Box, action_space: spaces.Discrete, features_extractor: Any,
                 features_dim: int, net_arch: list[int] | None = None, activation_fn: type[nn.Module] = nn.ReLU,
                 normalize_images: bool = False) -> None:
        super().__init__(observation_space, action_space, features_extractor, features_dim,
                         net_arch=net_arch or [64, 64], activation_fn=activation_fn, normalize_images=False)
        self.max_nodes = int(action_space.n)
        self.q_net = _mlp([N_NODE + N_POD + N_CLUSTER, *self.net_arch, 1], activation_fn)

    def forward(self, obs: th.Tensor) -> th.Tensor:
        obs = obs.float()
        mask, nodes, pod, cluster = obs_layout.unpack(obs, self.max_nodes)
        b, m = nodes.shape[0], self.max_nodes
        rows = th.cat([nodes, pod[:, None, :].expand(b, m, N_POD), cluster[:, None, :].expand(b, m, N_CLUSTER)],
                      dim=2)
        q = self.q_net(rows).squeeze(-1)
        return th.where(mask > 0.5, q, th.full_like(q, MASKED_Q))


class PerNodeDQNPolicy(DQNPolicy):
    """DQNPolicy whose online and target networks are ``PerNodeQNetwork``s."""

    def make_q_net(self) -> PerNodeQNetwork:
        net_args = self._update_features_extractor(self.net_args, features_extractor=None)
        return PerNodeQNetwork(**net_args).to(self.device)


def masked_random_actions(observation: np.ndarray, max_nodes: int, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random feasible node per observation in the batch."""
    obs = np.asarray(observation).reshape(-1, obs_layout.obs_size(max_nodes))
    masks = obs[:, :max_nodes] > 0.5
    actions = np.zeros(len(obs), dtype=np.int64)
    for i, m in enumerate(masks):
        feasible = np.flatnonzero(m)
        actions[i] = rng.choice(feasible) if len(feasible) else 0
    return actions


class MaskedDQN(DQN):
    """stable-baselines3 DQN whose exploration never takes a masked action, and whose TD loss may carry an
    imitation term (``imitation``: a ``policy.dqfd.Imitation``; None, the default, trains as SB3 does)."""

    imitation: Any = None

    def _setup_model(self) -> None:
        super()._setup_model()
        self._explore_rng = np.random.default_rng(self.seed)

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "imitation"]  # the log's examples stay out of the checkpoint

    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        if self.imitation is None:  # exactly SB3's step: the shipped recipe never reaches the code below
            return super().train(gradient_steps, batch_size)
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        td_losses, im_losses = [], []
        for _ in range(gradient_steps):
            td = self._td_loss(self.replay_buffer.sample(batch_size, env=self._vec_normalize_env))
            im = self.imitation.loss(self.q_net.q_net, self.num_timesteps)
            td_losses.append(td.item())
            im_losses.append(0.0 if im is None else im.item())
            self.policy.optimizer.zero_grad()
            (td if im is None else td + im).backward()
            th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
            self.policy.optimizer.step()
        self._n_updates += gradient_steps
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/loss", float(np.mean(td_losses)))
        self.logger.record("train/imitation_loss", float(np.mean(im_losses)))

    def _td_loss(self, data) -> th.Tensor:
        """Huber loss of Q(s, a) against r + discount * max over feasible a' of the target net's Q(s', a'), the
        discount gamma^n for an n-step sample that did not end (the replay buffer's ``discounts``)."""
        discount = data.discounts if data.discounts is not None else self.gamma
        with th.no_grad():
            best_next = self.q_net_target(data.next_observations).max(dim=1).values.reshape(-1, 1)
            target = data.rewards + (1 - data.dones) * discount * best_next
        q = self.q_net(data.observations).gather(1, data.actions.long())
        return nn.functional.smooth_l1_loss(q, target)

    @property
    def max_nodes(self) -> int:
        return int(self.action_space.n)

    def predict(self, observation, state=None, episode_start=None, deterministic: bool = False):
        if not deterministic and self._explore_rng.random() < self.exploration_rate:
            actions = masked_random_actions(observation, self.max_nodes, self._explore_rng)
            vectorized = np.asarray(observation).ndim > 1
            return (actions if vectorized else actions[0]), state
        return self.policy.predict(observation, state, episode_start, deterministic)

    def _sample_action(self, learning_starts: int, action_noise=None, n_envs: int = 1):
        if self.num_timesteps < learning_starts:
            action = masked_random_actions(self._last_obs, self.max_nodes, self._explore_rng)
        else:
            action, _ = self.predict(self._last_obs, deterministic=False)
        return action, action


def export_weights(q_net: PerNodeQNetwork) -> tuple[list[np.ndarray], list[np.ndarray], str]:
    """The per-node MLP's weights as (in, out) float32 arrays, for ``policy.model.save_model``."""
    linears = [m for m in q_net.q_net if isinstance(m, nn.Linear)]
    acts = {type(m) for m in q_net.q_net if not isinstance(m, nn.Linear)}
    if acts - {nn.ReLU, nn.Tanh}:
        raise ValueError(f"cannot export activation(s) {acts}")
    activation = "tanh" if nn.Tanh in acts else "relu"
    weights = [lin.weight.detach().cpu().numpy().T.copy() for lin in linears]
    biases = [lin.bias.detach().cpu().numpy().copy() for lin in linears]
    return weights, biases, activation
