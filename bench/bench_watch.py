"""The extender's watch path, per pod event, in-process: what each event costs the GIL the requests need.

Why it exists: in the scheduler benchmark the extender's watch threads held 36 % of its GIL time
(``results/bench/profiles/``), on the moments kube-scheduler's next filter is waiting. This times that path
alone, as ``extender.service`` wires it: an ``IndexingWatcher`` feeding the cluster cache, the pod index and
the recording observer (shadow mode and outcomes; the decision log off), on 500 nodes, with the events a
scheduled pod makes in ``bench/bench_scheduler.py`` (ADDED pending; MODIFIED bound, with its PodScheduled
condition; MODIFIED Running; DELETED), shaped as kube-apiserver sends them (managedFields, defaults).
Reported per event, CPU (``time.process_time``), median over ``--rounds``: decoding the event line
(orjson, as ``extender.kube``'s watch does) and applying it.

``--baseline-tree DIR`` times another checkout (``git worktree add DIR <commit>``) the same way, each round
in its own process, alternating with this checkout's (ABAB...), and prints the ratio per round and its
median: a change to the watch path measured against its baseline in the same run.

    PYTHONPATH=. python bench/bench_watch.py --pods 2000 --rounds 5 --baseline-tree /tmp/base

Prints figures and writes ``results/bench/runs/watch-<UTC start>.json`` (``--results ''``: none);
asserts nothing.
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


def events(pods: int) -> list[bytes]:
    """Four watch event lines per pod, as kube-apiserver sends them to the extender during the benchmark."""
    out = []
    for i in range(pods):
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
        pod["spec"]["nodeName"] = f"bench-{i % NODES:04d}"
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True",
                                        "lastTransitionTime": "2026-12-04T17:00:01Z"}]
        steps.append(("MODIFIED", copy.deepcopy(pod)))
        pod["status"]["phase"] = "Running"
        pod["status"]["containerStatuses"] = [{"name": "main", "ready": True,
                                               "state": {"running": {"startedAt": "2026-12-04T17:00:02Z"}}}]
        steps.append(("MODIFIED", copy.deepcopy(pod)))
        steps.append(("DELETED", copy.deepcopy(pod)))
        out.extend(json.dumps({"type": t, "object": o}).encode() for t, o in steps)
    return out


def one_pass(pods: int) -> dict[str, float]:
    """Decode and apply every event once on a fresh cache of ``NODES`` nodes: CPU us per event."""
    import orjson

    from extender.kube import apply_node_event
    from extender.kube_index import IndexingWatcher
    from extender.pod_index import PodIndex
    from extender.profile_store import LearnedProfileStore
    from extender.recording import Recording
    from extender.runtime import load_policy, thresholds_of
    from extender.settings import build_settings
    from extender.telemetry import Telemetry
    from kube.cache import ClusterCache
    from kube.selectors import parse_selector

    s = build_settings(None, policy="demand-aware")  # no request is scored: the policy takes no part
    telemetry = Telemetry()
    cache = ClusterCache(assume_grace_s=s.assume_grace_s)
    profiles = LearnedProfileStore(min_samples=s.profile_min_samples, half_life_s=s.profile_half_life_s,
                                   workload_labels=s.workload_labels, ttl_s=s.profile_ttl_s,
                                   max_profiles=s.profile_max)
    policy, _ = load_policy(s, telemetry)
    recording = Recording(s, cache=cache, policy=policy, telemetry=telemetry, thresholds=thresholds_of(s))
    recording.start()
    index = PodIndex(selector=parse_selector(s.monitor_selector), port=s.monitor_port,
                     namespace=s.monitor_namespace, workload_of=profiles.workload_of)
    watcher = IndexingWatcher(None, cache, s, store=profiles, telemetry=telemetry, index=index,
                              observer=recording.observe_pod)
    for i in range(NODES):
        apply_node_event(cache, s, "ADDED", {"metadata": {"name": f"bench-{i:04d}"},
                                             "status": {"allocatable": {"cpu": "16", "memory": "64Gi"}}})
    lines = events(pods)
    t0 = time.process_time()
    decoded = [orjson.loads(line) for line in lines]
    t1 = time.process_time()
    for event in decoded:
        watcher._apply("pods", event["type"], event["object"])
    t2 = time.process_time()
    if cache.pod("bench", f"p-{pods - 1:05d}") is not None:
        raise RuntimeError("a pod is still in the cache after its DELETED event")
    return {"decode_us": 1e6 * (t1 - t0) / len(lines), "apply_us": 1e6 * (t2 - t1) / len(lines),
            "events": len(lines)}


def in_tree(tree: Path, pods: int) -> dict[str, float]:
    """``one_pass`` in a fresh process whose ``extender`` and ``kube`` come from ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, __file__, "--one-pass", "--pods", str(pods)], env=env, cwd=tree,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"bench_watch: the pass in {tree} failed:\n{out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--pods", type=int, default=2000, help="pods, 4 events each (default 2000)")
    parser.add_argument("--rounds", type=int, default=5, help="passes per checkout, alternating (default 5)")
    parser.add_argument("--baseline-tree", type=Path, help="also time this checkout, alternating with this one")
    parser.add_argument("--results", default=None,
                        help="write the figures here ('' = do not; default results/bench/runs/watch-<UTC>.json)")
    parser.add_argument("--one-pass", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pods < 1 or args.rounds < 1:
        parser.error("--pods and --rounds must be at least 1")
    if args.one_pass:
        print(json.dumps(one_pass(args.pods)))
        return 0
    if args.baseline_tree is not None and not (args.baseline_tree / "extender" / "kube_index.py").is_file():
        parser.error(f"--baseline-tree {args.baseline_tree}: not a drsched checkout (no extender/kube_index.py)")
    sys.path.insert(0, str(ROOT / "bench"))
    import record

    path = record.run_path("watch") if args.results is None else (args.results or None)
    record.refuse_existing(path)
    load = record.load_average()
    trees = {"this": ROOT} | ({"baseline": args.baseline_tree.resolve()} if args.baseline_tree else {})
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    print(f"watch path, {args.pods} pods x 4 events on {NODES} nodes, {args.rounds} rounds; load {load:.2f}")
    for r in range(1, args.rounds + 1):
        for name, tree in trees.items():
            runs[name].append(in_tree(tree, args.pods))
            f = runs[name][-1]
            print(f"  round {r} {name:8s} decode {f['decode_us']:6.1f} us/event  apply {f['apply_us']:6.1f} us/event")
    figures: dict = {"pods": args.pods, "nodes": NODES, "rounds": runs}
    for name in trees:
        for key in ("decode_us", "apply_us"):
            figures[f"{name}_{key}_median"] = statistics.median(f[key] for f in runs[name])
        print(f"  {name:8s} median: decode {figures[f'{name}_decode_us_median']:.1f}, "
              f"apply {figures[f'{name}_apply_us_median']:.1f} us/event")
    if "baseline" in trees:
        ratios = [a["apply_us"] / b["apply_us"] for a, b in zip(runs["this"], runs["baseline"], strict=True)]
        figures["apply_ratio_per_round"] = ratios
        figures["apply_ratio_median"] = statistics.median(ratios)
        figures["baseline_tree"] = str(args.baseline_tree)
        print(f"  apply, this / baseline per round: {', '.join(f'{x:.2f}' for x in ratios)}; "
              f"median {figures['apply_ratio_median']:.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})")
    written = record.write(path, figures, load_before=load, overwrite=False)
    if written:
        print(f"figures: {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
