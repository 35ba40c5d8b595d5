"""Policy benchmarks: numpy inference latency at 100 / 1,000 / 5,000 nodes and DQN training throughput.

Why it exists: the extender serves the DQN on kube-scheduler's serial path, so ``encode`` + ``q_values``
must stay within a couple of milliseconds at 5,000 nodes (target <= 2 ms); training must fit a 2-core
machine (``make model`` <= 15 min). Figures are printed with a same-run baseline (the ``demand-aware``
heuristic scoring the same snapshot), never asserted.

    python bench/bench_policy.py                       # inference with the shipped model + 3,000 training steps
    python bench/bench_policy.py --model runs/dqn.npz --train-steps 0
    python bench/bench_policy.py --model runs/dqn.npz runs/ensemble.npz --train-steps 0   # an ensemble against one
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy: one thread, as the extender serves
import numpy as np  # noqa: E402
from record import RESULTS, load_average  # noqa: E402  (bench/ is on the path: run as a script)
from record import write as write_results  # noqa: E402

from policy.baselines import make_scorer  # noqa: E402
from policy.features import encode  # noqa: E402
from policy.model import SHIPPED_MODEL, load_model  # noqa: E402
from policy.state import ClusterSnapshot, PodView  # noqa: E402


def snapshot(n: int, rng: np.random.Generator) -> ClusterSnapshot:
    cap = np.tile([8.0, 32.0, 125.0, 200.0], (n, 1)) * rng.choice([0.5, 1, 2], size=(n, 1))
    return ClusterSnapshot(
        names=tuple(f"node-{i}" for i in range(n)), capacity=cap, requested=cap[:, :2] * rng.random((n, 2)) * 0.8,
        usage=cap * rng.random((n, 4)), usage_age=rng.random(n) * 30, assumed=np.zeros((n, 4)),
        pods=rng.integers(0, 50, n).astype(float), max_pods=np.full(n, 110.0), ready=np.ones(n, dtype=bool))


def timed(fn, repeat: int) -> tuple[float, float, float]:
    """Median and 99th percentile of wall time, and median of this thread's CPU time, in ms (on a shared
    machine the CPU figure is what a call costs on its own core)."""
    for _ in range(3):
        fn()
    samples, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.thread_time()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.thread_time() - c0) * 1e3)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(0.99 * len(samples)))], statistics.median(cpu)


def bench_inference(model_paths: list[Path], sizes: list[int], repeat: int) -> dict:
    """Encode + Q-values per model on the same snapshots, in one run (an ensemble against one network: the
    ratio is only fair within a run). The first model's figures are ``inference``'s top level, as before."""
    from extender.heap import keep_freed_memory

    keep_freed_memory()  # as the extender serves: otherwise every call page-faults its buffers in again
    models = [load_model(path) for path in model_paths]
    heuristic = make_scorer("demand-aware")
    pod = PodView(requests=[0.5, 1.0], demand=[2.0, 1.0, 20.0, 5.0], demand_source="learned")
    rng = np.random.default_rng(0)
    for path, model in zip(model_paths, models, strict=True):
        print(f"model {path} ({model.version}, {len(getattr(model, 'members', (model,)))} network(s))")
    print(f"{'nodes':>7}{'encode p50':>12}{'dqn p50':>10}{'dqn p99':>10}{'dqn CPU':>10}{'heur p50':>10}"
          f"{'dqn/heur':>10}{'/ first':>9}  model   ms (dqn = encode + Q-values)")
    per_model = [{"model": str(path), "model_version": m.version, "networks": len(getattr(m, "members", (m,))),
                  "sizes": {}} for path, m in zip(model_paths, models, strict=True)]
    for n in sizes:
        snap = snapshot(n, rng)
        enc_p50, _, _ = timed(lambda snap=snap: encode(snap, pod), repeat)
        heur_p50, _, _ = timed(lambda snap=snap: heuristic.score(snap, pod), repeat)
        first = None
        for model, out in zip(models, per_model, strict=True):
            dqn_p50, dqn_p99, dqn_cpu = timed(lambda snap=snap, model=model: model.q_values(encode(snap, pod)), repeat)
            first = first or dqn_p50
            print(f"{n:>7}{enc_p50:>12.3f}{dqn_p50:>10.3f}{dqn_p99:>10.3f}{dqn_cpu:>10.3f}{heur_p50:>10.3f}"
                  f"{dqn_p50 / heur_p50:>10.1f}{dqn_p50 / first:>9.2f}  {model.version}")
            out["sizes"][str(n)] = {"encode_p50_ms": enc_p50, "dqn_p50_ms": dqn_p50, "dqn_p99_ms": dqn_p99,
                                    "dqn_cpu_p50_ms": dqn_cpu, "heuristic_p50_ms": heur_p50}
    return {"model_version": per_model[0]["model_version"], "sizes": per_model[0]["sizes"],
            **({"models": per_model} if len(per_model) > 1 else {})}


def bench_training(steps: int) -> dict:
    from policy.train import Args, make_env, make_model

    args = Args(steps=steps, learning_starts=min(500, steps // 2), eval_every=0, progress=False)
    env = make_env(args)
    model = make_model(args, env)
    t0 = time.perf_counter()
    model.learn(total_timesteps=steps)
    elapsed = time.perf_counter() - t0
    print(f"training: {steps} steps in {elapsed:.1f} s = {steps / elapsed:.0f} env steps/s "
          f"(one gradient step every {args.train_freq} env steps, batch {args.batch_size})")
    env_steps = 0
    env.reset(seed=0)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 3.0:
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        env_steps += 1
        if done:
            env.reset()
    env_rate = env_steps / (time.perf_counter() - t0)
    print(f"env alone (first feasible): {env_rate:.0f} steps/s")
    return {"steps": steps, "train_steps_per_s": steps / elapsed, "env_steps_per_s": env_rate}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, nargs="+", default=[SHIPPED_MODEL],
                   help="exported .npz, single networks or ensembles; several are timed on the same snapshots, "
                        "the first one's figures at the top level (default: the shipped model)")
    p.add_argument("--nodes", default="100,1000,5000", help="cluster sizes (default: %(default)s)")
    p.add_argument("--repeat", type=int, default=200, help="timed calls per size (default: %(default)s)")
    p.add_argument("--train-steps", type=int, default=3000,
                   help="training steps to time; 0 skips (default: %(default)s)")
    p.add_argument("--results", default=str(RESULTS / "policy.json"),
                   help="write the figures here for the README's table ('' = do not write)")
    args = p.parse_args()
    load_before = load_average()
    figures = {"inference": bench_inference(args.model, [int(x) for x in args.nodes.split(",")], args.repeat)}
    if args.train_steps:
        import torch

        torch.set_num_threads(1)
        figures["training"] = bench_training(args.train_steps)
    write_results(args.results, figures, load_before=load_before)


if __name__ == "__main__":
    main()
