"""Keeping the imitation during DQN training: a large-margin loss on logged decisions (DQfD, Hester et al. 2018).

Why it exists: a warm start (``policy.warmstart``) imitates a rule's logged picks once, before DQN training,
and TD learning then owes the rule nothing. In the strong-rule study every warm run ended worse served than
the network it started from (``results/policy/warm-start-strong/``). DQfD keeps a supervised term in every
gradient step instead, so TD learning departs from the demonstrations only where its own values say so by
more than a margin. For a logged decision with pick ``a_E`` among its feasible candidates ``A``:

    J_E(Q) = max over a in A of [Q(s, a) + margin * (a != a_E)]  -  Q(s, a_E)

zero once the pick beats every other candidate by ``margin``, else the shortfall (at most ``margin`` plus the
gap to the best candidate). ``python -m policy.train --warm-start LOG --imitation-weight W`` adds ``w(t) * J_E``,
mean over a minibatch of the log's decisions, to each TD step's loss; ``w(t)`` is ``W``, or falls linearly to 0
at ``--imitation-decay`` environment steps (``weight_at``).

The margin is in Q's own units (the return's scale: a trained network's values spread ~0.3 within a decision),
so it fits a network whose imitated values were put on that scale (``--warm-start-calibrate``). Why the warm
start itself does not use this loss (its docstring): a rule that breaks ties at random (default-k8s) gives
decisions no margin can satisfy. A near-deterministic rule (demand-aware: 94 % held-out agreement, tie-limited
ceiling 95 %) satisfies it on most decisions, and a tied one costs at most ``margin``.

Imports torch: training only. The decisions are the warm start's (``policy.warmstart.load_examples``), without
its held-out part, so the agreement it reports stays held out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch as th
from torch import nn

from policy.logged import Examples
from policy.warmstart import Batch


def margin_loss(q: th.Tensor, batch: Batch, margin: float) -> th.Tensor:
    """Mean over ``batch``'s decisions of ``J_E`` (module doc), ``q`` the (candidate rows,) values of
    ``batch.x``; differentiable in ``q``."""
    bonus = th.full_like(q, margin)
    bonus[batch.pick] = 0.0
    top = th.full((batch.n,), -th.inf, dtype=q.dtype).scatter_reduce(0, batch.seg, q + bonus, "amax")
    return (top - q[batch.pick]).mean()


def weight_at(step: int, weight: float, decay: int) -> float:
    """The imitation loss's weight after ``step`` environment steps: ``weight`` throughout when ``decay`` is 0,
    else falling linearly from ``weight`` at step 0 to 0 at step ``decay`` and after."""
    if decay <= 0:
        return weight
    return weight * max(0.0, 1.0 - step / decay)


@dataclass
class Imitation:
    """The imitation term a ``policy.dqn.MaskedDQN`` adds to its TD loss (``loss``); owns the logged examples
    and the generator that draws each step's minibatch of them."""

    examples: Examples
    index: np.ndarray
    """the decisions drawn from (the warm start's training part)"""
    weight: float
    margin: float
    decay: int
    batch: int
    rng: np.random.Generator

    def loss(self, net: nn.Module, step: int) -> th.Tensor | None:
        """``weight_at(step) * J_E`` of ``net`` (the per-node MLP) on a fresh minibatch; None once the weight
        is 0 (no draw, so the TD steps after it are the plain ones)."""
        w = weight_at(step, self.weight, self.decay)
        if w <= 0.0 or len(self.index) == 0:
            return None
        drawn = self.rng.choice(self.index, size=min(self.batch, len(self.index)), replace=False)
        batch = Batch(self.examples, np.sort(drawn))
        return w * margin_loss(net(batch.x).squeeze(-1), batch, self.margin)
