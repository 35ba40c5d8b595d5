"""Stock kube-scheduler throughput with no extender, a no-op extender and drsched, on one real control plane.

One run: the local control plane of `harness.cluster` ( etcd, kube-apiserver without request limits, KWOK)
with ``--nodes`` KWOK nodes, then three arms in turn on the same cluster. Each creates ``--pods`` pods
with ``schedulerName: drsched`` while no drsched scheduler runs (a thread pool of ``--threads``
clients); then a kube-scheduler with kube-scheduler-config/drsched-scheduler.yaml starts and the clock
runs from its /readyz until the last pod is bound; the pods are deleted before the next arm, so each
sees empty nodes. ``no extender``: that config with ``extenders`` removed. ``no-op extender``:
bench/noop_extender.py (every node passes, every score 0; raw ASGI, uvloop, httptools, orjson), the
price of the extender mechanism itself. ``drsched``: the real extender (``python -m extender
--kubeconfig``, ``--policy``). All raise the scheduler's client QPS (``clientConnection.qps/burst``), or
the Binding POSTs would cap throughput at 50/s.

Reported: pods/s per arm, drsched's ratio to no extender (target >= 0.7) and to the no-op extender
(``ratio to no-op extender: X.XX``, target >= 0.85); per arm the CPU-seconds per scheduled pod of the
extender, kube-scheduler, kube-apiserver, etcd and KWOK (utime + stime from /proc/<pid>/stat over the
arm's window); the extender's time per verb from request arrival to encoded reply, parsing included
(drsched: its ``drsched_extender_request_seconds`` histogram, p50/p99 interpolated as PromQL's
histogram_quantile; no-op: its own /stats). Prints figures; asserts nothing.

    python bench/bench_scheduler.py                          # 500 nodes x 2,000 pods
    python bench/bench_scheduler.py --nodes 100 --pods 300   # a quick look
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml
from record import RESULTS, load_average  # (bench/ is on the path: run as a script)
from record import write as write_results

from harness.cluster import ControlPlane, ensure_binaries
from harness.extender_proc import ExtenderProcess, histogram_quantile, sum_samples
from harness.objects import KwokNodeShape, fake_node, small_pod
from harness.procs import Component, free_port

ROOT = Path(__file__).resolve().parent.parent

TARGET_RATIO = 0.7
TARGET_NOOP_RATIO = 0.85
SCHEDULER = "drsched-scheduler"
PROCESSES = ("extender", "kube-scheduler", "kube-apiserver", "etcd", "kwok")
_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int | None) -> float:
    """utime + stime of a live process, from /proc/<pid>/stat (0 when there is no such process)."""
    if pid is None:
        return 0.0
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2:].split()  # after "(comm)": field 3 onwards
    return (int(fields[11]) + int(fields[12])) / _TICK


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
    shapes = [KwokNodeShape(f"bench-{i:04d}", cpu=str((8, 16, 32)[i % 3]), memory=f"{(8, 16, 32)[i % 3] * 4}Gi")
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


class NoopProcess:
    """bench/noop_extender.py as a harness component on a free port."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.component = Component(name="noop-extender", log_path=workdir / "noop-extender.log",
                                   argv=[sys.executable, str(ROOT / "bench" / "noop_extender.py"),
                                         f"--port={self.port}"])

    def start(self) -> NoopProcess:
        self.component.start()
        self.component.wait_ready(lambda: self.get("/healthz") is not None, timeout=60)
        return self

    def get(self, path: str):
        try:
            with urllib.request.urlopen(self.url + path, timeout=5) as resp:  # noqa: S310
                return json.loads(resp.read())
        except OSError:
            return None

    def stop(self) -> None:
        self.component.stop()


def schedule_all(cp: ControlPlane, config: Path, namespace: str, n: int, timeout: float,
                 extender_pid: int | None) -> dict:
    """Start the drsched scheduler on the waiting pods; seconds from its /readyz until none is unbound, and
    the CPU-seconds each process spent in that window."""
    scheduler = cp.start_scheduler(SCHEDULER, config_path=config)
    pids = {"extender": extender_pid, "kube-scheduler": scheduler.proc.pid,
            **{name: cp.components[name].proc.pid for name in ("kube-apiserver", "etcd", "kwok")}}
    cpu0 = {name: cpu_seconds(pid) for name, pid in pids.items()}
    start = time.perf_counter()
    deadline = start + timeout
    while (left := unbound(cp, namespace)) > 0:
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{left} of {n} pods still unbound after {timeout:.0f}s")
        time.sleep(0.25)
    elapsed = time.perf_counter() - start
    cpu = {name: cpu_seconds(pid) - cpu0[name] for name, pid in pids.items()}
    cp.stop_component(SCHEDULER)
    return {"pods_s": n / elapsed, "cpu_per_pod": {k: v / n for k, v in cpu.items()}}


