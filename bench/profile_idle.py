"""What a served extender spends while nothing is scheduled, on a real control plane with N KWOK nodes.

Why it exists (issue #26): the 5,000-node scheduler run (``results/bench/runs/scheduler-20261207T1625.json``)
showed the extender at ~0.075 CPU-s a second between pods, 4.5 ms per scheduled pod at that run's rate, and
the node heartbeats it applies account for ~6-12 ms a second in-process (``bench_watch.py --cycle``). This
starts the local control plane (``harness.cluster``: etcd, kube-apiserver, KWOK) with ``--nodes`` nodes, then
``python -m extender`` (the shipped model, no usage provider: as ``bench_scheduler.py`` runs it), waits
``--warm-s`` for its lists and first heartbeats, and reads, over ``--seconds``:

* each process's CPU a second (utime + stime from /proc; extender, kube-apiserver, etcd, KWOK);
* the node watch's event rate (the extender's ``drsched_extender_nodes`` stays put; KWOK's heartbeat rate is
  read from the apiserver's ``apiserver_watch_events_total`` for nodes, when exposed);
* with ``--py-spy PATH``, a py-spy recording of the extender over the same window (``-f raw``, every thread,
  ``--gil`` unless ``--no-gil``), summarised by ``bench/spy_threads.py`` into ``--out``.

    python bench/profile_idle.py --nodes 5000 --seconds 60 --py-spy ~/.cache/drsched/tools/bin/py-spy \\
        --out results/bench/profiles/idle-5000

Prints figures and writes ``idle.json`` (and the profile) into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: bench/ modules
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cp_requests  # noqa: E402
from bench_scheduler import cpu_seconds, create_nodes, scrape  # noqa: E402
from record import load_average  # noqa: E402

from harness.cluster import ControlPlane, ensure_binaries  # noqa: E402
from harness.extender_proc import ExtenderProcess  # noqa: E402

PROCESSES = ("kube-apiserver", "etcd", "kwok")


def apiserver_node_events(cp: ControlPlane) -> float | None:
    """Watch events the apiserver has sent for nodes so far (None where the metric is not exposed)."""
    try:
        samples = scrape(cp)
    except Exception:  # noqa: BLE001 - a figure missing, not a failure
        return None
    return cp_requests.grouped(samples, cp_requests.WATCH_EVENTS, ("resource",)).get("nodes") or None


def measure(args: argparse.Namespace, workdir: Path) -> dict:
    cp = ControlPlane(workdir=workdir, binaries=ensure_binaries(), audit=False)
    ext = ExtenderProcess(kubeconfig=cp.kubeconfig, log_path=workdir / "extender.log", policy=args.policy)
    try:
        cp.start()
        t = time.perf_counter()
        create_nodes(cp, args.nodes, args.threads)
        print(f"{args.nodes} nodes Ready in {time.perf_counter() - t:.1f}s", flush=True)
        ext.start()
        print(f"extender up; warming {args.warm_s:.0f}s", flush=True)
        time.sleep(args.warm_s)
        pids = {"extender": ext.component.proc.pid} | {name: cp.components[name].proc.pid for name in PROCESSES}
        spy = None
        if args.py_spy:
            cmd = [args.py_spy, "record", "--pid", str(pids["extender"]), "--duration", str(int(args.seconds)),
                   "-r", str(args.rate), "-f", "raw", "--nonblocking", "-o", str(args.out / "extender.raw")]
            spy = subprocess.Popen(cmd + ([] if args.no_gil else ["--gil"]), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.STDOUT)
        events0, load0 = apiserver_node_events(cp), load_average()
        c0, t0 = {k: cpu_seconds(p) for k, p in pids.items()}, time.perf_counter()
        time.sleep(args.seconds)
        c1, t1 = {k: cpu_seconds(p) for k, p in pids.items()}, time.perf_counter()
        events1 = apiserver_node_events(cp)
        if spy is not None:
            spy.wait(timeout=args.seconds + 60)
        rate = {k: (c1[k] - c0[k]) / (t1 - t0) for k in pids}
        return {"nodes": args.nodes, "seconds": t1 - t0, "cpu_s_per_s": rate, "load": (load0, load_average()),
                "node_watch_events_per_s": ((events1 - events0) / (t1 - t0)
                                            if events0 is not None and events1 is not None else None),
                "policy": args.policy, "gil": not args.no_gil if args.py_spy else None}
    finally:
        ext.stop()
        cp.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--nodes", type=int, default=5000, help="KWOK nodes (default 5000)")
    parser.add_argument("--threads", type=int, default=10, help="client threads creating nodes (default 10)")
    parser.add_argument("--policy", default="model", help="extender --policy (default model)")
    parser.add_argument("--warm-s", type=float, default=60.0, help="seconds after the extender starts (default 60)")
    parser.add_argument("--seconds", type=float, default=60.0, help="the measured window (default 60)")
    parser.add_argument("--py-spy", help="a py-spy binary: record the extender over the window")
    parser.add_argument("--rate", type=int, default=100, help="py-spy samples a second (default 100)")
    parser.add_argument("--no-gil", action="store_true", help="py-spy: every sample, not only GIL holders")
    parser.add_argument("--out", type=Path, required=True, help="a directory for idle.json and the profile")
    args = parser.parse_args(argv)
    if args.nodes < 1 or args.seconds <= 0 or args.warm_s < 0:
        parser.error("--nodes must be >= 1, --seconds > 0 and --warm-s >= 0")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="drsched-idle-") as tmp:
        result = measure(args, Path(tmp))
    (args.out / "idle.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"CPU-s a second over {result['seconds']:.0f}s at {args.nodes} nodes, idle: "
          + ", ".join(f"{k} {v:.4f}" for k, v in result["cpu_s_per_s"].items()))
    if result["node_watch_events_per_s"] is not None:
        print(f"node watch events sent by the apiserver: {result['node_watch_events_per_s']:.1f}/s")
    raw = args.out / "extender.raw"
    if raw.exists():
        summary = subprocess.run([sys.executable, str(Path(__file__).parent / "spy_threads.py"), str(raw),
                                  "--process", "", "--top", "40"], capture_output=True, text=True, check=False)
        (args.out / "extender-summary.txt").write_text(summary.stdout + summary.stderr, encoding="utf-8")
        print(summary.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
