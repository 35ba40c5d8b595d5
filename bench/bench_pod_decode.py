"""The pod watch's pruned decode against the whole one, pod by pod in one process: CPU per event, decoded and applied.

Why it exists: the pruned decode (``extender.pod_events``) saves ~10 us of a ~45 us pod event, while
``bench_watch.py --baseline-tree``'s alternating processes see each one's CPU grow and shrink with the machine's load
by more than that (a round's ratio spans 0.5-1.8 on a shared core). Here both arms run in one process on two watchers
wired as ``extender.service`` wires them (``bench_watch.served``), in turns of one pod's four events (which arm goes
first alternating), so the load falls on both alike. The arms differ only in the decoder: this checkout's pod watch
(``extender.kube.dict_watch_class("pods")``), and the same class built with orjson decoding the whole line, as
before ``extender.pod_events``; the apply is the same code. Thread CPU per event of each arm, per block of
``--block`` pods, and their ratio per block, median and range.

    PYTHONPATH=.:bench python bench/bench_pod_decode.py --pods 3000 --block 300

Prints figures and writes ``results/bench/runs/pod_decode-<UTC start>.json`` (``--results ''``: none). Run it pinned
and niced on a shared machine (``taskset -c 0 nice -n 19``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def whole_watch():
    """The pod watch as it was before ``extender.pod_events``: the same class, each line decoded whole by orjson."""
    from unittest import mock

    import orjson

    import extender.kube

    with mock.patch.object(extender.kube, "decode_pod_event", orjson.loads):
        return extender.kube.dict_watch_class.__wrapped__("pods")()  # not the cached class: one of its own


def interleaved(pods: int, block: int) -> dict:
    """Decode and apply each pod's four events in both arms, in turns: us per event of each arm per block."""
    import orjson
    from bench_watch import pod_steps, served

    from extender.kube import dict_watch_class

    arms = {"pruned": (served("demand-aware")[1], dict_watch_class("pods")()),
            "whole": (served("demand-aware")[1], whole_watch())}
    clock = time.thread_time
    spent = {arm: [0.0] * (pods // block) for arm in arms}
    for i in range(pods // block * block):
        lines = [orjson.dumps({"type": t, "object": o}).decode() for t, o in pod_steps(i, f"bench-{i % 500:04d}")]
        for arm in (("pruned", "whole") if i % 2 else ("whole", "pruned")):
            watcher, watch = arms[arm]
            t0 = clock()
            for line in lines:
                event = watch.unmarshal_event(line, None)
                watcher._apply("pods", event["type"], event["raw_object"])
            spent[arm][i // block] += clock() - t0
    events = 4 * block
    ratios = [p / w for p, w in zip(spent["pruned"], spent["whole"], strict=True)]
    return {"pruned_us_per_event": [1e6 * s / events for s in spent["pruned"]],
            "whole_us_per_event": [1e6 * s / events for s in spent["whole"]], "ratio_per_block": ratios,
            "ratio_median": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--pods", type=int, default=3000, help="pods, 4 events each, per arm (default 3000)")
    parser.add_argument("--block", type=int, default=300, help="pods per block, one ratio each (default 300)")
    parser.add_argument("--results", default=None,
                        help="write the figures here ('' = do not; default results/bench/runs/pod_decode-<UTC>.json)")
    args = parser.parse_args(argv)
    if args.block < 1 or args.pods < args.block:
        parser.error("--block must be at least 1 and --pods at least --block")
    sys.path.insert(0, str(ROOT / "bench"))
    import record

    path = record.run_path("pod_decode") if args.results is None else (args.results or None)
    record.refuse_existing(path)
    load = record.load_average()
    figures = interleaved(args.pods, args.block)
    for arm in ("pruned", "whole"):
        per = figures[f"{arm}_us_per_event"]
        print(f"  {arm:6s} us per event (decode + apply), per block: {', '.join(f'{x:.1f}' for x in per)}; "
              f"median {statistics.median(per):.1f}")
    print(f"  pruned / whole per block: {', '.join(f'{x:.2f}' for x in figures['ratio_per_block'])}; median "
          f"{figures['ratio_median']:.2f} (min {figures['ratio_min']:.2f}, max {figures['ratio_max']:.2f})")
    figures.update(pods=args.pods, block_pods=args.block, commit=record.commit_of(ROOT))
    return record.finish(path, figures, load_before=load)


if __name__ == "__main__":
    sys.exit(main())
