"""``python -m policy.train``: train the per-node DQN on ``ClusterEnv`` and export a numpy artifact.

Reads top to bottom: arguments, environment, network, learning loop; the steps stay importable for tests.

    python -m policy.train --steps 200000 --seed 1 --out policy/models/default
    python -m policy.train --config policy/models/default-train.yaml      # flags override the file
    python -m policy.train --warm-start /var/lib/drsched/decisions        # imitate the log first (policy.warmstart)
    python -m policy.train --warm-start LOG --imitation-weight 1          # ... and keep imitating it (policy.dqfd)
    python -m policy.train --select served                                # keep the best export as served

Every ``--eval-every`` steps the current network is exported to numpy and evaluated, through the same
``policy.sim.episode`` loop the evaluator uses, on the validation split (``policy.splits``: its families and
loads, ``--eval-seeds`` seeds each; never the test split) against ``default-k8s`` and ``demand-aware``; the
best export is kept as ``<out>.npz`` + ``<out>.json`` with its scores, the effective config and the source
commit in the metadata. Best is the lowest of that check, or with ``--select served`` the lowest served ratio
to the best heuristic on other validation seeds (``policy.selection``). ``--resume`` continues from an SB3
checkpoint (``<out>.sb3.zip``, written at the end and on Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np
import yaml

from policy.cli import add_arguments, from_namespace, option
from policy.selection import RULES, case_means, improves, served_ratio
from policy.served import DEFAULT_MAPPING, DEFAULT_WEIGHT, ScoreMapping

log = logging.getLogger("policy.train")


@dataclass
class Args:
    """Training configuration; each field is a command-line flag of the same name."""

    steps: int = 150_000
    """environment steps (one step = one pod placed)"""
    seed: int = 1
    """seed of the env, the network initialisation and exploration"""
    clusters: str = "standard:4-12;mixed:4-16"
    """cluster specs drawn per episode, ';'-separated (policy.sim.cluster)"""
    workloads: str = "drs;drs;batch"
    """workload mixes drawn per episode, ';'-separated (repeat one to weight it)"""
    load_min: float = 0.6
    """lowest offered load drawn"""
    load_max: float = 1.6
    """highest offered load drawn"""
    profile_error_max: float = 0.5
    """largest lognormal sigma of the expected-demand error drawn"""
    sample_intervals: str = "10;30;60;90"
    """node-monitor sample intervals drawn per episode, ';'-separated (seconds; above max_usage_age = 60 s
    the usage becomes stale part of the time)"""
    profiles: str = "noisy;learned"
    """expected-demand profile kinds drawn per episode, ';'-separated (noisy | class | requests | learned)"""
    unprofiled_max: float = 0.3
    """largest share of pods without a profile (demand_known 0) drawn per episode"""
    n_jobs: int = 120
    """jobs per training episode"""
    contention: str = ""
    """contention set of policy/sim/calibration.yaml to train and evaluate in, e.g. fitted-lab (empty: the
    file's active set, or $DRSCHED_SIM_CALIBRATION's)"""
    max_nodes: int = 16
    """observation padding (largest training cluster)"""
    reward: str = "shaped"
    """slowdown | shaped | imbalance | mix (policy.env)"""
    shaping_gamma: float = 1.0
    """discount in the shaped reward's potential term: 1 keeps every episode's return equal to the plain
    slowdown reward's (our objective is the undiscounted sum), gamma makes it exactly potential-based"""
    net_arch: list[int] = field(default_factory=lambda: [64, 64])
    """hidden layers of the per-node MLP"""
    learning_rate: float = 5e-4
    """Adam learning rate"""
    gamma: float = 0.5
    """discount of the learner; with the shaped reward each step already carries its own placement's cost
    (policy/README.md, "Reward horizon")"""
    n_steps: int = 1
    """TD target over this many steps of discounted reward before bootstrapping (SB3's n-step returns; 1: plain DQN)"""
    buffer_size: int = 100_000
    """replay buffer transitions"""
    learning_starts: int = 2_000
    """random (masked) steps before learning"""
    batch_size: int = 64
    """minibatch size"""
    train_freq: int = 4
    """env steps per gradient step"""
    target_update: int = 2_000
    """env steps between target-network syncs"""
    exploration_fraction: float = 0.3
    """fraction of training over which epsilon decays"""
    exploration_final_eps: float = 0.05
    """final epsilon"""
    eval_every: int = 25_000
    """env steps between held-out evaluations (0: only at the end)"""
    eval_seeds: int = 2
    """validation seeds per family and load of each evaluation"""
    out: str = "runs/dqn"
    """artifact path without extension: writes <out>.npz, <out>.json, <out>.sb3.zip"""
    resume: str = ""
    """SB3 checkpoint (.sb3.zip) to continue from"""
    warm_start: str = ""
    """decision log (directory or segment) to imitate before training: the Q-network is fitted to its picks
    (serve rows' chosen, shadow rows' actual node), then DQN training continues from it (policy.warmstart)"""
    warm_start_epochs: int = 20
    """passes over the log's decisions when warm starting"""
    warm_start_holdout: float = 0.2
    """share of the log's usable decisions, the most recent, held out to report the imitation agreement on"""
    warm_start_calibrate: int = 0
    """after imitating, random transitions on which the imitated Q-values are mapped onto the return's scale
    (policy.warmstart.calibrate; 0: not calibrated)"""
    imitation_weight: float = 0.0
    """weight of a large-margin loss on the --warm-start log's decisions added to every TD step's loss, so DQN
    training keeps the imitation instead of overwriting it (policy.dqfd, DQfD's; 0: off)"""
    imitation_margin: float = 0.05
    """margin (in Q's units, the return's) by which the imitation loss wants the log's pick above every other
    candidate"""
    imitation_decay: int = 0
    """environment steps over which the imitation weight falls linearly to 0 (0: constant)"""
    select: str = option("argmax", choices=tuple(RULES))
    """which check's export is kept: argmax = the lowest validation excess of the network as a pure argmax
    (the check above); served = the lowest served ratio to the best heuristic (policy.selection), the network
    scored as the extender serves it, checked before any DQN step too"""
    select_seeds: int = 2
    """validation seeds per family and load of the served check"""
    select_offset: int = 5
    """where the served check's seeds start in the validation split (the default leaves seeds 0-4 out of the
    choice: policy.evaluate --split validation reports on them)"""
    select_weight: float = DEFAULT_WEIGHT
    """extender weight of the served check"""
    select_mapping: str = str(DEFAULT_MAPPING)
    """value-to-score mapping of the served check (minmax, band:B, linear:B; policy.served)"""
    tensorboard: str = ""
    """TensorBoard log directory (off when empty)"""
    progress: bool = True
    """show SB3's progress bar"""


