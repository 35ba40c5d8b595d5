"""Stock kube-scheduler throughput with and without the drsched extender, on one real control plane.

One run: the local control plane of `harness.cluster` (etcd, kube-apiserver without request limits, KWOK)
with ``--nodes`` KWOK nodes. Twice, ``--pods`` pods with ``schedulerName: drsched`` are created while
no drsched scheduler runs (a thread pool of ``--threads`` clients); then a kube-scheduler with
kube-scheduler-config/drsched-scheduler.yaml starts and the clock runs from its /readyz until the last
pod is bound. ``without``: the same config with ``extenders`` removed. ``with``: the real extender
(``python -m extender --kubeconfig``, ``--policy``) behind it. Both raise the scheduler's client QPS
(``clientConnection.qps/burst``), or the Binding POSTs would cap throughput at 50/s. The pods of the
first run are deleted before the second, so both see empty nodes.

Reported: pods/s for each, their ratio (target >= 0.7) and the extender's p50/p99 handling time per
verb during the run (its ``drsched_extender_request_seconds`` histogram, interpolated as PromQL's
histogram_quantile). Prints figures; asserts nothing.

    python bench/bench_scheduler.py                          # 500 nodes x 2,000 pods
    python bench/bench_scheduler.py --nodes 100 --pods 300   # a quick look
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from harness.cluster import ControlPlane, ensure_binaries
from harness.extender_proc import ExtenderProcess, histogram_quantile, sum_samples
from harness.objects import NodeShape, fake_node, small_pod

TARGET_RATIO = 0.7
SCHEDULER = "drsched-scheduler"


def render_config(cp: ControlPlane, *, extender_url: str | None, qps: int) -> Path:
    """kube-scheduler-config/drsched-scheduler.yaml for this cluster; no extenders when no URL."""
    path = cp.render_scheduler_config("drsched-scheduler.yaml", extender_url=extender_url or "http://127.0.0.1:1")
    config = yaml.safe_load(path.read_text())
    config["clientConnection"].update(qps=qps, burst=2 * qps)
    if extender_url is None:
        config.pop("extenders")
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def create_nodes(cp: ControlPlane, n: int, threads: int) -> None:
    shapes = [NodeShape(f"bench-{i:04d}", cpu=str((8, 16, 32)[i % 3]), memory=f"{(8, 16, 32)[i % 3] * 4}Gi")
              for i in range(n)]
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda s: cp.create_node(fake_node(s), timeout=120), shapes))


def create_pods(cp: ControlPlane, namespace: str, n: int, threads: int) -> float:
    cp.create_namespace(namespace)
    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda i: cp.create_pod(small_pod(f"p-{i:05d}", scheduler_name="drsched", cpu="100m",
                                                        memory="128Mi"), namespace=namespace), range(n)))
    return n / (time.perf_counter() - start)


def unbound(cp: ControlPlane, namespace: str) -> int:
    resp = cp.core.list_namespaced_pod(namespace, field_selector="spec.nodeName=", _preload_content=False)
    return len(json.loads(resp.data)["items"])


def schedule_all(cp: ControlPlane, config: Path, namespace: str, n: int, timeout: float) -> float:
    """Start the drsched scheduler on the waiting pods; seconds from its /readyz until none is unbound."""
    cp.start_scheduler(SCHEDULER, config_path=config)
    start = time.perf_counter()
    deadline = start + timeout
    while (left := unbound(cp, namespace)) > 0:
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{left} of {n} pods still unbound after {timeout:.0f}s")
        time.sleep(0.25)
    elapsed = time.perf_counter() - start
    cp.stop_component(SCHEDULER)
    return elapsed


def delete_pods(cp: ControlPlane, namespace: str) -> None:
    cp.core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
    cp.poll(lambda: not cp.core.list_namespaced_pod(namespace, limit=1).items or None, timeout=300,
            what=f"pods of {namespace} deleted")


def run(args: argparse.Namespace, workdir: Path) -> dict:
    cp = ControlPlane(workdir=workdir, binaries=ensure_binaries())
    ext: ExtenderProcess | None = None
    try:
        cp.start()
        t = time.perf_counter()
        create_nodes(cp, args.nodes, args.threads)
        print(f"{args.nodes} nodes Ready in {time.perf_counter() - t:.1f}s", flush=True)

        rate = create_pods(cp, "bench-without", args.pods, args.threads)
        print(f"{args.pods} pods created at {rate:.0f}/s", flush=True)
        without = schedule_all(cp, render_config(cp, extender_url=None, qps=args.qps), "bench-without", args.pods,
                               args.timeout)
        delete_pods(cp, "bench-without")

        ext = ExtenderProcess(kubeconfig=cp.kubeconfig, log_path=workdir / "extender.log", policy=args.policy)
        ext.start()
        create_pods(cp, "bench-with", args.pods, args.threads)
        with_ext = schedule_all(cp, render_config(cp, extender_url=ext.url, qps=args.qps), "bench-with", args.pods,
                                args.timeout)
        metrics = ext.metrics()
        latency = {verb: (histogram_quantile(metrics, "drsched_extender_request_seconds", 0.5, verb=verb),
                          histogram_quantile(metrics, "drsched_extender_request_seconds", 0.99, verb=verb),
                          sum_samples(metrics, "drsched_extender_request_seconds_count", verb=verb))
                   for verb in ("filter", "prioritize")}
    finally:
        if ext is not None:
            ext.stop()
        cp.close()
    return {"without": args.pods / without, "with": args.pods / with_ext, "latency": latency}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--nodes", type=int, default=500, help="KWOK nodes (default 500)")
    parser.add_argument("--pods", type=int, default=2000, help="pods scheduled per run (default 2000)")
    parser.add_argument("--threads", type=int, default=10,
                        help="client threads creating objects (default 10, the API client's pool size)")
    parser.add_argument("--qps", type=int, default=1000, help="scheduler clientConnection.qps; burst = 2x")
    parser.add_argument("--policy", default="model", help="extender --policy (default model)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds allowed to schedule one run")
    parser.add_argument("--workdir", type=Path, default=None, help="keep logs here (default: a temp dir)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        result = run(args, args.workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="bench-scheduler-") as tmp:
            result = run(args, Path(tmp))

    ratio = result["with"] / result["without"]
    print(f"\n{args.nodes} nodes x {args.pods} pods, stock kube-scheduler, percentageOfNodesToScore 100")
    print(f"  without extender: {result['without']:8.1f} pods/s")
    print(f"  with extender:    {result['with']:8.1f} pods/s   (policy {args.policy})")
    print(f"  ratio:            {ratio:8.2f}        (target >= {TARGET_RATIO}: {'met' if ratio >= TARGET_RATIO else 'MISSED'})")
    for verb, (p50, p99, count) in result["latency"].items():
        fmt = lambda x: "-" if x is None else f"{1000 * x:.2f} ms"  # noqa: E731
        print(f"  extender {verb:<10}  p50 {fmt(p50):>9}  p99 {fmt(p99):>9}  ({count:.0f} requests)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
