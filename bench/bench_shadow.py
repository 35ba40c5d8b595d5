"""What shadow mode and the decision log cost, in-process, each against its baseline in the same run.

* Shadow, per bound pod: the extender CPU (``time.process_time``: the watch thread and the log writer
  together) of applying a pod's two watch events (pending, then bound by another scheduler) with shadow
  mode and the decision log on, minus the same events without them. Target: <= 1 ms at 1,000 nodes.
* The decision log on the request path: ``Runtime.prioritize`` with the log on minus with it off (p50),
  back to back (the writer competes for the GIL and the cores) and paced as kube-scheduler calls (one pod
  a round trip apart: the writer runs in between), and the ``Recording.serve`` call alone (p50 / p99:
  queueing the row; its encoding is the writer thread's, in the process CPU per call). Target: <= 0.1 ms.

    python bench/bench_shadow.py --nodes 1000 --pods 300          # the served model (policy/models/default)

``--baseline-tree DIR`` measures the shadow cost alone (no request path) of this checkout and of another
(``git worktree add --detach DIR main``), each pass in its own process whose ``extender``, ``kube`` and
``policy`` come from its tree, alternating over ``--rounds`` rounds (ABAB..., which goes first alternating
too, as ``bench_watch`` does), and prints the ratio this / baseline per round, its median and range: a change
measured against its baseline in the same run. A pass runs on a fixed clock (``time.time`` constant), so both
trees write the same rows when they compute the same thing; each pass reports a digest of its decision log,
and the run says whether every pass wrote the same rows.

    taskset -c 0 nice -n 19 python bench/bench_shadow.py --nodes 1000 --pods 300 --rounds 9 \
        --baseline-tree /tmp/shadow-base

``--profile`` says where a shadowed binding's time goes instead: ``cProfile`` over the watch thread's work (the
two events, the shadow included), then over building and encoding the rows it queued (the log writer's work,
done here on the same thread), each listed by cumulative time; it writes no figures.

Every pass tunes the heap as the extender does at start (``extender.heap.keep_freed_memory``), so the figures
are the served process's; runs before 2026-12-07 18:00 UTC did not, and paid a page fault per freed buffer page.

Prints figures and writes them to ``results/bench/runs/shadow-<UTC start>.json`` (``bench/record.py``: the
command, the load around the run, the commit; ``--results ''`` writes none); asserts nothing. On a shared
machine compare within one run.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the extender serves
FIXED_CLOCK = 1_765_000_000.0
"""``time.time`` of a ``--one-pass`` process (set before the extender is imported: its defaults bind it), so that
two checkouts computing the same thing write the same rows (usage ages, Q-values, timestamps)."""
if "--one-pass" in sys.argv:
    time.time = lambda: FIXED_CLOCK
import numpy as np  # noqa: E402
import record  # noqa: E402  (run as a script: bench/ is on the path)
from bench_extender import POD, write_cluster  # noqa: E402

from extender.heap import keep_freed_memory  # noqa: E402
from extender.kube_index import IndexingWatcher  # noqa: E402
from extender.pod_index import PodIndex  # noqa: E402
from extender.recording import Recording  # noqa: E402
from extender.runtime import Runtime, load_policy  # noqa: E402
from extender.settings import build_settings  # noqa: E402
from extender.static_cluster import load_static_cluster, to_samples  # noqa: E402
from extender.telemetry import Telemetry  # noqa: E402
from extender.wire import ExtenderArgs  # noqa: E402
from kube.cache import ClusterCache  # noqa: E402

PACE_S = 0.005
ROOT = Path(__file__).resolve().parent.parent


def cache_for(cluster: Path) -> ClusterCache:
    static = load_static_cluster(cluster, default_net_mbps=1250, default_disk_mbps=500)
    cache = ClusterCache()
    cache.replace_nodes(static.nodes)
    cache.replace_pods(static.pods)
    cache.apply_usage(to_samples(static.usage, time.time()))
    return cache


def pods(n: int, names: list[str], tag: str) -> list[tuple[dict, dict]]:
    out = []
    for i in range(n):
        pending = copy.deepcopy(POD)
        pending["metadata"].update(name=f"{tag}-{i}", uid=f"{tag}-uid-{i}")
        pending["spec"]["schedulerName"] = "default-scheduler"
        bound = copy.deepcopy(pending)
        bound["spec"]["nodeName"] = names[(i * 7919) % len(names)]
        bound["status"]["phase"] = "Running"
        out.append((pending, bound))
    return out


def watch_cpu(cluster: Path, names: list[str], n: int, tmp: Path, *, shadow: bool, policy: str,
              log_nodes: int = 0) -> tuple[float, dict]:
    """Process CPU seconds per bound pod of the two watch events, with or without shadow + log."""
    s = build_settings(kubeconfig="/dev/null", policy=policy, log_level="WARNING", shadow=shadow,
                       decision_log_dir=str(tmp) if shadow else None, decision_log_nodes=log_nodes)
    cache, telemetry = cache_for(cluster), Telemetry()
    policy_, _ = load_policy(s, telemetry)
    rec = Recording(s, cache=cache, policy=policy_, telemetry=telemetry,
                    thresholds=Runtime(settings=s, cache=cache, telemetry=telemetry, policy=policy_).thresholds)
    watcher = IndexingWatcher(None, cache, s, store=None, telemetry=telemetry, index=PodIndex(selector={}, port=1),
                              observer=rec.observe_pod if shadow else None)
    rec.start()
    events = pods(n, names, "shadow" if shadow else "plain")
    start = time.process_time()
    for pending, bound in events:
        watcher._apply("pods", "ADDED", pending)
        watcher._apply("pods", "MODIFIED", bound)
    rec.log and rec.log.stop()  # the writer's encoding counts: it is extender CPU too
    per_pod = (time.process_time() - start) / n
    return per_pod, rec.summary()


def log_digest(directory: Path) -> str:
    """A digest of every row the decision log in ``directory`` holds, in order."""
    h = hashlib.sha256()
    for seg in sorted(directory.glob("decisions-*.jsonl")):
        h.update(seg.read_bytes())
    return h.hexdigest()[:16]


def one_pass(nodes: int, n: int, policy: str) -> dict:
    """The shadow cost of this process's checkout: CPU ms per bound pod with shadow + log less without, and the
    digest of the rows written."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cluster = tmp / "cluster.yaml"
        names = [x["metadata"]["name"] for x in write_cluster(cluster, nodes)]
        base, _ = watch_cpu(cluster, names, n, tmp / "w0", shadow=False, policy=policy)
        shad, summary = watch_cpu(cluster, names, n, tmp / "w1", shadow=True, policy=policy)
        return {"shadow_cost_cpu_ms": (shad - base) * 1e3, "watch_baseline_cpu_ms": base * 1e3,
                "watch_shadow_cpu_ms": shad * 1e3, "recorded": summary["bindings"]["recorded"],
                "rows": log_digest(tmp / "w1")}