CALIBRATION_SEED_OFFSET = 1_000_003
"""The warm start's calibration environment is reset with ``seed +`` this (``Args.warm_start_calibrate``)."""


def parse_args(argv: list[str] | None = None) -> Args:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config", type=Path)
    known, _ = pre.parse_known_args(argv)
    defaults = Args()
    if known.config:
        try:
            data = yaml.safe_load(known.config.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise SystemExit(f"error: --config {known.config}: {exc}") from None
        names = {f.name for f in fields(Args)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise SystemExit(f"error: --config {known.config}: unknown field(s) {unknown}")
        defaults = Args(**{**asdict(defaults), **data})
    p = argparse.ArgumentParser(prog="python -m policy.train", description=__doc__.split("\n\n")[0],
                                epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", type=Path, help="YAML file of fields below (flags given here override it)")
    add_arguments(p, Args, defaults)
    args = from_namespace(p.parse_args(argv))
    if args.n_steps < 1:
        p.error(f"--n-steps: must be at least 1, got {args.n_steps}")
    if args.warm_start and args.resume:
        p.error("--warm-start with --resume: a resumed checkpoint is trained already; warm start a new run")
    if args.warm_start_calibrate < 0:
        p.error(f"--warm-start-calibrate: must be at least 0, got {args.warm_start_calibrate}")
    if not 0.0 <= args.warm_start_holdout < 1.0:
        p.error(f"--warm-start-holdout: must be in [0, 1), got {args.warm_start_holdout}")
    if args.imitation_weight < 0 or args.imitation_decay < 0 or not args.imitation_margin > 0:
        p.error("--imitation-weight and --imitation-decay must be at least 0 and --imitation-margin above 0, got "
                f"{args.imitation_weight}, {args.imitation_decay}, {args.imitation_margin}")
    if args.imitation_weight and not args.warm_start:
        p.error("--imitation-weight needs --warm-start LOG: the decisions it keeps imitating")
    if args.select_seeds < 1 or args.select_offset < 0 or not args.select_weight > 0:
        p.error("--select-seeds must be at least 1, --select-offset at least 0 and --select-weight above 0")
    try:
        ScoreMapping.parse(args.select_mapping)
    except ValueError as exc:
        p.error(f"--select-mapping: {exc}")
    try:
        contention_of(args)
    except ValueError as exc:
        p.error(f"--contention: {exc}")
    return args


def contention_of(args: Args):
    """The ``ContentionParams`` training runs in: the named set, or ``None`` (the calibration file's active set)."""
    from policy.sim.calibration import shipped

    return shipped(args.contention) if args.contention else None


def _split(s: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in s.split(";") if x.strip())


def make_env_config(args: Args):
    from policy.env import EnvConfig
    from policy.sim.config import SimConfig

    return EnvConfig(base=SimConfig(contention=contention_of(args)),
                     clusters=_split(args.clusters), workloads=_split(args.workloads),
                     load=(args.load_min, args.load_max), profile_error=(0.0, args.profile_error_max),
                     sample_intervals=tuple(float(x) for x in _split(args.sample_intervals)),
                     profiles=_split(args.profiles), unprofiled=(0.0, args.unprofiled_max),
                     n_jobs=args.n_jobs, max_nodes=args.max_nodes, reward=args.reward, shaping_gamma=args.shaping_gamma)


def make_env(args: Args):
    from policy.env import ClusterEnv

    return ClusterEnv(make_env_config(args))


def make_model(args: Args, env):
    from torch import nn

    from policy.dqn import MaskedDQN, PerNodeDQNPolicy

    if args.resume:
        log.info("resuming from %s", args.resume)
        return _quiet_logger(MaskedDQN.load(args.resume, env=env, tensorboard_log=args.tensorboard or None), args)
    return _quiet_logger(MaskedDQN(
        PerNodeDQNPolicy, env, learning_rate=args.learning_rate, gamma=args.gamma, n_steps=args.n_steps,
        buffer_size=args.buffer_size, learning_starts=args.learning_starts, batch_size=args.batch_size,
        train_freq=args.train_freq, target_update_interval=args.target_update,
        exploration_fraction=args.exploration_fraction, exploration_final_eps=args.exploration_final_eps,
        seed=args.seed, verbose=0, device="cpu",
        policy_kwargs=dict(net_arch=list(args.net_arch), activation_fn=nn.ReLU),
        tensorboard_log=args.tensorboard or None,
    ), args)


def _quiet_logger(model, args: Args):
    """Without --tensorboard, a logger that writes nothing: SB3's default one makes an empty
    ``$TMPDIR/SB3-<time>`` directory on every learn() (one per training run and per test left in /tmp)."""
    if not args.tensorboard:
        from stable_baselines3.common.logger import Logger

        model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def source_state() -> dict:
    """The git commit of the source and whether the work tree differs from it (``dirty``), read once when
    training starts: exports written into the repository later must not count as the source's changes."""
    def git(*cmd: str) -> str:
        return subprocess.run(["git", *cmd], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).parent).stdout.strip()

    try:
        return {"source_commit": git("rev-parse", "--short", "HEAD"),
                "source_dirty": bool(git("status", "--porcelain"))}
    except (OSError, subprocess.CalledProcessError):
        return {"source_commit": "unknown", "source_dirty": None}


def export(model, path: Path, args: Args, scores: dict | None, steps: int, source: dict) -> Path:
    from policy.dqn import export_weights
    from policy.model import save_model

    weights, biases, activation = export_weights(model.q_net)
    meta = {"version": f"{path.stem}-{source['source_commit']}-s{steps}", "trained_steps": steps,
            "train_config": asdict(args), "eval_excess_slowdown": scores, **source,
            "exported_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    return save_model(path, weights, biases, activation=activation, meta=meta)


def make_callback(args: Args, out: Path, source: dict):
    from stable_baselines3.common.callbacks import BaseCallback

    from policy.checks import evaluate_export, served_rows
    from policy.comparison import HEURISTICS

    served = dict(n_seeds=args.select_seeds, offset=args.select_offset, weight=args.select_weight,
                  mapping=ScoreMapping.parse(args.select_mapping), contention=contention_of(args))

    class EvalCallback(BaseCallback):
        """Export + held-out evaluation every ``eval_every`` steps; keeps at ``out`` the export that is best by
        ``--select`` (``policy.selection``)."""

        def __init__(self) -> None:
            super().__init__()
            self.key = RULES[args.select]
            self.best: float | None = None
            self.history: list[dict] = []
            self.baselines: dict[str, float] = {}
            self.heuristics: list[dict] = []  # the served check's heuristics' rows, measured once
            previous = out.with_suffix(".json")
            if args.resume and previous.is_file():  # keep the earlier run's best unless we beat it
                scores = json.loads(previous.read_text()).get("eval_excess_slowdown") or {}
                self.best = scores.get(self.key)
                self.history = list(scores.get("history", []))

        def _on_training_start(self) -> None:
            if args.select == "served" and not args.resume:  # the network DQN starts from is a candidate too
                self.evaluate()

        def _on_step(self) -> bool:
            if args.eval_every and self.num_timesteps % args.eval_every == 0:
                self.evaluate()
            return True

        def evaluate(self) -> None:
            cand = out.with_name(out.name + "-candidate")
            export(self.model, cand, args, None, self.num_timesteps, source)
            scores = evaluate_export(cand.with_suffix(".npz"), n_jobs=args.n_jobs, n_seeds=args.eval_seeds,
                                     contention=contention_of(args), baselines=self.baselines)
            self.logger.record("eval/excess_slowdown", scores["dqn"])
            self.logger.record("eval/excess_ratio_to_default", scores["dqn"] / max(scores["default-k8s"], 1e-9))
            log.info("eval steps=%d dqn=%.4f default-k8s=%.4f demand-aware=%.4f", self.num_timesteps,
                     scores["dqn"], scores["default-k8s"], scores["demand-aware"])
            if args.select == "served":
                self.heuristics = self.heuristics or served_rows(list(HEURISTICS), **served)
                rows = served_rows([f"dqn:{cand.with_suffix('.npz')}"], **served)
                scores["served_ratio"] = served_ratio(case_means([*self.heuristics, *rows]), rows[0]["policy"])
                self.logger.record("eval/served_ratio", scores["served_ratio"])
                log.info("served check steps=%d ratio=%.4f", self.num_timesteps, scores["served_ratio"])
            self.history.append({"steps": self.num_timesteps, **scores})
            if improves(scores[self.key], self.best):
                self.best = scores[self.key]
                export(self.model, out, args, {**scores, "history": self.history}, self.num_timesteps, source)
                log.info("new best model at %s (%s %.4f)", out.with_suffix(".npz"), self.key, self.best)
            for suffix in (".npz", ".json"):
                cand.with_suffix(suffix).unlink(missing_ok=True)

    return EvalCallback()


def train(args: Args) -> Path:
    """Train, evaluate, export; returns the artifact's .npz path."""
    import torch

    torch.set_num_threads(1)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    source = source_state()  # before anything is written, possibly into the repository
    log.info("effective config: %s source=%s", json.dumps(asdict(args), sort_keys=True), source)
    out.with_suffix(".train-config.json").write_text(json.dumps(asdict(args), indent=2, sort_keys=True) + "\n")
    env = make_env(args)
    model = make_model(args, env)
    if args.warm_start:
        from policy.warmstart import load_examples, warm_start

        loaded = load_examples(args.warm_start)
        report = warm_start(model, args.warm_start, epochs=args.warm_start_epochs, holdout=args.warm_start_holdout,
                            seed=args.seed, loaded=loaded)
        if args.warm_start_calibrate:
            from policy.warmstart import calibrate

            # a separate environment on other training seeds, so the training env's episodes stay the cold arm's
            report.calibration = asdict(calibrate(model, make_env(args), steps=args.warm_start_calibrate,
                                                  gamma=args.gamma, seed=args.seed + CALIBRATION_SEED_OFFSET))
        out.with_suffix(".warm-start.json").write_text(json.dumps(asdict(report), indent=2, sort_keys=True) + "\n")
        if args.imitation_weight:
            model.imitation = make_imitation(args, loaded[0])
    callback = make_callback(args, out, source)
    t0 = time.perf_counter()
    try:
        model.learn(total_timesteps=args.steps, callback=callback, progress_bar=args.progress,
                    reset_num_timesteps=not args.resume)
    except KeyboardInterrupt:
        log.warning("interrupted at step %d; saving a checkpoint", model.num_timesteps)
    finally:
        model.save(str(out) + ".sb3.zip")
    elapsed = time.perf_counter() - t0
    log.info("trained %d steps in %.0f s (%.0f steps/s)", model.num_timesteps, elapsed,
             model.num_timesteps / max(elapsed, 1e-9))
    callback.evaluate()
    meta_path = out.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    meta["train_seconds"] = round(elapsed, 1)
    meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return out.with_suffix(".npz")


def make_imitation(args: Args, ex):
    """The imitation term kept during training (``policy.dqfd``) on the warm start's training decisions."""
    from policy.dqfd import Imitation
    from policy.warmstart import split

    train_idx, _ = split(len(ex), args.warm_start_holdout)
    return Imitation(examples=ex, index=train_idx, weight=args.imitation_weight, margin=args.imitation_margin,
                     decay=args.imitation_decay, batch=args.batch_size, rng=np.random.default_rng(args.seed))


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    from policy.warmstart import WarmStartError

    try:
        path = train(args)
    except WarmStartError as exc:
        raise SystemExit(f"error: {exc}") from None
    log.info("model written to %s", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
