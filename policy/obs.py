"""How one ``Encoded`` decision is laid out as the flat, fixed-size vector the RL code stores.

stable-baselines3 keeps observations in a replay buffer of fixed shape, so a decision over N nodes is
padded to ``max_nodes`` rows. Layout (float32):

    [ mask (M) | node rows (M x N_NODE) | pod (N_POD) | cluster summary (N_CLUSTER) ]

Padding rows are zero with mask 0. The layout is the env's observation and what the torch Q-network
unpacks (``policy.dqn``); serving never pads: ``policy.model`` scores the real rows directly.
"""

from __future__ import annotations

import numpy as np

from policy.features import N_CLUSTER, N_NODE, N_POD, Encoded


class TooManyNodes(ValueError):
    """A cluster larger than the observation's ``max_nodes``."""


def obs_size(max_nodes: int) -> int:
    return max_nodes * (1 + N_NODE) + N_POD + N_CLUSTER


def pack(enc: Encoded, max_nodes: int) -> np.ndarray:
    n = enc.nodes.shape[0]
    if n > max_nodes:
        raise TooManyNodes(f"{n} nodes do not fit an observation of max_nodes={max_nodes}")
    out = np.zeros(obs_size(max_nodes), dtype=np.float32)
    out[:n] = enc.mask
    start = max_nodes
    out[start:start + n * N_NODE] = enc.nodes.reshape(-1)
    start += max_nodes * N_NODE
    out[start:start + N_POD] = enc.pod
    out[start + N_POD:] = enc.cluster
    return out


def unpack(obs: np.ndarray, max_nodes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Inverse of ``pack`` over a leading batch dimension: (mask, nodes, pod, cluster)."""
    b = obs.shape[0]
    mask = obs[:, :max_nodes]
    start = max_nodes
    nodes = obs[:, start:start + max_nodes * N_NODE].reshape(b, max_nodes, N_NODE)
    start += max_nodes * N_NODE
    return mask, nodes, obs[:, start:start + N_POD], obs[:, start + N_POD:]