def in_tree(tree: Path, a: argparse.Namespace) -> dict:
    """``one_pass`` in a fresh process whose ``extender``, ``kube`` and ``policy`` come from ``tree``, on the CPUs
    this process may use."""
    env = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, __file__, "--one-pass", "--nodes", str(a.nodes), "--pods", str(a.pods),
                          "--policy", a.policy], env=env, cwd=tree, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"bench_shadow: the pass in {tree} failed:\n{out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def against_baseline(a: argparse.Namespace, path: Path | None, load: float) -> int:
    """``--baseline-tree``: the shadow cost of both checkouts, alternating, and their ratio per round."""
    trees = {"this": ROOT, "baseline": a.baseline_tree.resolve()}
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    print(f"shadow cost, {a.nodes} nodes, {a.pods} bound pods, {a.rounds} rounds, policy={a.policy}, "
          f"CPUs {sorted(os.sched_getaffinity(0))}; load {load:.2f}")
    for r in range(1, a.rounds + 1):
        for name in (list(trees) if r % 2 else list(trees)[::-1]):  # which goes first alternates too
            f = in_tree(trees[name], a)
            runs[name].append(f)
            print(f"  round {r} {name:8s} shadow cost {f['shadow_cost_cpu_ms']:.3f} CPU ms per bound pod "
                  f"(watch {f['watch_baseline_cpu_ms']:.3f} -> {f['watch_shadow_cpu_ms']:.3f}); rows {f['rows']}",
                  flush=True)
    ratios = [t["shadow_cost_cpu_ms"] / b["shadow_cost_cpu_ms"]
              for t, b in zip(runs["this"], runs["baseline"], strict=True)]
    med = {name: statistics.median(f["shadow_cost_cpu_ms"] for f in runs[name]) for name in trees}
    same = len({f["rows"] for name in trees for f in runs[name]}) == 1
    for name in trees:
        xs = [f["shadow_cost_cpu_ms"] for f in runs[name]]
        print(f"  {name:8s} shadow cost median {med[name]:.3f} ({min(xs):.3f}-{max(xs):.3f}) CPU ms per bound pod")
    print(f"  this / baseline per round: {', '.join(f'{x:.2f}' for x in ratios)}; median "
          f"{statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})")
    print(f"  rows: {'the same in every pass' if same else 'DIFFER between passes'}")
    figures = {"nodes": a.nodes, "pods": a.pods, "policy": a.policy, "rounds": runs,
               "cpus": sorted(os.sched_getaffinity(0)), "commit": record.commit_of(ROOT),
               "baseline_tree": str(a.baseline_tree), "baseline_commit": record.commit_of(trees["baseline"]),
               "this_shadow_cost_cpu_ms_median": med["this"], "baseline_shadow_cost_cpu_ms_median": med["baseline"],
               "ratio_per_round": ratios, "ratio_median": statistics.median(ratios), "ratio_min": min(ratios),
               "ratio_max": max(ratios), "rows_equal": same}
    return record.finish(path, figures, load_before=load)


