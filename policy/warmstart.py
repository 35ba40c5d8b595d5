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


class _Batch:
    """Some examples as tensors: candidate rows, each row's example, each example's pick row."""

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
    batch = _Batch(ex, index)
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
            batch = _Batch(ex, order[i:i + batch_size])
            loss = -batch.log_softmax_at_pick(net(batch.x).squeeze(-1)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * batch.n
        losses.append(total / max(len(order), 1))
    return losses


def warm_start(model, path: Path | str, *, epochs: int, holdout: float, seed: int) -> WarmStartReport:
    """Fit ``model``'s Q-network (a ``policy.dqn.MaskedDQN``) to the log at ``path``; sync its target network."""
    th.manual_seed(seed)
    ex, decisions, torn = load_examples(path)
    train_idx, test_idx = split(len(ex), holdout)
    net = model.q_net.q_net
    before = agreement(net, ex, test_idx)
    losses = fit(net, ex, train_idx, epochs=epochs, seed=seed)
    model.q_net_target.load_state_dict(model.q_net.state_dict())
    report = WarmStartReport(
        log=str(path), decisions=decisions, usable=len(ex), train=len(train_idx), held_out=len(test_idx),
        skipped=dict(ex.skipped), torn=torn, epochs=epochs,
        chance=_Batch(ex, test_idx).chance if len(test_idx) else float("nan"),
        agreement_before=before, agreement_after=agreement(net, ex, test_idx),
        train_agreement_after=agreement(net, ex, train_idx), final_loss=losses[-1] if losses else float("nan"),
        losses=[round(x, 5) for x in losses])
    log.info("warm start: %s", json.dumps({k: v for k, v in asdict(report).items() if k != "losses"}))
    return report