def delete_pods(cp: ControlPlane, namespace: str) -> None:
    """Delete the arm's pods, in pages: one DeleteCollection of 2,000 pods outlasts the apiserver's 60 s
    request timeout on a busy machine (504)."""
    from kubernetes.client.exceptions import ApiException

    def gone() -> bool | None:
        try:
            cp.core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0, limit=250)
        except ApiException as exc:
            if exc.status is None or exc.status < 500:
                raise
        return not cp.core.list_namespaced_pod(namespace, limit=1).items or None

    cp.poll(gone, timeout=600, what=f"pods of {namespace} deleted")


class BaselineExtender(ExtenderProcess):
    """The extender of another checkout (``--baseline-tree``), to compare a change within one run."""

    tree: Path = ROOT

    def argv(self) -> list[str]:
        boot = (f"import runpy, sys; sys.path.insert(0, {str(self.tree)!r}); "
                "runpy.run_module('extender', run_name='__main__', alter_sys=True)")
        return [sys.executable, "-c", boot, *super().argv()[3:]]


def run_arm(cp: ControlPlane, args: argparse.Namespace, namespace: str, url: str | None,
            pid: int | None) -> dict:
    create_pods(cp, namespace, args.pods, args.threads)
    result = schedule_all(cp, render_config(cp, extender_url=url, qps=args.qps), namespace, args.pods,
                          args.timeout, pid)
    delete_pods(cp, namespace)
    print(f"  {namespace}: {result['pods_s']:.1f} pods/s", flush=True)
    return result


def drsched_latency(ext: ExtenderProcess) -> dict:
    metrics = ext.metrics()
    out = {}
    for verb in ("filter", "prioritize"):
        count = sum_samples(metrics, "drsched_extender_request_seconds_count", verb=verb)
        total = sum_samples(metrics, "drsched_extender_request_seconds_sum", verb=verb)
        out[verb] = (histogram_quantile(metrics, "drsched_extender_request_seconds", 0.5, verb=verb),
                     histogram_quantile(metrics, "drsched_extender_request_seconds", 0.99, verb=verb),
                     total / count if count else None, count)
    return out


def run(args: argparse.Namespace, workdir: Path) -> dict:
    cp = ControlPlane(workdir=workdir, binaries=ensure_binaries())
    ext: ExtenderProcess | None = None
    noop: NoopProcess | None = None
    arms: dict[str, dict] = {}
    try:
        cp.start()
        t = time.perf_counter()
        create_nodes(cp, args.nodes, args.threads)
        print(f"{args.nodes} nodes Ready in {time.perf_counter() - t:.1f}s", flush=True)

        arms["no extender"] = run_arm(cp, args, "bench-without", None, None)

        noop = NoopProcess(workdir).start()
        arms["no-op extender"] = run_arm(cp, args, "bench-noop", noop.url, noop.component.proc.pid)
        stats = noop.get("/stats") or {}
        arms["no-op extender"]["latency"] = {v: (s["p50_s"], s["p99_s"], s["sum_s"] / max(s["count"], 1), s["count"])
                                             for v, s in stats.items()}
        noop.stop()

        if args.baseline_tree is not None:
            base = BaselineExtender(kubeconfig=cp.kubeconfig, log_path=workdir / "extender-baseline.log",
                                    policy=args.policy)
            base.tree = args.baseline_tree.resolve()
            try:
                base.start()
                arms["drsched, baseline tree"] = run_arm(cp, args, "bench-baseline", base.url,
                                                         base.component.proc.pid)
                arms["drsched, baseline tree"]["latency"] = drsched_latency(base)
            finally:
                base.stop()

        ext = ExtenderProcess(kubeconfig=cp.kubeconfig, log_path=workdir / "extender.log", policy=args.policy)
        ext.start()
        arms["drsched"] = run_arm(cp, args, "bench-with", ext.url, ext.component.proc.pid)
        arms["drsched"]["latency"] = drsched_latency(ext)
    finally:
        if noop is not None:
            noop.stop()
        if ext is not None:
            ext.stop()
        cp.close()
    return arms