def profile(cluster: Path, names: list[str], n: int, policy: str, top: int = 25) -> None:
    """``--profile`` (module doc): the watch thread's work and the writer's, each under cProfile."""
    import cProfile
    import pstats

    import orjson

    s = build_settings(kubeconfig="/dev/null", policy=policy, log_level="WARNING", shadow=True)
    cache, telemetry = cache_for(cluster), Telemetry()
    policy_, _ = load_policy(s, telemetry)
    rec = Recording(s, cache=cache, policy=policy_, telemetry=telemetry,
                    thresholds=Runtime(settings=s, cache=cache, telemetry=telemetry, policy=policy_).thresholds)
    queued: list = []
    rec.shadow.submit = lambda build, *args: queued.append((build, args))  # built below, as the writer would
    watcher = IndexingWatcher(None, cache, s, store=None, telemetry=telemetry, index=PodIndex(selector={}, port=1),
                              observer=rec.observe_pod)
    for pending, bound in pods(n, names, "profile"):
        watcher._apply("pods", "ADDED", pending)
        watcher._apply("pods", "MODIFIED", bound)  # a first pass: what is built once is not profiled
    queued.clear()
    events = pods(n, names, "profiled")
    for label, work in (("watch thread: the two events of each bound pod, shadow included", None),
                        ("log writer: building and encoding each shadow row", queued)):
        prof = cProfile.Profile()
        t0 = time.thread_time()
        prof.enable()
        if work is None:
            for pending, bound in events:
                watcher._apply("pods", "ADDED", pending)
                watcher._apply("pods", "MODIFIED", bound)
        else:
            for build, args in list(work):
                orjson.dumps(build(*args), option=orjson.OPT_SERIALIZE_NUMPY)
        prof.disable()
        print(f"\n== {label}: {(time.thread_time() - t0) / n * 1e3:.3f} CPU ms per bound pod under the profiler")
        pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(top)


