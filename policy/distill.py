"""``python -m policy.distill --teacher ENS.npz --out STUDENT.npz``: one network fitted to a teacher's Q-values.

Why it exists: an ensemble (``policy.ensemble``) places better than any of its members but costs K networks per
request (issue #22: seven members, ~5x one network at 5,000 nodes, against a 2 ms budget). Distillation fits one
per-node MLP of the shipped size to the teacher's values on the states the teacher meets, so its decisions come
at one network's cost. The result is a normal ``drsched-qnet/1`` artifact (``policy.model.save_model``), its
metadata recording the teacher and where the states came from; the extender serves it as any export.

States (``collect``): episodes drawn as training draws them (``policy.train.make_env_config``, seeds below
``policy.splits.TRAIN_SEED_LIMIT``: the train split only), placed by the teacher as served (``policy.served``,
the mapping and weight given), with a uniformly random feasible node instead at rate ``epsilon`` so that states a
little off the teacher's path are seen too. Every decision with a feasible node is one example: its feasible
nodes' rows (``policy.features.stack`` of the one encoder) and the teacher's Q-value of each.

Loss (``loss``), per decision over its feasible nodes: the squared error of the centred values (every served
mapping reads values within one decision only), a weak squared error of their mean (keeps the student on the
return's scale, which ``band:B`` reads), both over the teacher's pooled within-decision variance, plus the
cross-entropy of a softmax at temperature ``tau`` (the node on top). The last ``holdout`` share of the episodes
is held out whole; the epoch with the lowest held-out loss is kept. Imports torch: training only.

Exit status 0 written, 2 bad input (one line naming the flag, or the teacher's file and what is wrong with it).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from policy.baselines import pick
from policy.cli import command_parser, from_namespace, option
from policy.features import encode, stack
from policy.model import DIGEST_KEY, Model, ModelError, ModelScorer, load_model, save_model
from policy.served import ScoreMapping, Served
from policy.sim.config import SimConfig
from policy.sim.engine import Simulator
from policy.sim.episode import run
from policy.splits import TRAIN_SEED_LIMIT

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class DistillArgs:
    """What ``python -m policy.distill`` runs; each field is the command-line flag of the same name."""

    teacher: Path = option(metavar="MODEL.npz")
    """the model to imitate (an ensemble or one network, as load_model reads it)"""
    out: Path = option(metavar="PATH.npz")
    """where to write the student (.npz and its .json metadata)"""
    episodes: int = 240
    """training-split episodes whose decisions are the examples (drawn as policy.train draws them)"""
    epsilon: float = 0.1
    """share of decisions placed on a random feasible node instead of the teacher's served pick"""
    weight: float = 10.0
    """extender weight of the teacher's served placement while collecting"""
    mapping: str = "minmax"
    """value-to-score mapping of the teacher's served placement while collecting (policy.served)"""
    holdout: float = 0.1
    """share of the episodes (the last ones, whole) held out to choose the epoch"""
    net_arch: list[int] = field(default_factory=lambda: [64, 64])
    """hidden layers of the student's per-node MLP (the shipped model's)"""
    epochs: int = 40
    """passes over the training examples"""
    batch: int = 256
    """decisions per gradient step"""
    learning_rate: float = 1e-3
    """Adam learning rate"""
    tau: float = 0.02
    """softmax temperature of the top-of-decision term, in Q's units (the shipped band)"""
    level_weight: float = 0.1
    """weight of the squared error of each decision's mean value"""
    seed: int = 0
    """seed of the episodes, the exploration, the initialisation and the batch order"""
    workloads: str | None = None
    """the episodes' job mixes, as policy.train's --workloads (unset: the shipped recipe's)"""


@dataclass
class States:
    """Examples: ``rows[offsets[d]:offsets[d + 1]]`` are decision ``d``'s feasible nodes, ``q`` the teacher's
    value of each; ``episode[d]`` the episode it came from."""

    rows: np.ndarray
    q: np.ndarray
    offsets: np.ndarray
    episode: np.ndarray

    def __len__(self) -> int:
        return len(self.episode)


def train_episodes(n: int, seed: int, workloads: str | None = None) -> list[tuple[SimConfig, int]]:
    """``n`` (config, simulator seed) pairs drawn as ``policy.env.ClusterEnv`` draws them under the shipped
    recipe (``policy.train``'s defaults; its job mixes replaced by ``workloads`` if given), simulator seeds in the
    train split."""
    from policy.train import Args, make_env_config

    recipe = Args() if workloads is None else Args(workloads=workloads)
    env_cfg, rng = make_env_config(recipe), np.random.default_rng(seed)
    return [(env_cfg.draw(rng), int(rng.integers(TRAIN_SEED_LIMIT))) for _ in range(n)]


