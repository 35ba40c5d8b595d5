"""The extender's CPU per scheduled pod, in-process: every call kube-scheduler's cycle and the cluster make.

bench_scheduler.py measures the extender's CPU per pod with a real control plane and KWOK nodes (issue #26:
14 ms at 5,000 nodes); this replays the same per-pod sequence against one ``Runtime`` without a cluster, so
each step's cost can be profiled and two checkouts compared on a busy machine:

1. the pending pod's ADDED watch event (``extender.kube.apply_pod_event``);
2. ``filter`` naming every node (percentageOfNodesToScore 100), body bytes to reply bytes
   (``extender.fastwire.parse_args`` + ``answer``, the server's path without HTTP);
3. ``prioritize`` naming the nodes that passed;
4. ``bind``: the watch's MODIFIED event with ``spec.nodeName`` set (kube-scheduler binds), then KWOK's
   status write (Running) as another MODIFIED event;
5. ``--heartbeats`` node MODIFIED events per pod whose only change is the heartbeat time (KWOK patched node
   status 8 times per scheduled pod in scheduler-20261207T1625.json).

Each step is timed with ``time.process_time`` (one thread); the figures are medians over ``--pods`` pods after
``--warmup``. ``--baseline-tree DIR`` runs the same script's worker from another checkout too, in fresh
processes, the trees alternating for ``--rounds`` rounds (ABAB, which goes first swapping each round), and
prints per tree the median of the rounds' figures and the ratio this/baseline per round. Prints figures and
writes ``results/bench/runs/pod_cycle-<UTC start>.json`` (``--results ''``: none).

    python bench/bench_pod_cycle.py --sizes 500,5000 --baseline-tree /tmp/base --rounds 4
    python bench/bench_pod_cycle.py --sizes 5000 --profile /tmp/cycle.prof    # cProfile of one worker
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy, as the extender serves
import numpy as np  # noqa: E402
from record import commit_of, load_average, refuse_existing, run_path  # noqa: E402  (bench/ is on the path)
from record import write as write_results  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
STEPS = ("pod_added", "filter", "prioritize", "bind_events", "heartbeats")


def _pod(i: int, node: str | None, phase: str) -> dict:
    pod = {
        "metadata": {"name": f"cycle-{i}", "namespace": "bench", "uid": f"cycle-uid-{i}",
                     "resourceVersion": str(1000 + i),
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "cycle-6f7d",
                                          "uid": "rs-uid", "controller": True}],
                     "annotations": {"drsched.io/profile": "cpu=1,mem=2,net=100,disk=20"}},
        "spec": {"schedulerName": "drsched",
                 "containers": [{"name": "main", "image": "busybox",
                                 "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]},
        "status": {"phase": phase},
    }
    if node is not None:
        pod["spec"]["nodeName"] = node
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True",
                                        "lastTransitionTime": "2026-12-07T16:30:00Z"}]
    return pod


def worker(n: int, pods: int, warmup: int, heartbeats: int, policy: str, profile: str | None, usage: bool) -> dict:
    """Median process CPU (ms) of each step of one scheduled pod, in this checkout's code."""
    from bench_extender import write_cluster

    from extender.fastwire import answer, parse_args
    from extender.heap import keep_freed_memory
    from extender.kube import apply_node_event, apply_pod_event
    from extender.runtime import Runtime, load_policy
    from extender.settings import build_settings
    from extender.static_cluster import load_static_cluster, to_samples
    from extender.telemetry import Telemetry
    from kube.cache import ClusterCache

    keep_freed_memory()
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Path(tmp) / "cluster.yaml"
        v1_nodes = write_cluster(cluster, n)
        settings = build_settings(static_cluster=str(cluster), policy=policy, log_level="WARNING")
        static = load_static_cluster(cluster, default_net_mbps=1250, default_disk_mbps=500)
    cache = ClusterCache()
    cache.replace_nodes(static.nodes)
    cache.replace_pods(static.pods)
    if usage:
        cache.apply_usage(to_samples(static.usage, time.time()))
    telemetry = Telemetry()
    rt = Runtime(settings=settings, cache=cache, telemetry=telemetry, policy=load_policy(settings, telemetry)[0])
    nodes = {node["metadata"]["name"]: node for node in v1_nodes}
    for node in v1_nodes:  # as the watch's list gave them: a heartbeat then changes no row, as in KWOK
        apply_node_event(cache, settings, "ADDED", node)
    names = list(cache.node_names)
    filter_body = None
    cpu = {step: np.empty(pods) for step in STEPS}
    prof = None
    if profile:
        import cProfile
        prof = cProfile.Profile()
    clock = time.process_time
    beat = 0
    faults = 0
    for i in range(pods + warmup):
        timed = i >= warmup
        if prof is not None and i == warmup:
            prof.enable()
        if i == warmup:
            faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        pending = _pod(i, None, "Pending")
        t0 = clock()
        apply_pod_event(cache, settings, "ADDED", pending)
        t1 = clock()
        filter_body = json.dumps({"Pod": pending, "Nodes": None, "NodeNames": names}).encode()
        t2 = clock()
        _, status, reply = answer(rt, "filter", parse_args(filter_body))
        t3 = clock()
        passed = json.loads(reply)["NodeNames"]
        if status != 200:
            raise SystemExit(f"filter answered {status}")
        prio_body = json.dumps({"Pod": pending, "Nodes": None, "NodeNames": passed}).encode()
        t4 = clock()
        _, status, reply = answer(rt, "prioritize", parse_args(prio_body))
        t5 = clock()
        if status != 200:
            raise SystemExit(f"prioritize answered {status}")
        scores = json.loads(reply)
        best = max(scores, key=lambda h: h["Score"])["Host"]
        bound, running = _pod(i, best, "Pending"), _pod(i, best, "Running")
        t6 = clock()
        apply_pod_event(cache, settings, "MODIFIED", bound)
        apply_pod_event(cache, settings, "MODIFIED", running)
        t7 = clock()
        beats = []
        for _ in range(heartbeats):
            node = nodes[names[beat % len(names)]]
            beat += 1
            for cond in node["status"]["conditions"]:
                cond["lastHeartbeatTime"] = f"2026-12-07T16:{beat // 60 % 60:02d}:{beat % 60:02d}Z"
            node["metadata"]["resourceVersion"] = str(5_000_000 + beat)
            beats.append(json.loads(json.dumps(node)))  # a fresh dict per event, as the watch decodes one
        t8 = clock()
        for node in beats:
            apply_node_event(cache, settings, "MODIFIED", node)
        t9 = clock()
        if timed:
            k = i - warmup
            cpu["pod_added"][k] = t1 - t0
            cpu["filter"][k] = t3 - t2
            cpu["prioritize"][k] = t5 - t4
            cpu["bind_events"][k] = t7 - t6
            cpu["heartbeats"][k] = t9 - t8
    if prof is not None:
        prof.disable()
        prof.dump_stats(profile)
    out = {step: float(np.median(v)) * 1000.0 for step, v in cpu.items()}
    out["per_pod"] = float(np.median(sum(cpu.values()))) * 1000.0
    out["per_pod_mean"] = float(np.mean(sum(cpu.values()))) * 1000.0
    out["minor_faults_per_pod"] = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / pods
    return out


