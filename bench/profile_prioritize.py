"""Where one prioritize spends its time, stage by stage, in-process (no HTTP), on a static cluster.

The stages are those of ``extender.fastwire`` + ``Runtime.prioritize`` in nodeCacheCapable mode, run in
the same order on the same objects, each timed with ``perf_counter``: parse the body (orjson + shape
check), the pod's view (requests, profile), the cache view and the candidates' rows, the cluster
snapshot, ``policy.features.encode``, the Q-network, the 0-10 scores, the encoded reply. ``whole`` is
``fastwire.answer`` end to end; ``churn`` is the same with a pod bound into the cache before each run,
as in a live cluster where every bind and usage poll makes a new cache view (what is kept per view is
rebuilt then). p50 over ``--requests`` runs, in ms. Prints figures; asserts nothing.

    python bench/profile_prioritize.py                  # 500 and 5,000 nodes
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the extender serves
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

from bench_extender import POD, write_cluster  # noqa: E402  (run as a script: bench/ is on the path)

from extender.decide import to_extender_scores  # noqa: E402
from extender.fastwire import answer, parse_args  # noqa: E402
from extender.heap import keep_freed_memory  # noqa: E402
from extender.runtime import Runtime, load_policy  # noqa: E402
from extender.settings import build_settings  # noqa: E402
from extender.static_cluster import load_static_cluster, to_samples  # noqa: E402
from extender.telemetry import Telemetry  # noqa: E402
from kube.cache import ClusterCache, PodRecord  # noqa: E402
from policy.features import encode, usage_is_fresh  # noqa: E402

STAGES = ("parse", "pod view", "view + rows", "snapshot", "encode", "Q-network", "scores", "reply")


def runtime_for(n: int, tmp: Path, policy: str) -> tuple[Runtime, bytes]:
    cluster = tmp / f"cluster-{n}.yaml"
    nodes = write_cluster(cluster, n)
    settings = build_settings(static_cluster=str(cluster), policy=policy, log_level="WARNING")
    static = load_static_cluster(cluster, default_net_mbps=1250, default_disk_mbps=500)
    cache = ClusterCache()
    cache.replace_nodes(static.nodes)
    cache.replace_pods(static.pods)
    cache.apply_usage(to_samples(static.usage, time.time()))
    telemetry = Telemetry()
    rt = Runtime(settings=settings, cache=cache, telemetry=telemetry, policy=load_policy(settings, telemetry)[0])
    body = json.dumps({"Pod": POD, "Nodes": None, "NodeNames": [x["metadata"]["name"] for x in nodes]}).encode()
    return rt, body


def stages(rt: Runtime, body: bytes) -> list[float]:
    t = [time.perf_counter()]
    args = parse_args(body)
    t.append(time.perf_counter())
    pod, _ = rt.pod_view(args.Pod)
    t.append(time.perf_counter())
    view = rt.cache.view()
    rows = view.lookup(list(args.NodeNames))
    t.append(time.perf_counter())
    now = time.time()
    snap = view.snapshot(now)
    t.append(time.perf_counter())
    enc = encode(snap, pod, max_usage_age=rt.settings.max_usage_age_s)
    t.append(time.perf_counter())
    raw = rt.policy.raw(snap, pod, enc)[rows]
    t.append(time.perf_counter())
    scores = to_extender_scores(raw, enc.mask[rows])
    _stale = ~usage_is_fresh(snap, rt.settings.max_usage_age_s)[rows]  # prioritize counts stale candidates
    t.append(time.perf_counter())
    _reply = rt.replies.reply(view, args.NodeNames, scores.tolist())
    t.append(time.perf_counter())
    return np.diff(t).tolist()


def bind(rt: Runtime, i: int) -> None:
    """One more pod on a node, as a bind or a watch event puts it into the cache (a new view follows)."""
    names = rt.cache.node_names
    rt.cache.upsert_pod(PodRecord(namespace="churn", name=f"c{i}", uid=f"churn-{i}", node=names[i % len(names)],
                                  requests=np.array([0.01, 0.01]), demand=np.zeros(4), demand_source="requests",
                                  bound_at=time.time()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="500,5000", help="comma-separated node counts")
    parser.add_argument("--requests", type=int, default=300, help="timed runs per size")
    parser.add_argument("--policy", default="model", help="policy to serve")
    args = parser.parse_args(argv)
    keep_freed_memory()
    print(f"load average before: {Path('/proc/loadavg').read_text().strip()}")
    print(f"{'nodes':>6} | " + " | ".join(f"{s:>11}" for s in STAGES) + f" | {'sum':>6} | {'whole':>6} | "
          f"{'churn':>6}   (ms, p50)")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            rt, body = runtime_for(n, Path(tmp), args.policy)
            for _ in range(20):
                stages(rt, body)
                answer(rt, "prioritize", parse_args(body))
            per_stage = np.array([stages(rt, body) for _ in range(args.requests)]) * 1000
            whole, churn = [], []
            for i in range(args.requests):
                start = time.perf_counter()
                answer(rt, "prioritize", parse_args(body))
                whole.append((time.perf_counter() - start) * 1000)
                bind(rt, i)
                start = time.perf_counter()
                answer(rt, "prioritize", parse_args(body))
                churn.append((time.perf_counter() - start) * 1000)
            p50 = np.percentile(per_stage, 50, axis=0)
            print(f"{n:>6} | " + " | ".join(f"{x:>11.3f}" for x in p50)
                  + f" | {p50.sum():>6.2f} | {np.percentile(whole, 50):>6.2f} | {np.percentile(churn, 50):>6.2f}",
                  flush=True)
    print(f"load average after: {Path('/proc/loadavg').read_text().strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