def collect(teacher: Model, episodes: Sequence[tuple[SimConfig, int]], *, served: Served, epsilon: float,
            seed: int) -> States:
    """Run each episode placed by ``served`` (or a random feasible node at rate ``epsilon``), recording every
    decision's feasible rows and ``teacher``'s values of them."""
    rng = np.random.default_rng(seed)
    rows, qs, sizes, eps_of = [], [], [], []
    for k, (cfg, sim_seed) in enumerate(episodes):
        def choose(snap, pod, mask, k=k):
            if not mask.any():
                return None
            enc = encode(snap, pod)
            rows.append(stack(enc)[mask])
            qs.append(teacher.q_values(enc)[mask])
            sizes.append(int(mask.sum()))
            eps_of.append(k)
            if rng.random() < epsilon:
                return int(rng.choice(np.flatnonzero(mask)))
            return pick(served.score(snap, pod), mask, rng)

        run(Simulator(cfg, seed=sim_seed), choose)
    return States(rows=np.concatenate(rows).astype(np.float32), q=np.concatenate(qs),
                  offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64), episode=np.asarray(eps_of))


def agreement(student_q: np.ndarray, teacher_q: np.ndarray, offsets: np.ndarray) -> float:
    """Share of decisions whose student top node is among the teacher's top nodes (exact ties)."""
    hits = [teacher_q[a + int(np.argmax(student_q[a:b]))] >= teacher_q[a:b].max()
            for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)]
    return float(np.mean(hits)) if hits else float("nan")


def within_sigma(q: np.ndarray, offsets: np.ndarray) -> float:
    """The pooled standard deviation of ``q`` around each decision's mean."""
    seg = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    means = np.bincount(seg, q) / np.diff(offsets)
    return float(np.sqrt(np.mean((q - means[seg]) ** 2)))


def loss(s, t, seg, n: int, *, sigma: float, tau: float, level_weight: float):
    """The module doc's loss (torch tensors: ``s``, ``t`` values per row, ``seg`` each row's decision in 0..n)."""
    import torch as th

    count = th.zeros(n, dtype=s.dtype).index_add(0, seg, th.ones_like(s))
    s_mean = th.zeros(n, dtype=s.dtype).index_add(0, seg, s) / count
    t_mean = th.zeros(n, dtype=s.dtype).index_add(0, seg, t) / count
    d = (s - s_mean[seg]) - (t - t_mean[seg])
    spacing = th.zeros(n, dtype=s.dtype).index_add(0, seg, d * d) / count
    level = (s_mean - t_mean) ** 2
    log_p_s = _log_softmax(s / tau, seg, n)
    p_t = th.exp(_log_softmax(t / tau, seg, n))
    ce = -th.zeros(n, dtype=s.dtype).index_add(0, seg, p_t * log_p_s)
    return ((spacing + level_weight * level) / sigma**2 + ce).mean()


def _log_softmax(x, seg, n: int):
    import torch as th

    top = th.full((n,), -th.inf, dtype=x.dtype).scatter_reduce(0, seg, x, "amax").detach()
    z = th.zeros(n, dtype=x.dtype).index_add(0, seg, th.exp(x - top[seg]))
    return x - top[seg] - th.log(z)[seg]


def _batch(st: States, index: np.ndarray):
    import torch as th

    starts, ends = st.offsets[index], st.offsets[index + 1]
    rows = np.concatenate([np.arange(a, b) for a, b in zip(starts.tolist(), ends.tolist(), strict=True)])
    seg = np.repeat(np.arange(len(index)), ends - starts)
    return th.from_numpy(st.rows[rows]), th.from_numpy(st.q[rows].astype(np.float32)), th.from_numpy(seg), len(index)


def fit(st: States, args: DistillArgs) -> tuple[object, dict]:
    """The student (torch per-node MLP) fitted to ``st`` (module doc) and a report of the fit."""
    import torch as th

    from policy.dqn import _mlp

    th.manual_seed(args.seed)
    th.set_num_threads(1)
    n_eps = int(st.episode.max()) + 1
    first_held = n_eps - max(1, int(round(n_eps * args.holdout))) if args.holdout > 0 else n_eps
    train_idx = np.flatnonzero(st.episode < first_held)
    held_idx = np.flatnonzero(st.episode >= first_held)
    sigma = within_sigma(st.q[: st.offsets[train_idx[-1] + 1]], st.offsets[: train_idx[-1] + 2])
    net = _mlp([st.rows.shape[1], *args.net_arch, 1], th.nn.ReLU)
    opt = th.optim.Adam(net.parameters(), lr=args.learning_rate)
    kw = dict(sigma=sigma, tau=args.tau, level_weight=args.level_weight)
    rng = np.random.default_rng(args.seed)
    history, best, best_state = [], float("inf"), None
    for epoch in range(args.epochs):
        order, total = rng.permutation(train_idx), 0.0
        for i in range(0, len(order), args.batch):
            x, t, seg, n = _batch(st, order[i:i + args.batch])
            value = loss(net(x).squeeze(-1), t, seg, n, **kw)
            opt.zero_grad()
            value.backward()
            opt.step()
            total += value.item() * n
        held = _held_loss(net, st, held_idx, kw) if len(held_idx) else total / len(order)
        history.append({"epoch": epoch + 1, "train_loss": round(total / len(order), 5), "held_loss": round(held, 5)})
        log.info("epoch %d train_loss=%.4f held_loss=%.4f", epoch + 1, total / len(order), held)
        if held < best:
            best, best_state = held, {k: v.clone() for k, v in net.state_dict().items()}
    net.load_state_dict(best_state)
    report = {"decisions": len(st), "rows": len(st.rows), "episodes": n_eps, "train_decisions": len(train_idx),
              "held_decisions": len(held_idx), "sigma": sigma, "kept_epoch": min(history, key=lambda h: h["held_loss"])
              ["epoch"], "history": history,
              "train_agreement": _agreement_of(net, st, train_idx), "held_agreement": _agreement_of(net, st, held_idx)}
    return net, report