def timed(fn, sink: list[float]):
    """``fn`` that appends its wall time to ``sink`` on each call."""
    def wrapper(**kw):
        t0 = time.perf_counter()
        out = fn(**kw)
        sink.append(time.perf_counter() - t0)
        return out
    return wrapper


def request_path(cluster: Path, names: list[str], n: int, tmp: Path, policy: str) -> dict[str, float]:
    """prioritize with the log off and on, calls interleaved (so both arms see the same machine load), back to
    back and paced; Recording.serve alone; the log's rows."""
    arms, serve_times = {}, []
    for arm in ("off", "on"):
        s = build_settings(static_cluster=str(cluster), policy=policy, log_level="WARNING",
                           decision_log_dir=str(tmp / arm) if arm == "on" else None)
        cache, telemetry = cache_for(cluster), Telemetry()
        rt = Runtime(settings=s, cache=cache, telemetry=telemetry, policy=load_policy(s, telemetry)[0])
        rt.recording = Recording(s, cache=cache, policy=rt.policy, telemetry=telemetry, thresholds=rt.thresholds)
        rt.recording.start()
        arms[arm] = rt
    args = ExtenderArgs.model_construct(Pod=POD, Nodes=None, NodeNames=list(names))
    for rt in arms.values():
        for _ in range(20):
            rt.prioritize(args)
    arms["on"].recording.serve = timed(arms["on"].recording.serve, serve_times)
    out: dict[str, float] = {}
    for label, pace in (("back_to_back", 0.0), ("paced", PACE_S)):
        wall: dict[str, list[float]] = {"off": [], "on": []}
        for _ in range(n):
            for arm, rt in arms.items():
                if pace:
                    time.sleep(pace)
                t0 = time.perf_counter()
                rt.prioritize(args)
                wall[arm].append(time.perf_counter() - t0)
        for arm, xs in wall.items():
            out[f"{label}_p50_ms_log_{arm}"] = statistics.median(xs) * 1e3
            out[f"{label}_p99_ms_log_{arm}"] = float(np.percentile(xs, 99)) * 1e3
    cpu = {}
    for arm, rt in arms.items():  # process CPU per call, the writer's share included (it runs after each call)
        t0 = time.process_time()
        for _ in range(n):
            rt.prioritize(args)
        if rt.recording.log is not None:
            rt.recording.log.stop()
        cpu[arm] = (time.process_time() - t0) / n * 1e3
    out["cpu_ms_log_off"], out["cpu_ms_log_on"] = cpu["off"], cpu["on"]
    log = arms["on"].recording.log
    out["serve_p50_ms"] = statistics.median(serve_times) * 1e3
    out["serve_p99_ms"] = float(np.percentile(serve_times, 99)) * 1e3
    out["rows"] = arms["on"].telemetry.metrics.decision_log_rows._value.get()
    out["bytes_per_row"] = log.path.stat().st_size / max(out["rows"], 1)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--nodes", type=int, default=1000, help="nodes in the cluster (default 1000)")
    p.add_argument("--pods", type=int, default=300, help="bound pods / prioritize calls timed (default 300)")
    p.add_argument("--log-nodes", type=int, default=20, help="decision_log_nodes of the shorter-row shadow arm")
    p.add_argument("--policy", default="model", help="served policy: model (the shipped DQN) or a heuristic")
    p.add_argument("--baseline-tree", type=Path, default=None,
                   help="measure the shadow cost of this checkout and of DIR, alternating (module doc)")
    p.add_argument("--rounds", type=int, default=9, help="with --baseline-tree: rounds, one pass per tree (default 9)")
    p.add_argument("--results", default=None,
                   help="write the figures here ('' = do not; default results/bench/runs/shadow-<UTC start>.json)")
    p.add_argument("--profile", action="store_true", help="where a shadowed binding's time goes (module doc)")
    p.add_argument("--one-pass", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    # as the extender does at start (extender.__main__): without it every shadowed binding page-faults its numpy
    # buffers in again, which the served process does not (the Q-network's time at 1,000 nodes was 2.5x)
    keep_freed_memory()
    if a.one_pass:
        print(json.dumps(one_pass(a.nodes, a.pods, a.policy)))
        return 0
    if a.profile:
        with tempfile.TemporaryDirectory() as d:
            cluster = Path(d) / "cluster.yaml"
            profile(cluster, [x["metadata"]["name"] for x in write_cluster(cluster, a.nodes)], a.pods, a.policy)
        return 0
    if a.baseline_tree is not None and not (a.baseline_tree / "extender" / "shadow.py").is_file():
        p.error(f"--baseline-tree {a.baseline_tree}: not a drsched checkout with shadow mode (no extender/shadow.py)")
    if a.rounds < 1:
        p.error("--rounds must be at least 1")
    path = record.run_path("shadow") if a.results is None else (a.results or None)
    record.refuse_existing(path)
    load = record.load_average()
    if a.baseline_tree is not None:
        return against_baseline(a, path, load)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cluster = tmp / "cluster.yaml"
        names = [x["metadata"]["name"] for x in write_cluster(cluster, a.nodes)]
        print(f"nodes={a.nodes} pods={a.pods} policy={a.policy} load={os.getloadavg()[0]:.1f} cpus={os.cpu_count()}")
        base, _ = watch_cpu(cluster, names, a.pods, tmp / "w0", shadow=False, policy=a.policy)
        shad, summary = watch_cpu(cluster, names, a.pods, tmp / "w1", shadow=True, policy=a.policy)
        short, _ = watch_cpu(cluster, names, a.pods, tmp / "w2", shadow=True, policy=a.policy, log_nodes=a.log_nodes)
        r = request_path(cluster, names, a.pods, tmp, a.policy)
        cost, prio = (shad - base) * 1e3, r["cpu_ms_log_off"]
        print(f"watch events per bound pod, CPU ms: baseline {base * 1e3:.3f}  shadow+log {shad * 1e3:.3f}  "
              f"shadow cost {cost:.3f} (target <= 1); one prioritize in this run: {prio:.3f} CPU ms "
              f"(ratio {cost / prio:.2f})")
        print(f"  shadow recorded {summary['bindings']}, agreement {summary['agreement_rate']}; with "
              f"decision_log_nodes {a.log_nodes}: shadow cost {(short - base) * 1e3:.3f}")
        for label in ("back_to_back", "paced"):
            off, on = r[f"{label}_p50_ms_log_off"], r[f"{label}_p50_ms_log_on"]
            print(f"prioritize {label.replace('_', ' ')}{f' ({PACE_S * 1e3:.0f} ms apart)' if label == 'paced' else ''}"
                  f", interleaved, p50 / p99 ms: log off {off:.3f} / {r[f'{label}_p99_ms_log_off']:.3f}  "
                  f"log on {on:.3f} / {r[f'{label}_p99_ms_log_on']:.3f}  p50 difference {on - off:+.3f}")
        print(f"  process CPU per prioritize: log off {r['cpu_ms_log_off']:.3f}  on {r['cpu_ms_log_on']:.3f} ms "
              "(the writer's share included)")
        print(f"  Recording.serve alone (the log's cost on the request path; target <= 0.1 ms): "
              f"p50 {r['serve_p50_ms']:.4f} ms  p99 {r['serve_p99_ms']:.4f} ms; {r['rows']:.0f} rows, "
              f"{r['bytes_per_row']:.0f} bytes/row")
    figures = {"nodes": a.nodes, "pods": a.pods, "policy": a.policy, "log_nodes": a.log_nodes,
               "cpus": sorted(os.sched_getaffinity(0)), "commit": record.commit_of(Path(__file__).resolve().parent),
               "watch_baseline_cpu_ms": base * 1e3, "watch_shadow_cpu_ms": shad * 1e3, "shadow_cost_cpu_ms": cost,
               "shadow_cost_cpu_ms_log_nodes": (short - base) * 1e3, "prioritize_cpu_ms": prio,
               "shadow_bindings": summary["bindings"], **r}
    return record.finish(path, figures, load_before=load)


if __name__ == "__main__":
    sys.exit(main())