def report(args: argparse.Namespace, arms: dict) -> None:
    without, noop, drsched = (arms[k]["pods_s"] for k in ("no extender", "no-op extender", "drsched"))
    ratio, noop_ratio = drsched / without, drsched / noop
    print(f"\n{args.nodes} nodes x {args.pods} pods, stock kube-scheduler, percentageOfNodesToScore 100")
    print(f"  without extender: {without:8.1f} pods/s")
    print(f"  no-op extender:   {noop:8.1f} pods/s   ({noop / without:.2f} of no extender)")
    print(f"  with extender:    {drsched:8.1f} pods/s   (policy {args.policy})")
    verdict = "met" if ratio >= TARGET_RATIO else "MISSED"
    print(f"  ratio:            {ratio:8.2f}        (target >= {TARGET_RATIO}: {verdict})")
    print(f"ratio to no-op extender: {noop_ratio:.2f}")
    print(f"  (target >= {TARGET_NOOP_RATIO}: {'met' if noop_ratio >= TARGET_NOOP_RATIO else 'MISSED'})")
    if "drsched, baseline tree" in arms:
        base = arms["drsched, baseline tree"]["pods_s"]
        print(f"  baseline tree ({args.baseline_tree}): {base:.1f} pods/s, {base / noop:.2f} of the no-op extender")
    print("\n  CPU ms per scheduled pod  " + " ".join(f"{p:>14}" for p in PROCESSES) + f" {'total':>8}")
    for arm, res in arms.items():
        cpu = res["cpu_per_pod"]
        print(f"  {arm:<25} " + " ".join(f"{1000 * cpu[p]:>14.2f}" for p in PROCESSES)
              + f" {1000 * sum(cpu.values()):>8.2f}")
    fmt = lambda x: "-" if x is None else f"{1000 * x:.2f} ms"  # noqa: E731
    print("\n  extender time per verb, arrival to encoded reply (parsing included)")
    for arm in [a for a in arms if "latency" in arms[a]]:
        for verb, (p50, p99, mean, count) in arms[arm]["latency"].items():
            print(f"  {arm:<22} {verb:<10}  p50 {fmt(p50):>9}  p99 {fmt(p99):>9}  mean {fmt(mean):>9}"
                  f"  ({count:.0f} requests)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--nodes", type=int, default=500, help="KWOK nodes (default 500)")
    parser.add_argument("--pods", type=int, default=2000, help="pods scheduled per arm (default 2000)")
    parser.add_argument("--threads", type=int, default=10,
                        help="client threads creating objects (default 10, the API client's pool size)")
    parser.add_argument("--qps", type=int, default=1000, help="scheduler clientConnection.qps; burst = 2x")
    parser.add_argument("--policy", default="model", help="extender --policy (default model)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds allowed to schedule one arm")
    parser.add_argument("--workdir", type=Path, default=None, help="keep logs here (default: a temp dir)")
    parser.add_argument("--baseline-tree", type=Path, default=None,
                        help="also run the extender of this checkout (e.g. `git worktree add DIR <commit>`) as an "
                             "arm before drsched's, to measure a change within one run")
    parser.add_argument("--results", default=str(RESULTS / "scheduler.json"),
                        help="write the figures here for the README's table ('' = do not write)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    load_before = load_average()
    print(f"load average before: {Path('/proc/loadavg').read_text().strip()}", flush=True)
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        arms = run(args, args.workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="bench-scheduler-") as tmp:
            arms = run(args, Path(tmp))
    report(args, arms)
    print(f"load average after: {Path('/proc/loadavg').read_text().strip()}")
    write_results(args.results, {"nodes": args.nodes, "pods": args.pods, "policy": args.policy,
                                 "ratio_to_no_extender": arms["drsched"]["pods_s"] / arms["no extender"]["pods_s"],
                                 "ratio_to_noop": arms["drsched"]["pods_s"] / arms["no-op extender"]["pods_s"],
                                 "arms": arms}, load_before=load_before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
