"""``ClusterEnv``: the gymnasium environment the DQN learns placement in, one pod per step.

## Description
A simulated Kubernetes cluster (``policy.sim``) receives a stream of jobs. At each step one pending pod
must be placed; the agent picks the node. Cluster size, node mix, workload mix, load and the error of
the pods' expected demand profiles are drawn per episode from ``EnvConfig`` ranges, so one policy learns
to score clusters of any shape. What the agent sees is exactly what the extender will see in production:
``policy.features.encode`` of the simulator's ``ClusterSnapshot`` (stale sampled usage plus assumed pods,
requests, capacities) and the pod's ``PodView`` (requests and *expected* demand, never the true one).

## Action Space
``Discrete(max_nodes)``: the index of the node in the snapshot's order. Indices past the cluster's size
are padding. An action whose node is masked (padding, not ready, requests do not fit) is not an error:
like a failed bind, the pod goes back to the pending queue and waits, which the reward charges for.
``info["invalid_action"]`` says so. ``policy.dqn.MaskedDQN`` never takes such an action.

## Observation Space
``Box(-OBS_BOUND, OBS_BOUND, (obs_size(max_nodes),), float32)``, laid out by ``policy.obs``: the feasibility
mask, the per-node feature rows (``policy.features.NODE_FEATURES``), the pod row and the cluster summary.
Every value is ``policy.features.encode``'s, bounds included: the env clips nothing itself, so serving sees
exactly what training saw.

## Rewards
``reward="slowdown"`` (default): minus the growth, between this decision and the next, of
``sum_j (1 - progress_rate_j) / work_j`` integrated over time, for every job present (a waiting job has
rate 0). An episode's return is therefore exactly ``-sum_j (slowdown_j - 1)``: maximising it minimises
the mean slowdown, whose physical limit is 1.0.
``reward="shaped"``: the slowdown reward plus the potential-based term ``Phi(s) - shaping_gamma * Phi(s')``
of ``policy.shaping`` (Phi = excess the running jobs will still accrue if nothing else arrives). Each step
is then charged, up to queueing, the excess its placement adds. With ``shaping_gamma=1`` an episode's
undiscounted return equals the slowdown reward's exactly (Phi is 0 at the end), so a learner with gamma 1
has the same optimal policy. With ``shaping_gamma`` equal to the learner's gamma the shaping is exactly
potential-based for that discounted objective. A learner with gamma < 1 on ``shaping_gamma=1`` (the
shipped recipe, 0.5 / 1.0) optimises neither exactly: it is near-myopic on each placement's own cost.
``reward="imbalance"``: DRS's reward, minus the load imbalance (mean over resources of the std across
nodes of true utilisation) at the next decision.
``reward="mix"``: slowdown reward + ``imbalance_weight`` x imbalance reward.

## Starting State
A fresh cluster of the drawn size with no jobs; time advances to the first arrival.

## Episode End
Terminates when every job has finished or was reported unschedulable (the simulator runs the remaining
jobs to completion inside the last step, so their cost lands in its reward). Never truncated.

## Arguments
``EnvConfig`` (all fields documented there) and ``seed`` through ``reset``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from policy import obs as obs_layout
from policy.errors import ConfigError
from policy.features import OBS_BOUND, encode
from policy.shaping import Potential
from policy.sim.config import SimConfig
from policy.sim.engine import Simulator
from policy.sim.metrics import imbalance
from policy.splits import TRAIN_SEED_LIMIT

REWARDS = ("slowdown", "shaped", "imbalance", "mix")


@dataclass(frozen=True)
class EnvConfig:
    """What episodes are drawn from. Each tuple field is sampled uniformly per episode."""

    clusters: tuple[str, ...] = ("mixed:4-16",)
    """Cluster specs (``policy.sim.cluster``); one is picked per episode."""
    workloads: tuple[str, ...] = ("drs",)
    """Workload mixes (``SimConfig.workload``); one is picked per episode."""
    load: tuple[float, float] = (0.6, 1.5)
    """Offered load range, drawn uniformly."""
    profile_error: tuple[float, float] = (0.0, 0.3)
    """Range of the lognormal sigma of the expected-demand error."""
    sample_intervals: tuple[float, ...] = (10.0,)
    """Node-monitor sample intervals (seconds); one is picked per episode, so the policy learns stale usage."""
    profiles: tuple[str, ...] = ("noisy",)
    """Profile kinds (``SimConfig.profile``); one is picked per episode (``learned``: as a deployment serves)."""
    unprofiled: tuple[float, float] = (0.0, 0.0)
    """Range of the share of pods with no profile (``demand_known`` 0), drawn uniformly."""
    n_jobs: int = 120
    """Jobs per episode."""
    base: SimConfig = field(default_factory=SimConfig)
    """Every other simulator setting (arrival kind, sample interval, profile kind, events...)."""
    max_nodes: int = 16
    """Observation padding; clusters drawn larger than this are refused."""
    reward: str = "slowdown"
    """``slowdown``, ``imbalance`` or ``mix`` (see the module docstring)."""
    imbalance_weight: float = 1.0
    """Weight of the imbalance term in ``mix``."""
    shaping_gamma: float = 1.0
    """Discount used in the ``shaped`` reward's potential term; set it to the learner's gamma."""

    def __post_init__(self) -> None:
        if self.reward not in REWARDS:
            raise ConfigError("reward", f"unknown {self.reward!r}; known: {', '.join(REWARDS)}")
        if not self.clusters or not self.workloads:
            raise ConfigError("clusters, workloads", "need at least one entry each")
        if not (0 < self.load[0] <= self.load[1]):
            raise ConfigError("load", f"need 0 < low <= high, got {self.load}")
        if not (0 <= self.profile_error[0] <= self.profile_error[1]):
            raise ConfigError("profile_error", f"need 0 <= low <= high, got {self.profile_error}")
        if not self.profiles or not (0 <= self.unprofiled[0] <= self.unprofiled[1] <= 1):
            raise ConfigError("profiles, unprofiled", f"need at least one profile and 0 <= low <= high <= 1, "
                                                      f"got {self.profiles}, {self.unprofiled}")
        if not self.sample_intervals or min(self.sample_intervals) <= 0:
            raise ConfigError("sample_intervals", f"need at least one value > 0, got {self.sample_intervals}")
        if self.max_nodes < 1 or self.n_jobs < 1:
            raise ConfigError("max_nodes, n_jobs", "must be >= 1")

    def draw(self, rng: np.random.Generator) -> SimConfig:
        """The simulator config of one episode."""
        return replace(
            self.base,
            cluster=self.clusters[rng.integers(len(self.clusters))],
            workload=self.workloads[rng.integers(len(self.workloads))],
            load=float(rng.uniform(*self.load)),
            profile_error=float(rng.uniform(*self.profile_error)),
            sample_interval=float(self.sample_intervals[rng.integers(len(self.sample_intervals))]),
            n_jobs=self.n_jobs,
            **self._draw_profiles(rng),
        )

    def _draw_profiles(self, rng: np.random.Generator) -> dict:
        # Drawn only when configured, so a config without them draws the very same episodes as before.
        out = {}
        if self.profiles != ("noisy",):
            out["profile"] = self.profiles[rng.integers(len(self.profiles))]
        if self.unprofiled[1] > 0:
            out["unprofiled"] = float(rng.uniform(*self.unprofiled))
        return out


class ClusterEnv(gym.Env):
    metadata = {"render_modes": []}

    def __init__(self, config: EnvConfig | None = None) -> None:
        self.config = config or EnvConfig()
        m = self.config.max_nodes
        self.action_space = spaces.Discrete(m)
        self.observation_space = spaces.Box(-OBS_BOUND, OBS_BOUND, (obs_layout.obs_size(m),), np.float32)
        self.sim: Simulator | None = None
        self._pending = None
        self._mask = np.zeros(0, dtype=bool)

    def _observe(self) -> np.ndarray:
        if self._pending is None:
            self._mask = np.zeros(0, dtype=bool)
            return np.zeros(self.observation_space.shape, dtype=np.float32)
        enc = encode(self.sim.snapshot(), self._pending.pod)
        self._mask = enc.mask
        return obs_layout.pack(enc, self.config.max_nodes)

    def _advance(self) -> np.ndarray:
        """Move to the next pod that can be placed somewhere; pods that fit nowhere now wait in the sim."""
        self._pending = self.sim.next_decision()
        while self._pending is not None:
            obs = self._observe()
            if self._mask.any():
                return obs
            self.sim.defer()
            self._pending = self.sim.next_decision()
        return self._observe()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        sim_cfg = self.config.draw(self.np_random)
        self.sim = Simulator(sim_cfg, seed=int(self.np_random.integers(TRAIN_SEED_LIMIT)))
        self._potential = Potential(self.sim.fleet)
        self._phi = 0.0
        if self.sim.nodes.n > self.config.max_nodes:
            raise ConfigError("max_nodes", f"cluster {sim_cfg.cluster!r} drew {self.sim.nodes.n} nodes, "
                                           f"more than max_nodes={self.config.max_nodes}")
        obs = self._advance()
        return obs, {"n_nodes": self.sim.nodes.n, "cluster": sim_cfg.cluster, "load": sim_cfg.load,
                     "workload": sim_cfg.workload}

    def step(self, action):
        if self.sim is None or self._pending is None:
            raise gym.error.ResetNeeded("call reset() before step(), and again after the episode ends")
        a = int(action)
        invalid = not (0 <= a < len(self._mask) and self._mask[a])
        before = self.sim.excess_integral
        phi_before = self._phi
        if invalid:
            self.sim.defer()
        else:
            self.sim.place(a)
        obs = self._advance()
        terminated = self._pending is None
        reward = self._reward(before)
        if self.config.reward == "shaped":
            self._phi = 0.0 if terminated else self._potential(self.sim.now)
            reward += phi_before - self.config.shaping_gamma * self._phi
        info = {"invalid_action": invalid}
        if terminated:
            info["result"] = self.sim.result().summary()
        return obs, reward, terminated, False, info

    def _reward(self, before: float) -> float:
        slow = -(self.sim.excess_integral - before)
        if self.config.reward in ("slowdown", "shaped"):
            return float(slow)
        usage, cap = self.sim.fleet.usage, self.sim.nodes.capacity
        imb = -imbalance(usage, cap)
        if self.config.reward == "imbalance":
            return float(imb)
        return float(slow + self.config.imbalance_weight * imb)

    def action_masks(self) -> np.ndarray:
        """(max_nodes,) bool mask of the current decision (sb3-contrib's MaskablePPO convention)."""
        out = np.zeros(self.config.max_nodes, dtype=bool)
        out[: len(self._mask)] = self._mask
        return out
