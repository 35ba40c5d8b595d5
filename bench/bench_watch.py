"""The extender's watch path per pod event, and a scheduled pod's whole cycle, in-process: their CPU.

Why it exists: in the scheduler benchmark the extender's watch threads held 36 % of its GIL time
(``results/bench/profiles/``), on the moments kube-scheduler's next filter is waiting. This times that path
alone, as ``extender.service`` wires it: an ``IndexingWatcher`` feeding the cluster cache, the pod index and
the recording observer (shadow mode and outcomes; the decision log off), on 500 nodes, with the events a
scheduled pod makes in ``bench/bench_scheduler.py`` (ADDED pending; MODIFIED bound, with its PodScheduled
condition; MODIFIED Running; DELETED), shaped as kube-apiserver sends them (managedFields, defaults).
Reported per event, CPU (``time.process_time``), median over ``--rounds``: decoding the event line
(orjson, as ``extender.kube``'s watch does) and applying it.

``--cycle`` times what the extender does per scheduled pod instead (``one_cycle``): the pod's ADDED event,
filter and prioritize over all 500 nodes (names mode, the fast path's bytes in and out, the model served),
its bound and Running events, and a node heartbeat, pod after pod on one cache, so each request sees the
binds before it. Thread CPU per scheduled pod, per part. No HTTP and no watch stream: what the served
extender adds to this is uvicorn's and the Kubernetes client's work per request and per event.

``--baseline-tree DIR`` times another checkout (``git worktree add DIR <commit>``) the same way, each round
in its own process, alternating with this checkout's (ABAB..., which goes first alternating too), and
prints the ratio per round, its median and range: a change measured against its baseline in the same run.
With ``--cycle`` it also says whether every pass gave the same replies (a digest of every filter and
prioritize answer): a change that only saves work must leave them equal.

    PYTHONPATH=. python bench/bench_watch.py --pods 2000 --rounds 5 --baseline-tree /tmp/base
    PYTHONPATH=. python bench/bench_watch.py --cycle --pods 500 --rounds 9 --baseline-tree /tmp/base

Prints figures and writes ``results/bench/runs/watch-<UTC start>.json`` (``cycle-<UTC start>.json`` with
``--cycle``; ``--results ''``: none); asserts nothing. On a shared machine run it pinned and niced
(``taskset -c 0 nice -n 19``): CPU time still grows with the load, which the alternation spreads over both.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODES = 500


def _managed(manager: str) -> dict:
    return {"manager": manager, "operation": "Update", "apiVersion": "v1", "time": "2026-12-04T17:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:conditions": {".": {}, 'k:{"type":"PodScheduled"}': {
                ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}}}}}


def pod_steps(i: int, node: str) -> list[tuple[str, dict]]:
    """A scheduled pod's four watch events (ADDED pending; MODIFIED bound to ``node``, with its PodScheduled
    condition; MODIFIED Running; DELETED), shaped as kube-apiserver sends them."""
    pod = {
        "metadata": {"name": f"p-{i:05d}", "namespace": "bench", "uid": f"0000-{i:08d}", "resourceVersion": "1",
                     "creationTimestamp": "2026-12-04T17:00:00Z",
                     "managedFields": [_managed("bench-scheduler"), _managed("kube-scheduler")]},
        "spec": {"schedulerName": "drsched", "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                 "dnsPolicy": "ClusterFirst", "serviceAccountName": "default",
                 "containers": [{"name": "main", "image": "fake", "imagePullPolicy": "Always",
                                 "terminationMessagePath": "/dev/termination-log",
                                 "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
                 "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                  "effect": "NoExecute", "tolerationSeconds": 300}]},
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }
    steps = [("ADDED", copy.deepcopy(pod))]
    pod["spec"]["nodeName"] = node
    pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True",
                                    "lastTransitionTime": "2026-12-04T17:00:01Z"}]
    steps.append(("MODIFIED", copy.deepcopy(pod)))
    pod["status"]["phase"] = "Running"
    pod["status"]["containerStatuses"] = [{"name": "main", "ready": True,
                                           "state": {"running": {"startedAt": "2026-12-04T17:00:02Z"}}}]
    steps.append(("MODIFIED", copy.deepcopy(pod)))
    steps.append(("DELETED", copy.deepcopy(pod)))
    return steps


def events(pods: int) -> list[bytes]:
    """Four watch event lines per pod, as kube-apiserver sends them to the extender during the benchmark."""
    return [json.dumps({"type": t, "object": o}).encode()
            for i in range(pods) for t, o in pod_steps(i, f"bench-{i % NODES:04d}")]


def kwok_node(name: str, beat: int) -> dict:
    """A KWOK node as the watch sends it, its conditions stamped with heartbeat ``beat`` (a heartbeat changes
    nothing the cache reads)."""
    stamp = f"2026-12-04T17:{beat // 60 % 60:02d}:{beat % 60:02d}Z"
    return {"metadata": {"name": name, "resourceVersion": str(1000 + beat), "uid": f"n-{name}",
                         "labels": {"kubernetes.io/hostname": name, "type": "kwok"},
                         "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
            "spec": {"taints": [{"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                       "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
                       "conditions": [{"type": t, "status": "True" if t == "Ready" else "False",
                                       "lastHeartbeatTime": stamp, "lastTransitionTime": "2026-12-04T16:00:00Z",
                                       "reason": f"Kubelet{t}", "message": "kwok"}
                                      for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")],
                       "nodeInfo": {"kubeletVersion": "fake", "architecture": "amd64", "operatingSystem": "linux"},
                       "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}}


def served(policy: str):
    """(runtime, watcher) wired as ``extender.service`` wires them, without HTTP and without an apiserver: the
    cluster cache, the learned-profile store, the pod index and the recording observer (shadow mode and
    outcomes; the decision log off), on ``NODES`` KWOK nodes; no usage provider, as in
    ``bench/bench_scheduler.py``."""
    from extender.kube_index import IndexingWatcher
    from extender.pod_index import PodIndex
    from extender.profile_store import LearnedProfileStore
    from extender.recording import Recording
    from extender.runtime import Runtime, load_policy, thresholds_of
    from extender.settings import build_settings
    from extender.telemetry import Telemetry
    from kube.cache import ClusterCache
    from kube.selectors import parse_selector

    s = build_settings(None, policy=policy, log_level="WARNING")
    telemetry = Telemetry()
    cache = ClusterCache(assume_grace_s=s.assume_grace_s)
    profiles = LearnedProfileStore(min_samples=s.profile_min_samples, half_life_s=s.profile_half_life_s,
                                   workload_labels=s.workload_labels, ttl_s=s.profile_ttl_s,
                                   max_profiles=s.profile_max)
    served_policy, _ = load_policy(s, telemetry)
    recording = Recording(s, cache=cache, policy=served_policy, telemetry=telemetry, thresholds=thresholds_of(s))
    recording.start()
    index = PodIndex(selector=parse_selector(s.monitor_selector), port=s.monitor_port,
                     namespace=s.monitor_namespace, workload_of=profiles.workload_of)
    watcher = IndexingWatcher(None, cache, s, store=profiles, telemetry=telemetry, index=index,
                              observer=recording.observe_pod)
    for i in range(NODES):
        watcher._apply("nodes", "ADDED", kwok_node(f"bench-{i:04d}", 0))
    rt = Runtime(settings=s, cache=cache, telemetry=telemetry, policy=served_policy, profiles=profiles,
                 recording=recording)
    return rt, watcher


def one_pass(pods: int) -> dict[str, float]:
    """Decode and apply every event once on a fresh cache of ``NODES`` nodes: CPU us per event."""
    import orjson

    _, watcher = served("demand-aware")  # no request is scored: the policy takes no part
    lines = events(pods)
    t0 = time.process_time()
    decoded = [orjson.loads(line) for line in lines]
    t1 = time.process_time()
    for event in decoded:
        watcher._apply("pods", event["type"], event["object"])
    t2 = time.process_time()
    if watcher.cache.pod("bench", f"p-{pods - 1:05d}") is not None:
        raise RuntimeError("a pod is still in the cache after its DELETED event")
    return {"decode_us": 1e6 * (t1 - t0) / len(lines), "apply_us": 1e6 * (t2 - t1) / len(lines),
            "events": len(lines)}


CYCLE_WARMUP = 50
"""Pods scheduled before the clock starts (first requests build the memos and the row cache)."""


def one_cycle(pods: int, policy: str) -> dict:
    """Schedule ``pods`` pods one after the other, each as in ``bench/bench_scheduler.py`` with 500 nodes and
    percentageOfNodesToScore 100: its ADDED event, filter and prioritize over every node (names mode, in
    kube-scheduler's node order, not the cache's), its bound and Running events (bound to the first node
    with the top score), and one node heartbeat. Thread CPU (``time.thread_time``) per scheduled pod, in us,
    of each part: ``pod_events_us`` (decode + apply of the pod's 3 events), ``node_event_us``, ``filter_us``
    and ``prioritize_us`` (from the body's bytes to the reply's, ``extender.fastwire.answer``); ``pod_us``
    their sum. ``decisions`` is a digest of every reply: equal across checkouts when no decision changed.
    """
    import hashlib
    import random

    import orjson

    from extender.fastwire import answer, parse_args

    rt, watcher = served(policy)
    names = [f"bench-{i:04d}" for i in range(NODES)]
    random.Random(0).shuffle(names)
    digest = hashlib.sha256()
    parts = dict.fromkeys(("pod_events_us", "node_event_us", "filter_us", "prioritize_us"), 0.0)
    clock = time.thread_time
    for i in range(pods + CYCLE_WARMUP):
        timed = i >= CYCLE_WARMUP
        added = orjson.dumps({"type": "ADDED", "object": pod_steps(i, "")[0][1]})
        body = orjson.dumps({"Pod": orjson.loads(added)["object"], "Nodes": None, "NodeNames": names})
        t0 = clock()
        event = orjson.loads(added)
        watcher._apply("pods", event["type"], event["object"])
        t1 = clock()
        _, status, filtered = answer(rt, "filter", parse_args(body))
        t2 = clock()
        _, status2, scores = answer(rt, "prioritize", parse_args(body))
        t3 = clock()
        if status != 200 or status2 != 200:
            raise RuntimeError(f"pod {i}: filter {status}, prioritize {status2}")
        filtered, scores = bytes(filtered), bytes(scores)
        digest.update(filtered)
        digest.update(scores)
        passed = set(orjson.loads(filtered)["NodeNames"])
        hosts = [h for h in orjson.loads(scores) if h["Host"] in passed]
        node = max(hosts, key=lambda h: h["Score"])["Host"]  # the first of the best: max keeps the first
        later = [orjson.dumps({"type": t, "object": o}) for t, o in pod_steps(i, node)[1:3]]
        beat = orjson.dumps({"type": "MODIFIED", "object": kwok_node(names[i % NODES], i + 1)})
        t4 = clock()
        for line in later:
            event = orjson.loads(line)
            watcher._apply("pods", event["type"], event["object"])
        t5 = clock()
        event = orjson.loads(beat)
        watcher._apply("nodes", event["type"], event["object"])
        t6 = clock()
        if timed:
            for key, dt in (("pod_events_us", t1 - t0 + t5 - t4), ("node_event_us", t6 - t5),
                            ("filter_us", t2 - t1), ("prioritize_us", t3 - t2)):
                parts[key] += dt
    out = {key: 1e6 * v / pods for key, v in parts.items()}
    out["pod_us"] = sum(out.values())
    out["policy"] = rt.policy.name
    out["decisions"] = digest.hexdigest()[:16]
    return out


KEYS = {"events": ("decode_us", "apply_us"),
        "cycle": ("pod_events_us", "node_event_us", "filter_us", "prioritize_us", "pod_us")}
"""The figures of each mode; the last is the one a change is judged by."""


def in_tree(tree: Path, args: argparse.Namespace) -> dict:
    """``one_pass`` (or ``one_cycle`` with ``--cycle``) in a fresh process whose ``extender`` and ``kube`` come
    from ``tree``, pinned to the CPUs this process may use."""
    env = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS="1")
    extra = ["--cycle", "--policy", args.policy] if args.cycle else []
    out = subprocess.run([sys.executable, __file__, "--one-pass", "--pods", str(args.pods), *extra], env=env,
                         cwd=tree, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"bench_watch: the pass in {tree} failed:\n{out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _line(f: dict, keys: tuple[str, ...]) -> str:
    return "  ".join(f"{k.removesuffix('_us')} {f[k]:7.1f}" for k in keys) + " us"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--pods", type=int, default=2000, help="pods, 4 events each (default 2000)")
    parser.add_argument("--rounds", type=int, default=5, help="passes per checkout, alternating (default 5)")
    parser.add_argument("--baseline-tree", type=Path, help="also time this checkout, alternating with this one")
    parser.add_argument("--cycle", action="store_true",
                        help="a scheduled pod's whole cycle: its events, filter and prioritize (one_cycle)")
    parser.add_argument("--policy", default="model", help="with --cycle: the policy served (default model)")
    parser.add_argument("--results", default=None,
                        help="write the figures here ('' = do not; default results/bench/runs/watch-<UTC>.json)")
    parser.add_argument("--one-pass", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pods < 1 or args.rounds < 1:
        parser.error("--pods and --rounds must be at least 1")
    if args.one_pass:
        print(json.dumps(one_cycle(args.pods, args.policy) if args.cycle else one_pass(args.pods)))
        return 0
    if args.baseline_tree is not None and not (args.baseline_tree / "extender" / "kube_index.py").is_file():
        parser.error(f"--baseline-tree {args.baseline_tree}: not a drsched checkout (no extender/kube_index.py)")
    sys.path.insert(0, str(ROOT / "bench"))
    import record

    mode = "cycle" if args.cycle else "events"
    keys = KEYS[mode]
    path = record.run_path("cycle" if args.cycle else "watch") if args.results is None else (args.results or None)
    record.refuse_existing(path)
    load = record.load_average()
    trees = {"this": ROOT} | ({"baseline": args.baseline_tree.resolve()} if args.baseline_tree else {})
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    what = (f"a scheduled pod's cycle ({args.policy}), {args.pods} pods" if args.cycle
            else f"watch path, {args.pods} pods x 4 events")
    print(f"{what} on {NODES} nodes, {args.rounds} rounds, CPUs {sorted(os.sched_getaffinity(0))}; load {load:.2f}")
    for r in range(1, args.rounds + 1):
        # the checkouts alternate, and which goes first too, so the machine's load drifts over both alike
        for name in (list(trees) if r % 2 else list(trees)[::-1]):
            runs[name].append(in_tree(trees[name], args))
            print(f"  round {r} {name:8s} {_line(runs[name][-1], keys)}", flush=True)
    figures: dict = {"mode": mode, "pods": args.pods, "nodes": NODES, "rounds": runs,
                     "cpus": sorted(os.sched_getaffinity(0)), "commit": record.commit_of(ROOT)}
    for name in trees:
        med = {k: statistics.median(f[k] for f in runs[name]) for k in keys}
        figures.update({f"{name}_{k}_median": v for k, v in med.items()})
        print(f"  {name:8s} median: {_line(med, keys)}")
    if "baseline" in trees:
        figures["baseline_tree"] = str(args.baseline_tree)
        figures["baseline_commit"] = record.commit_of(trees["baseline"])
        for k in keys:
            ratios = [a[k] / b[k] for a, b in zip(runs["this"], runs["baseline"], strict=True)]
            figures[f"{k.removesuffix('_us')}_ratio_per_round"] = ratios
            figures[f"{k.removesuffix('_us')}_ratio_median"] = statistics.median(ratios)
            print(f"  {k.removesuffix('_us')}, this / baseline per round: {', '.join(f'{x:.2f}' for x in ratios)}; "
                  f"median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})")
        if args.cycle:
            same = {f["decisions"] for name in trees for f in runs[name]}
            figures["decisions_equal"] = len(same) == 1
            print(f"  decisions: {'the same in every pass' if len(same) == 1 else 'DIFFER: ' + ', '.join(same)}")
    return record.finish(path, figures, load_before=load)


if __name__ == "__main__":
    sys.exit(main())
