"""Warm start from logged decisions (issue #23, DL2): fit the Q-network to imitate the logged picks, then train.

Why it exists: DL2 starts its policy from the incumbent scheduler's decisions before reinforcement learning
refines it, so it never starts from a random policy. ``python -m policy.train --warm-start LOG_DIR`` does
that here: before ``model.learn``, the per-node MLP (the one ``policy.dqn.PerNodeQNetwork`` applies to each
node's row) is fitted by supervised imitation of the log's picks (``policy.logged``: a serve row's
``chosen``, a shadow row's ``actual``), over each decision's feasible kept candidates, with the rows
``policy.logged.encoding`` rebuilds -- bitwise what the policy scored. The target network is then synced,
and DQN training continues from those weights. Imports torch: training only, never the extender.

Loss: cross-entropy of a softmax over the Q-values of a decision's candidates (the pick's log-probability).
A margin loss (DQfD's) asks the pick to beat every other candidate by a fixed margin, which a logged
scheduler's ties make impossible (default-k8s breaks equal scores at random, so the same state has several
right answers); the softmax spreads the probability over tied candidates and still ranks the rest. Either
loss is blind to a constant added to every Q-value, so the warm start fixes the ranking, not the level:
TD learning sets that. The logits' scale is kept small by few epochs and weight decay, so the first TD
steps do not fight an oversized spread.

Scale (``calibrate``): the softmax fixes the Q-values only up to an added constant and leaves their scale to
the fit. Imitating default-k8s, whose random tie-breaks cap how sure the fit can be, kept the logits small;
imitating a near-deterministic rule (demand-aware: 94 % held-out agreement) drives them apart without bound,
to a spread of ~50 within a decision where trained Q-values spread ~0.3 (the reward's scale). The first TD
steps then shrink every value a hundredfold and scramble the ranking on the way (the strong-rule study,
``results/policy/warm-start-strong/``). ``calibrate`` maps the imitated values onto the return's scale with one
affine map of the output layer, ``Q = a * f + b`` with ``a > 0`` (the ranking, hence every pick, unchanged):
``a`` and ``b`` are the least-squares fit of the one-step Bellman equation of the imitated greedy policy,
``a * (f(s, x) - gamma * max f(s')) + b * (1 - gamma) = r``, on transitions of random feasible actions (the
warm-up's own distribution) from a separate environment. A fit with ``a <= 0`` (the rule's ranking does not
follow the return) falls back to matching the spread of ``f`` to the reward's and says so.

Held out: the last ``holdout`` fraction of the usable decisions, in log order (the most recent, never
shuffled in: consecutive decisions see nearly the same cluster). Agreement = the share of held-out
decisions whose pick has the highest Q among their candidates (``chance``: the mean of 1 / candidates).
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch as th
from torch import nn

from policy.decisionlog import LogError, read_log
from policy.logged import Examples, examples

log = logging.getLogger("policy.warmstart")


class WarmStartError(ValueError):
    """A log the warm start cannot learn from (unreadable, or no decision it can use)."""


@dataclass
class WarmStartReport:
    """What the warm start did; written beside the artifact as ``<out>.warm-start.json``."""

    log: str
    decisions: int
    usable: int
    train: int
    held_out: int
    skipped: dict[str, int]
    torn: int
    epochs: int
    chance: float
    agreement_before: float
    agreement_after: float
    train_agreement_after: float
    final_loss: float
    losses: list[float] = field(default_factory=list)
    calibration: dict | None = None
    """``Calibration`` as a dict when the values were calibrated (``calibrate``), else None"""


@dataclass
class Calibration:
    """The affine map ``calibrate`` applied to the imitated Q-values: ``Q = scale * f + shift``."""

    transitions: int
    scale: float
    shift: float
    fallback: bool
    """the Bellman fit gave scale <= 0; the spread of the rewards was matched instead"""
    td_rmse_before: float
    """root mean square one-step TD error of the imitated values on the transitions"""
    td_rmse_after: float


def load_examples(path: Path | str) -> tuple[Examples, int, int]:
    """The imitation examples of the log at ``path``, its decision count and its torn lines;
    ``WarmStartError`` when the log cannot be read or gives none."""
    try:
        contents = read_log(path)
        ex = examples(contents)
    except LogError as exc:
        raise WarmStartError(f"--warm-start {path}: {exc}") from None
    if len(ex) == 0:
        why = ", ".join(f"{k} {v}" for k, v in sorted(ex.skipped.items())) or "none in the log"
        raise WarmStartError(f"--warm-start {path}: no usable decision to imitate "
                             f"({len(contents.decisions)} decision rows; skipped: {why})")
    return ex, len(contents.decisions), len(contents.torn)


def split(n: int, holdout: float) -> tuple[np.ndarray, np.ndarray]:
    """(train, held-out) indexes: the held-out part is the last ``holdout`` fraction (at least one)."""
    k = min(max(int(round(n * holdout)), 1), n - 1) if n > 1 and holdout > 0 else 0
    return np.arange(n - k), np.arange(n - k, n)


class Batch:
    """Some examples as tensors: candidate rows, each row's example, each example's pick row (the imitation
    loss of ``policy.dqfd`` reads the same)."""

    def __init__(self, ex: Examples, index: np.ndarray) -> None:
        starts, ends = ex.offsets[index], ex.offsets[index + 1]
        sizes = ends - starts
        rows = np.concatenate([np.arange(s, e) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)])
        self.x = th.from_numpy(ex.rows[rows])
        self.seg = th.from_numpy(np.repeat(np.arange(len(index)), sizes))
        self.pick = th.from_numpy(np.concatenate([[0], np.cumsum(sizes)[:-1]]) + ex.picks[index])
        self.n = len(index)
        self.chance = float(np.mean(1.0 / sizes))

    def log_softmax_at_pick(self, q: th.Tensor) -> th.Tensor:
        """(examples,) log-probability of each pick under a softmax over its example's candidates."""
        top = th.full((self.n,), -th.inf).scatter_reduce(0, self.seg, q, "amax").detach()
        z = th.zeros(self.n).index_add(0, self.seg, th.exp(q - top[self.seg]))
        return q[self.pick] - top - th.log(z)

    def agreement(self, q: th.Tensor) -> float:
        """Share of examples whose pick has the highest Q among its candidates."""
        top = th.full((self.n,), -th.inf).scatter_reduce(0, self.seg, q, "amax")
        return float((q[self.pick] >= top).float().mean())