def run_worker(tree: Path, args: argparse.Namespace, n: int) -> dict:
    cmd = [sys.executable, str(ROOT / "bench" / "bench_pod_cycle.py"), "--worker", str(n),
           "--pods", str(args.pods), "--warmup", str(args.warmup), "--heartbeats", str(args.heartbeats),
           "--policy", args.policy, "--usage" if args.usage else "--no-usage"]
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{ROOT / 'bench'}"}
    out = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"worker in {tree} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--sizes", default="500,5000", help="comma-separated node counts")
    p.add_argument("--pods", type=int, default=200, help="timed pods per worker")
    p.add_argument("--warmup", type=int, default=20, help="untimed pods first")
    p.add_argument("--heartbeats", type=int, default=8, help="node heartbeat events per scheduled pod")
    p.add_argument("--policy", default="model", help="policy to serve")
    p.add_argument("--usage", action=argparse.BooleanOptionalAction, default=True,
                   help="usage samples in the cache (--no-usage: none, as bench_scheduler.py runs: no node hot)")
    p.add_argument("--baseline-tree", type=Path, help="another checkout, run alternating with this one")
    p.add_argument("--rounds", type=int, default=1, help="workers per size and tree")
    p.add_argument("--results", help="figures file ('' = none; default results/bench/runs/pod_cycle-<UTC>.json)")
    p.add_argument("--profile", help="cProfile one worker of this tree (first size) to this file, no record")
    p.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.pods, args.warmup, args.heartbeats, args.policy, args.profile,
                                args.usage)))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.profile:
        print(json.dumps(worker(sizes[0], args.pods, args.warmup, args.heartbeats, args.policy, args.profile,
                                args.usage)))
        return 0
    results = run_path("pod_cycle") if args.results is None else args.results
    refuse_existing(results)
    load_before = load_average()
    trees = {"this": ROOT}
    if args.baseline_tree:
        trees["baseline"] = args.baseline_tree.resolve()
    figures: dict = {"sizes": {}, "pods": args.pods, "heartbeats": args.heartbeats, "policy": args.policy,
                     "usage": args.usage,
                     "trees": {k: {"path": str(v), "commit": commit_of(v)} for k, v in trees.items()}}
    for n in sizes:
        rounds = []
        for r in range(args.rounds):
            order = list(trees) if r % 2 == 0 else list(reversed(trees))
            rounds.append({name: run_worker(trees[name], args, n) for name in order})
            print(f"{n} nodes round {r + 1}: " + "  ".join(
                f"{name} " + " ".join(f"{k}={v:.3f}" for k, v in rounds[-1][name].items()) for name in trees),
                flush=True)
        summary = {name: {k: float(np.median([rd[name][k] for rd in rounds])) for k in rounds[0][name]}
                   for name in trees}
        if "baseline" in trees:
            summary["ratio_per_round"] = {k: [rd["this"][k] / rd["baseline"][k] for rd in rounds]
                                          for k in rounds[0]["this"] if all(rd["baseline"][k] > 0 for rd in rounds)}
        figures["sizes"][str(n)] = {"rounds": rounds, "median": summary}
        print(json.dumps({n: summary}, indent=1), flush=True)
    path = write_results(results, figures, load_before=load_before, overwrite=False)
    if path:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
