"""Simulator throughput: placements per second with a trivial policy, at 64 and 1,000 nodes.

Why it exists: DQN training needs millions of decisions, so the simulator's hot path is measured, not
guessed. Two figures per cluster size: ``core`` (next_decision + feasible_mask + place, the policy sees only
the mask) and ``run`` (the ``policy.sim.run`` helper, which also builds a ``ClusterSnapshot`` per decision).
Episode construction (job sampling) is timed separately. Prints a table; not a test.

    python bench/bench_sim.py --nodes 64,1000 --jobs 20000
    python bench/bench_sim.py --profile   # cProfile the core loop at the first size
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from record import RESULTS, load_average  # (bench/ is on the path: run as a script)
from record import write as write_results

from policy.sim import SimConfig, Simulator, first_feasible, run


def core_loop(sim: Simulator, policy: str) -> int:
    """Drive ``sim`` to the end with no snapshot; returns the number of placements."""
    n, rr, placed = sim.nodes.n, 0, 0
    while sim.next_decision() is not None:
        mask = sim.feasible_mask()
        if policy == "round-robin":
            for k in range(n):
                node = (rr + k) % n
                if mask[node]:
                    break
            rr = node + 1
        else:
            node = int(mask.argmax())
        sim.place(node)
        placed += 1
    return placed


def measure(n_nodes: int, jobs: int, load: float, policy: str, seed: int) -> dict[str, float]:
    cfg = SimConfig(cluster=f"standard:{n_nodes}", load=load, n_jobs=jobs, workload="drs")
    t0 = time.perf_counter()
    sim = Simulator(cfg, seed=seed)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    placed = core_loop(sim, policy)
    t_core = time.perf_counter() - t0
    sim.reset(seed)
    t0 = time.perf_counter()
    result = run(sim, first_feasible)
    t_run = time.perf_counter() - t0
    return {"nodes": n_nodes, "placed": placed, "core_per_s": placed / t_core, "run_per_s": result.finished / t_run,
            "build_s": t_build, "mean_slowdown": result.mean_slowdown}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", default="64,1000", help="comma-separated cluster sizes (default: %(default)s)")
    p.add_argument("--jobs", type=int, default=20000, help="jobs per run (default: %(default)s)")
    p.add_argument("--load", type=float, default=0.9, help="offered load (default: %(default)s)")
    p.add_argument("--policy", choices=("first-feasible", "round-robin"), default="round-robin",
                   help="trivial policy of the core loop (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--profile", action="store_true", help="cProfile the core loop at the first size instead")
    p.add_argument("--results", default=str(RESULTS / "sim.json"),
                   help="write the figures here for the README's table ('' = do not write)")
    args = p.parse_args()
    load_before = load_average()
    sizes = [int(s) for s in args.nodes.split(",")]
    if args.profile:
        sim = Simulator(SimConfig(cluster=f"standard:{sizes[0]}", load=args.load, n_jobs=args.jobs), seed=args.seed)
        cProfile.runctx("core_loop(sim, args.policy)", globals(), {"sim": sim, "args": args, "core_loop": core_loop},
                        "/tmp/bench_sim.prof")
        pstats.Stats("/tmp/bench_sim.prof").sort_stats("tottime").print_stats(15)
        return
    print(f"{'nodes':>6} {'placed':>8} {'core/s':>10} {'run/s':>10} {'build s':>8} {'slowdown':>9}")
    sizes_out = []
    for n in sizes:
        m = measure(n, args.jobs, args.load, args.policy, args.seed)
        sizes_out.append(m)
        print(f"{m['nodes']:>6} {m['placed']:>8} {m['core_per_s']:>10,.0f} {m['run_per_s']:>10,.0f} "
              f"{m['build_s']:>8.2f} {m['mean_slowdown']:>9.3f}")
    write_results(args.results, {"policy": args.policy, "sizes": sizes_out}, load_before=load_before)


if __name__ == "__main__":
    main()