def _held_loss(net, st: States, index: np.ndarray, kw: dict) -> float:
    import torch as th

    with th.no_grad():
        x, t, seg, n = _batch(st, index)
        return float(loss(net(x).squeeze(-1), t, seg, n, **kw))


def _agreement_of(net, st: States, index: np.ndarray) -> float:
    import torch as th

    if len(index) == 0:
        return float("nan")
    x, t, _, _ = _batch(st, index)
    with th.no_grad():
        s = net(x).squeeze(-1).numpy()
    sizes = st.offsets[index + 1] - st.offsets[index]
    return agreement(s, t.numpy(), np.concatenate([[0], np.cumsum(sizes)]))


def build_parser() -> argparse.ArgumentParser:
    return command_parser("policy.distill", __doc__, DistillArgs)


def check(args: DistillArgs) -> None:
    """``ValueError`` naming the flag of a value the run cannot use, before anything is simulated."""
    problems = [(not 0 <= args.epsilon <= 1, "--epsilon", "a share in [0, 1]"),
                (not 0 <= args.holdout < 1, "--holdout", "a share in [0, 1)"),
                (args.episodes < (2 if args.holdout > 0 else 1), "--episodes", "at least 2 with a holdout, else 1"),
                (min(args.epochs, args.batch) < 1 or not args.net_arch or min(args.net_arch) < 1,
                 "--epochs, --batch, --net-arch", "at least 1 each"),
                (not (args.tau > 0 and args.learning_rate > 0 and args.level_weight >= 0),
                 "--tau, --learning-rate, --level-weight", "> 0, > 0 and >= 0")]
    for bad, flag, need in problems:
        if bad:
            raise ValueError(f"{flag}: need {need}")
    ScoreMapping.parse(args.mapping)


def distill(args: DistillArgs) -> tuple[Path, dict]:
    """Collect, fit and save the student; returns its path and the fit report."""
    from types import SimpleNamespace

    from policy.dqn import export_weights
    from policy.train import source_state

    source = source_state()  # read before anything is written: outputs must not count as source changes
    teacher = load_model(args.teacher)
    served = Served(ModelScorer(teacher, name="teacher"), args.weight, mapping=ScoreMapping.parse(args.mapping))
    log.info("distill config %s", json.dumps({k: str(v) for k, v in asdict(args).items()}))
    st = collect(teacher, train_episodes(args.episodes, args.seed, args.workloads), served=served, epsilon=args.epsilon,
                 seed=args.seed)
    log.info("collected decisions=%d rows=%d", len(st), len(st.rows))
    net, report = fit(st, args)
    weights, biases, activation = export_weights(SimpleNamespace(q_net=net))
    meta = {"version": f"{args.out.with_suffix('').name}-{source['source_commit']}", "trained_steps": None,
            "distilled_from": {"path": str(teacher.path), "version": teacher.version,
                               DIGEST_KEY: teacher.meta.get(DIGEST_KEY)},
            "distill_states": f"train split: {args.episodes} episodes of policy.train's default draw"
                              f"{'' if args.workloads is None else f' with workloads {args.workloads}'} from seed "
                              f"{args.seed}, placed by the teacher served ({args.mapping} at weight {args.weight:g}), "
                              f"random feasible node at rate {args.epsilon:g}",
            "distill_config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(args).items()},
            "distill_report": {k: v for k, v in report.items() if k != "history"}, **source}
    path = save_model(args.out, weights, biases, activation=activation, meta=meta)
    args.out.with_suffix(".distill.json").write_text(json.dumps(report, indent=2) + "\n")
    return path, report


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    args: DistillArgs = from_namespace(build_parser().parse_args(argv))
    try:
        check(args)
        load_model(args.teacher)
    except (ValueError, ModelError) as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201 -- a command's one-line answer
        return 2
    path, report = distill(args)
    log.info("student written path=%s held_agreement=%.3f kept_epoch=%d", path, report["held_agreement"],
             report["kept_epoch"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