def agreement(net: nn.Module, ex: Examples, index: np.ndarray) -> float:
    """Imitation agreement of ``net`` (the per-node MLP) on the examples at ``index``."""
    if len(index) == 0:
        return float("nan")
    batch = Batch(ex, index)
    with th.no_grad():
        return batch.agreement(net(batch.x).squeeze(-1))


def fit(net: nn.Module, ex: Examples, index: np.ndarray, *, epochs: int, lr: float = 1e-3,
        batch_size: int = 64, weight_decay: float = 1e-4, seed: int = 0) -> list[float]:
    """Fit ``net`` to the examples at ``index`` by softmax cross-entropy (module doc); mean loss per epoch."""
    rng = np.random.default_rng(seed)
    opt = th.optim.AdamW(net.parameters(), lr=lr, weight_decay=weight_decay)
    losses = []
    for _ in range(epochs):
        order = rng.permutation(index)
        total = 0.0
        for i in range(0, len(order), batch_size):
            batch = Batch(ex, order[i:i + batch_size])
            loss = -batch.log_softmax_at_pick(net(batch.x).squeeze(-1)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * batch.n
        losses.append(total / max(len(order), 1))
    return losses


def random_transitions(env, steps: int, *, seed: int) -> tuple[np.ndarray, ...]:
    """``steps`` transitions (obs, action, reward, next obs, terminated) of uniformly random feasible actions in
    ``env`` (a ``policy.env.ClusterEnv``), resetting at each episode's end."""
    from policy.dqn import masked_random_actions

    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out: list[list] = [[], [], [], [], []]
    for _ in range(steps):
        action = int(masked_random_actions(obs, env.config.max_nodes, rng)[0])
        nxt, reward, terminated, truncated, _ = env.step(action)
        for column, value in zip(out, (obs, action, reward, nxt, terminated), strict=True):
            column.append(value)
        obs = env.reset()[0] if terminated or truncated else nxt
    return tuple(np.asarray(c) for c in out)


def bellman_fit(f: np.ndarray, f_next: np.ndarray, reward: np.ndarray, done: np.ndarray, *,
                gamma: float) -> tuple[float, float, bool]:
    """(scale, shift, fallback): the least-squares ``a, b`` of ``a (f - gamma' f_next) + b (1 - gamma') = r``
    with ``gamma' = gamma`` where not ``done`` and 0 where done (module doc); ``a <= 0`` (or no fit) falls
    back to ``a = std(r) / std(f)``, ``b = mean(r) / (1 - gamma) - a mean(f)``."""
    g = np.where(done, 0.0, gamma)
    x = np.stack([f - g * f_next, 1.0 - g], axis=1)
    (a, b), *_ = np.linalg.lstsq(x, reward, rcond=None)
    if np.isfinite(a) and a > 0:
        return float(a), float(b), False
    a = float(np.std(reward) / max(float(np.std(f)), 1e-12))
    return a, float(np.mean(reward) / (1.0 - gamma) - a * np.mean(f)), True


def calibrate(model, env, *, steps: int, gamma: float, seed: int) -> Calibration:
    """Rescale ``model``'s imitated Q-values to the return (module doc) on ``steps`` random transitions of
    ``env``; syncs the target network."""
    obs, action, reward, nxt, done = random_transitions(env, steps, seed=seed)
    with th.no_grad():
        q = model.q_net(th.as_tensor(obs, dtype=th.float32)).numpy().astype(np.float64)
        q_next = model.q_net(th.as_tensor(nxt, dtype=th.float32)).numpy().astype(np.float64)
    f, f_next = q[np.arange(len(action)), action], np.where(done, 0.0, q_next.max(axis=1))
    a, b, fallback = bellman_fit(f, f_next, reward, done, gamma=gamma)

    def rmse(scale: float, shift: float) -> float:
        g = np.where(done, 0.0, gamma)
        return float(np.sqrt(np.mean((scale * f + shift - reward - g * (scale * f_next + shift)) ** 2)))

    last = [m for m in model.q_net.q_net if isinstance(m, nn.Linear)][-1]
    with th.no_grad():
        last.weight.mul_(a)
        last.bias.mul_(a).add_(b)
    model.q_net_target.load_state_dict(model.q_net.state_dict())
    cal = Calibration(transitions=len(action), scale=a, shift=b, fallback=fallback, td_rmse_before=rmse(1.0, 0.0),
                      td_rmse_after=rmse(a, b))
    log.info("warm start calibration: %s", json.dumps(asdict(cal)))
    return cal


def warm_start(model, path: Path | str, *, epochs: int, holdout: float, seed: int,
               loaded: tuple[Examples, int, int] | None = None) -> WarmStartReport:
    """Fit ``model``'s Q-network (a ``policy.dqn.MaskedDQN``) to the log at ``path`` (``loaded``: its
    ``load_examples``, when read already); sync its target network."""
    th.manual_seed(seed)
    ex, decisions, torn = loaded or load_examples(path)
    train_idx, test_idx = split(len(ex), holdout)
    net = model.q_net.q_net
    before = agreement(net, ex, test_idx)
    losses = fit(net, ex, train_idx, epochs=epochs, seed=seed)
    model.q_net_target.load_state_dict(model.q_net.state_dict())
    report = WarmStartReport(
        log=str(path), decisions=decisions, usable=len(ex), train=len(train_idx), held_out=len(test_idx),
        skipped=dict(ex.skipped), torn=torn, epochs=epochs,
        chance=Batch(ex, test_idx).chance if len(test_idx) else float("nan"),
        agreement_before=before, agreement_after=agreement(net, ex, test_idx),
        train_agreement_after=agreement(net, ex, train_idx), final_loss=losses[-1] if losses else float("nan"),
        losses=[round(x, 5) for x in losses])
    log.info("warm start: %s", json.dumps({k: v for k, v in asdict(report).items() if k != "losses"}))
    return report
