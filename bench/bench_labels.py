"""What the label checks cost the first time they see a pod's constraint, against a repeat, in-process.

Two checks read labels:

* **Shadow mode's node label check** (``extender.shadow.ShadowRecorder._blocked``): at each shadowed binding, the
  nodes whose labels the pod's ``nodeSelector`` or required node affinity do not allow. A requirement is judged
  over every node's labels the first time it is seen, then answered from a memo until a node or a label changes
  (``_refused_by_labels``, the last ``LABELS_MEMO`` requirements). Timed alone, per pod: a pod with no
  requirement (the baseline: the taints pass only), a pod whose requirement is new (first sight: the pass over
  every node), and a pod with the requirement seen before (repeat: the memo). Then the whole shadowed binding
  (the pod's two watch events, shadow on, log off, as ``bench_shadow`` times it) in the same three cases, to
  set the pass beside what a binding costs anyway.
* **The canary check on the request path** (``Recording.decides_for``, ``canary_namespaces`` + ``canary_selector``):
  no memo, so a pod seen before costs what a new one does; timed for a new pod object each call, the same
  object again, and the canary off (the baseline: every pod selected without reading it).

Every figure is CPU time of this thread (``time.thread_time``) per call, the median (and range) over
``--rounds`` rounds in which the cases take turns, so each case meets the same machine. The nodes carry labels
from a static cluster file (zone, pool, hostname; ``extender.static_cluster``); first-sight pods ask for a zone
and a value no other pod asks for (``In``), so each is a new requirement that still matches a third of the nodes.

    python bench/bench_labels.py --nodes 1000           # writes results/bench/runs/labels-<UTC start>.json

Prints figures and ratios and writes them (``bench/record.py``: command, load around the run, commit;
``--results ''`` writes none); asserts nothing. Pin it (``taskset -c 0``) and compare within one run.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the extender serves
import record  # noqa: E402  (run as a script: bench/ is on the path)
from bench_extender import POD  # noqa: E402
from bench_shadow import cache_for  # noqa: E402

from extender.kube_index import IndexingWatcher  # noqa: E402
from extender.pod_index import PodIndex  # noqa: E402
from extender.recording import Recording  # noqa: E402
from extender.runtime import Runtime, load_policy  # noqa: E402
from extender.settings import build_settings  # noqa: E402
from extender.shadow import LABELS_MEMO  # noqa: E402
from extender.telemetry import Telemetry  # noqa: E402

ZONES = 3
POOLS = 10


def write_cluster(path: Path, n: int) -> list[str]:
    """A static cluster of ``n`` labelled nodes, no pods; returns the node names."""
    names = [f"node-{i:05d}" for i in range(n)]
    lines = ["nodes:"]
    for i, name in enumerate(names):
        lines.append(f"- {{name: {name}, cpu: '16', memory: 64Gi, usage: {{cpu: '4', memory: 16Gi}}, labels: "
                     f"{{topology.kubernetes.io/zone: z{i % ZONES}, pool: p{i % POOLS}, kubernetes.io/hostname: {name},"
                     f" kubernetes.io/os: linux}}}}")
    path.write_text("\n".join(lines) + "\n")
    return names


def shadow_pod(i: int, tag: str, need: str) -> dict:
    """A pending pod of the default scheduler; ``need``: none, a requirement new to this pod (first), or one
    every pod shares (repeat)."""
    pod = copy.deepcopy(POD)
    pod["metadata"].update(name=f"{tag}-{i}", uid=f"{tag}-uid-{i}")
    pod["spec"]["schedulerName"] = "default-scheduler"
    if need != "none":
        values = ["z1", f"only-{tag}-{i}" if need == "first" else "only-shared"]
        pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": values}]}]}}}
    return pod


def recording(cluster: Path, *, shadow: bool, canary: str = "", policy: str = "model"):
    s = build_settings(kubeconfig="/dev/null", policy=policy, log_level="WARNING", shadow=shadow,
                       canary_namespaces="default" if canary else "", canary_selector=canary)
    cache, telemetry = cache_for(cluster), Telemetry()
    policy_, _ = load_policy(s, telemetry)
    rt = Runtime(settings=s, cache=cache, telemetry=telemetry, policy=policy_)
    return Recording(s, cache=cache, policy=policy_, telemetry=telemetry, thresholds=rt.thresholds), cache, s


def rounds(cases: dict[str, Callable[[int], None]], *, rounds_: int, calls: int) -> dict[str, list[float]]:
    """Per case, the CPU seconds per call of each round; the cases take turns (rotated each round)."""
    out: dict[str, list[float]] = {k: [] for k in cases}
    names = list(cases)
    for r in range(rounds_):
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn = cases[name]
            t0 = time.thread_time()
            for i in range(calls):
                fn(r * calls + i)
            out[name].append((time.thread_time() - t0) / calls)
    return out


def summary(xs: list[float]) -> dict[str, float]:
    return {"median_us": statistics.median(xs) * 1e6, "min_us": min(xs) * 1e6, "max_us": max(xs) * 1e6}


def label_check(cluster: Path, *, rounds_: int, calls: int) -> dict[str, dict[str, float]]:
    """``ShadowRecorder._blocked`` alone on the cache's view: no requirement, a new one, a repeated one (one
    recorder per case, so the new requirements never push the repeated one out of the memo)."""
    (none, cache_n, _), (first, cache_f, _), (repeat, cache_r, _) = (recording(cluster, shadow=True)
                                                                   for _ in range(3))
    views = {"none": cache_n.view(), "first": cache_f.view(), "repeat": cache_r.view()}
    shared = shadow_pod(0, "repeat", "repeat")
    repeat.shadow._blocked(shared, views["repeat"])  # seen once: every later call is a repeat
    firsts = [shadow_pod(i, "first", "first") for i in range(rounds_ * calls)]
    plain = shadow_pod(0, "none", "none")
    times = rounds({"none": lambda i: none.shadow._blocked(plain, views["none"]),
                    "first": lambda i: first.shadow._blocked(firsts[i], views["first"]),
                    "repeat": lambda i: repeat.shadow._blocked(shared, views["repeat"])},
                   rounds_=rounds_, calls=calls)
    return {k: summary(v) for k, v in times.items()}


def binding(cluster: Path, names: list[str], *, rounds_: int, calls: int) -> dict[str, dict[str, float]]:
    """A whole shadowed binding (two watch events, shadow on, no log): one recorder per case, so a first-sight
    case's requirements never push the repeated one out of the memo."""
    cases = {}
    for need in ("none", "first", "repeat"):
        rec, cache, s = recording(cluster, shadow=True)
        watcher = IndexingWatcher(None, cache, s, store=None, telemetry=rec.telemetry,
                                  index=PodIndex(selector={}, port=1), observer=rec.observe_pod)
        events = []
        for i in range(rounds_ * calls + 1):
            pending = shadow_pod(i, f"b{need}", need)
            bound = copy.deepcopy(pending)
            bound["spec"]["nodeName"] = names[(i * 7919) % len(names)]
            bound["status"]["phase"] = "Running"
            events.append((pending, bound))
        watcher._apply("pods", "ADDED", events[-1][0])  # the repeated requirement seen once before timing
        watcher._apply("pods", "MODIFIED", events[-1][1])

        def bind(i, watcher=watcher, events=events):
            watcher._apply("pods", "ADDED", events[i][0])
            watcher._apply("pods", "MODIFIED", events[i][1])

        cases[need] = (bind, rec)
    times = rounds({k: fn for k, (fn, _) in cases.items()}, rounds_=rounds_, calls=calls)
    out = {k: summary(v) for k, v in times.items()}
    for k, (_, rec) in cases.items():
        out[k]["bindings"] = rec.summary()["bindings"]
    return out


def canary(cluster: Path, *, rounds_: int, calls: int) -> dict[str, dict[str, float]]:
    """``Recording.decides_for`` on the request path: canary off, a new pod object, the same one again."""
    off, _, _ = recording(cluster, shadow=False)
    on, _, _ = recording(cluster, shadow=False, canary="drsched=on")
    seen = copy.deepcopy(POD)
    seen["metadata"]["labels"] = {"drsched": "on", "app": "bench"}
    firsts = []
    for i in range(rounds_ * calls):
        pod = copy.deepcopy(seen)
        pod["metadata"].update(name=f"c-{i}", uid=f"c-uid-{i}")
        firsts.append(pod)
    times = rounds({"off": lambda i: off.decides_for(seen), "first": lambda i: on.decides_for(firsts[i]),
                    "repeat": lambda i: on.decides_for(seen)}, rounds_=rounds_, calls=calls)
    return {k: summary(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--nodes", type=int, default=1000, help="labelled nodes in the cluster (default 1000)")
    p.add_argument("--rounds", type=int, default=15, help="rounds; the cases take turns in each (default 15)")
    p.add_argument("--calls", type=int, default=40, help="calls per case and round (default 40)")
    p.add_argument("--binding-calls", type=int, default=10,
                   help="shadowed bindings per case and round (default 10)")
    p.add_argument("--note", default="", help="conditions to keep with the figures (e.g. what else ran)")
    p.add_argument("--results", default=None,
                   help="write the figures here ('' = do not; default results/bench/runs/labels-<UTC start>.json)")
    a = p.parse_args(argv)
    path = record.run_path("labels") if a.results is None else (a.results or None)
    record.refuse_existing(path)
    load = record.load_average()
    with tempfile.TemporaryDirectory() as d:
        cluster = Path(d) / "cluster.yaml"
        names = write_cluster(cluster, a.nodes)
        cpus = sorted(os.sched_getaffinity(0))
        print(f"nodes={a.nodes} rounds={a.rounds} calls={a.calls} load={os.getloadavg()[0]:.1f} cpus={cpus} "
              f"memo={LABELS_MEMO} requirements")
        check = label_check(cluster, rounds_=a.rounds, calls=a.calls)
        bind = binding(cluster, names, rounds_=a.rounds, calls=a.binding_calls)
        gate = canary(cluster, rounds_=a.rounds, calls=a.calls)

    def line(title: str, fig: dict, base: str, cases: tuple[str, ...]) -> None:
        b = fig[base]["median_us"]
        parts = [f"{c} {fig[c]['median_us']:.1f} ({fig[c]['min_us']:.1f}-{fig[c]['max_us']:.1f})"
                 + ("" if c == base else f" = {fig[c]['median_us'] / b:.2f}x") for c in cases]
        print(f"{title}, CPU us per call, median (range) over rounds: " + "; ".join(parts))

    line("shadow label check (_blocked)", check, "none", ("none", "first", "repeat"))
    print(f"  first sight - repeat: {check['first']['median_us'] - check['repeat']['median_us']:.1f} us "
          f"({(check['first']['median_us'] - check['repeat']['median_us']) / a.nodes * 1e3:.0f} ns per node); "
          f"first / repeat {check['first']['median_us'] / check['repeat']['median_us']:.1f}x")
    line("shadowed binding (two watch events)", bind, "none", ("none", "first", "repeat"))
    extra = bind["first"]["median_us"] - bind["repeat"]["median_us"]
    print(f"  first sight adds {extra:.1f} us to a binding ({extra / bind['repeat']['median_us'] * 100:.1f} % of a "
          f"repeat)")
    line("canary check (Recording.decides_for)", gate, "off", ("off", "first", "repeat"))
    figures = {"nodes": a.nodes, "rounds": a.rounds, "calls": a.calls, "binding_calls": a.binding_calls,
               "labels_memo": LABELS_MEMO, "cpus": cpus, "note": a.note,
               "commit": record.commit_of(Path(__file__).resolve().parent),
               "label_check_us": check, "binding_us": bind, "canary_us": gate}
    return record.finish(path, figures, load_before=load)


if __name__ == "__main__":
    sys.exit(main())
