"""`python -m lab demo --kwok`: drsched live, next to the stock default-scheduler, on a real control plane on loopback.

Starts etcd, kube-apiserver, the default kube-scheduler and KWOK (the `harness` package), two
identical pools of KWOK nodes of the simulator's types (standard, compute, netfast, small; half of them
busy on one resource), the drsched extender (``python -m extender``, the shipped model, started by
``harness.extender_proc`` as the e2e tests start it) and a second kube-scheduler rendered from
kube-scheduler-config/drsched-scheduler.yaml. Node usage reaches the extender through its ``static`` usage
provider: every ``TICK_S`` the demo rewrites the usage file with what node agents would measure
(background + the expected demand of the pods running there), since real ``python -m monitor`` agents on
one machine would all measure the same host.
Then the same seeded pods (cpu / net / io, with ``drsched.io/profile``) go to both pools at the same
moments: one copy to ``schedulerName: drsched`` on the drsched-* pool, one to the default-scheduler on the
default-* pool. It prints where each pod landed and why, each node's load and a summary per scheduler.

The demo owns every process it starts and the work directory: on exit, an error, Ctrl-C or SIGTERM it
stops them all; the work directory is removed unless --out names it. With --keep-running it waits for
Ctrl-C after the report, printing how to reach the cluster and the extender.

``lab demo --kwok`` calls ``main`` in its own process with the arguments after ``--``; the demo's parts are
``workload`` (nodes and pods as data), ``watch`` (its pods on the API server, the usage file) and ``report``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import shutil
import signal
import tempfile
import threading
import time
import urllib.error
from pathlib import Path
from typing import Any

import numpy as np

from harness.cluster import BUILD_SCRIPT, COLD_BUILD, Binaries, ControlPlane, cached_bin_dir, ensure_binaries
from harness.extender_proc import ExtenderProcess
from harness.objects import KwokNodeShape, fake_node, small_pod
from harness.procs import Component, ComponentError, interrupt_on_signals, tail
from kube.logs import setup_logging
from lab.kwokdemo.report import Out, node_table, pod_table, summary_lines
from lab.kwokdemo.watch import NAMESPACES, PodWatch
from lab.kwokdemo.workload import POOLS, DemoNode, DemoPod, busiest_moment, make_nodes, make_pods, summarize

log = logging.getLogger("drsched.demo")

POOL_LABEL = "drsched.io/demo-pool"
SCHEDULER_NAMES = {"drsched": "drsched", "default": None}
MARKER = ".drsched-demo"        # marks an --out directory as the demo's own, so a rerun may clear it
BIND_TIMEOUT_S = 60.0
TICK_S = 0.5                    # pod list + usage file refresh


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m lab demo --kwok --", description=__doc__.split("\n\n")[0],
        epilog="Needs Go >= 1.26 for the first build of the control plane (harness/controlplane/build.sh).")
    p.add_argument("--nodes", type=int, default=8, help="nodes per pool (types cycle standard, compute, netfast, "
                                                         "small) [default: 8]")
    p.add_argument("--pods", type=int, default=30, help="pods in the schedule (each submitted twice: once per "
                                                        "scheduler) [default: 30]")
    p.add_argument("--policy", default="model", help="extender policy: model (policy/models/default.npz, falls back "
                                                     "to demand-aware while it is missing) or a heuristic name "
                                                     "[default: model]")
    p.add_argument("--seed", type=int, default=7, help="seed of the nodes' background load and the schedule "
                                                       "[default: 7]")
    p.add_argument("--submit-seconds", type=float, default=20.0, help="pods arrive over about this long "
                                                                      "[default: 20]")
    p.add_argument("--run-for", type=float, default=20.0, help="median seconds a pod runs before KWOK completes "
                                                               "it [default: 20]")
    p.add_argument("--out", type=Path, default=None, help="keep the work directory here: component logs "
                                                          "(logs/), kubeconfig, report.txt, report.json")
    p.add_argument("--keep-running", action="store_true", help="after the report, keep everything running "
                                                               "until Ctrl-C")
    p.add_argument("-v", "--verbose", action="store_true", help="log the harness's steps")
    args = p.parse_args(argv)
    if args.nodes < 1 or args.pods < 1 or args.submit_seconds <= 0 or args.run_for <= 0:
        p.error("--nodes, --pods, --submit-seconds and --run-for must be positive")
    return args


class Demo:
    """The processes and the work directory of one demo run; ``close()`` releases all of them."""

    def __init__(self, args: argparse.Namespace, out: Out) -> None:
        self.args = args
        self.out = out
        self.workdir = self._workdir(args.out)
        self._cp: ControlPlane | None = None
        self.extender: ExtenderProcess | None = None
        self.served = ""
        self.watch: PodWatch | None = None
        self.bins: Binaries  # set by build()

    @property
    def cp(self) -> ControlPlane:
        if self._cp is None:
            raise RuntimeError("the control plane is not started yet")
        return self._cp

    @staticmethod
    def _workdir(out_dir: Path | None) -> Path:
        if out_dir is None:
            return Path(tempfile.mkdtemp(prefix="drsched-demo-"))
        out_dir = out_dir.resolve()
        if out_dir.exists() and any(out_dir.iterdir()):
            if not (out_dir / MARKER).exists():
                raise SystemExit(f"demo: --out {out_dir} is not empty and not a previous demo's directory")
            shutil.rmtree(out_dir)  # a previous run's etcd data and certificates must not be reused
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / MARKER).write_text("written by `python -m lab demo --kwok`; a rerun with this --out clears it\n")
        return out_dir

    # ---- steps ----------------------------------------------------------------------------------

    def build(self) -> None:
        """build.sh through a Component (so Ctrl-C kills the whole go build), with a progress line."""
        log_path = cached_bin_dir().parent / "build.log"
        self.out.say(f"[1/5] control plane binaries: checking ({COLD_BUILD}; log: {log_path})")
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.unlink(missing_ok=True)
        build = Component(name="build.sh", argv=[str(BUILD_SCRIPT)], log_path=log_path)
        build.start()
        start = time.monotonic()
        try:
            while build.proc is not None and build.proc.poll() is None:
                elapsed = time.monotonic() - start
                if elapsed > 2:
                    last = tail(log_path, 1).strip()[-70:]
                    self.out.progress(f"      building {int(elapsed) // 60}m{int(elapsed) % 60:02d}s  {last}")
                time.sleep(1)
        finally:
            build.stop()
        if build.proc is None or build.proc.returncode != 0:
            raise ComponentError(build.explain(f"failed with code {build.proc.returncode if build.proc else '?'}"))
        self.bins = ensure_binaries()  # a no-op now; checks that every binary is there
        took = time.monotonic() - start
        self.out.say(f"      {'built' if took > 5 else 'reusing'} {self.bins.bin_dir} ({took:.0f}s)")

    def start_cluster(self, nodes: list[DemoNode]) -> None:
        self.out.say(f"[2/5] control plane: etcd, kube-apiserver, kube-scheduler, kwok on 127.0.0.1 "
                     f"(work dir {self.workdir})")
        t = time.monotonic()
        self._cp = ControlPlane(workdir=self.workdir, binaries=self.bins)
        self.cp.start()
        for pool in POOLS:
            self.cp.create_namespace(NAMESPACES[pool])
        for pool in POOLS:
            for i, node in enumerate(nodes):
                self.out.progress(f"      node {node.name(pool)} ({i + 1}/{len(nodes)})")
                self.cp.create_node(self._node_object(node, pool))
        self.out.say(f"      {len(nodes)} nodes x 2 pools Ready ({time.monotonic() - t:.0f}s)")

    @staticmethod
    def _node_object(node: DemoNode, pool: str):
        cpu, mem, net, disk = node.capacity
        obj = fake_node(KwokNodeShape(node.name(pool), cpu=f"{cpu:g}", memory=f"{mem:g}Gi", pods=node.max_pods),
                        labels={POOL_LABEL: pool, "drsched.io/demo-type": node.kind})
        # The extender reads bandwidth from these annotations (extender/settings.py net_/disk_annotation).
        obj.metadata.annotations.update({"drsched.io/net-mbps": f"{net:g}", "drsched.io/disk-mbps": f"{disk:g}"})
        return obj

    def start_drsched(self, nodes: list[DemoNode], pods: list[DemoPod]) -> None:
        self.out.say(f"[3/5] drsched: extender (--policy {self.args.policy}, usage: static provider fed by the "
                     "demo) + kube-scheduler 'drsched'")
        self.watch = PodWatch(self.cp, nodes, pods, self.workdir / "usage.yaml")
        # The static provider re-reads the usage file every 0.5 s (harness.extender_proc); a node whose
        # sample is older than 30 s is stale, which in this demo means the usage file stopped following.
        self.extender = ExtenderProcess(kubeconfig=self.cp.kubeconfig, log_path=self.workdir / "logs" / "extender.log",
                                        policy=self.args.policy, usage_file=self.watch.usage_path,
                                        extra=("--max-usage-age-s=30",)).start()
        ready = self._ask("/readyz") or {}
        self.served = f"{ready.get('policy')} {ready.get('version')}"
        if ready.get("status") == "degraded":
            self.served += f" -- DEGRADED: {ready.get('reason')}"
        self.out.say(f"      extender {self.extender.url}: {self.served}")
        # The first usage poll may run before the node watch has listed the nodes: wait for a fresh sample.
        self.cp.poll(lambda: _usage_fresh(self._ask("/debug/usage"), nodes), timeout=30,
                     what="node usage in the extender")
        config = self.cp.render_scheduler_config("drsched-scheduler.yaml", extender_url=self.extender.url)
        self.cp.start_scheduler("drsched-scheduler", config_path=config)
        self.out.say(f"      kube-scheduler 'drsched': {config}")

    def submit(self, pods: list[DemoPod]) -> dict[str, dict | None]:
        """Submit each pod to both pools at its time; return the explain answers taken just before."""
        watch = self.pod_watch()
        self.out.say(f"[4/5] workload: {len(pods)} pods (cpu/net/io) over {pods[-1].at:.0f}s, each to both "
                     "schedulers")
        explains: dict[str, dict | None] = {}
        drsched_nodes = [n.name("drsched") for n in watch.nodes]
        t0 = time.monotonic()
        for k, pod in enumerate(pods):
            while (wait := t0 + pod.at - time.monotonic()) > 0:
                self._tick(k, len(pods), t0)
                time.sleep(min(wait, TICK_S))
            objs = {pool: self._pod_object(pod, pool) for pool in POOLS}
            # What drsched will see when kube-scheduler asks: explain the same ExtenderArgs first.
            body = {"Pod": self.cp.api.sanitize_for_serialization(objs["drsched"]), "Nodes": None,
                    "NodeNames": drsched_nodes}
            explains[pod.name] = self._ask("/debug/explain", body)
            for pool in POOLS:
                self.cp.create_pod(objs[pool], namespace=NAMESPACES[pool])
        deadline = time.monotonic() + BIND_TIMEOUT_S
        self._tick(len(pods), len(pods), t0)
        while not watch.all_placed() and time.monotonic() < deadline:
            time.sleep(TICK_S)
            self._tick(len(pods), len(pods), t0)
        self._tick(len(pods), len(pods), t0, force=True)
        return explains

    def pod_watch(self) -> PodWatch:
        if self.watch is None:
            raise RuntimeError("drsched is not started yet")
        return self.watch

    def _tick(self, submitted: int, total: int, t0: float, *, force: bool = False) -> None:
        watch = self.pod_watch()
        watch.tick()
        placed, done = watch.placed, watch.completed
        self.out.progress(
            f"      t={time.monotonic() - t0:3.0f}s  submitted {submitted}/{total}  placed: drsched "
            f"{len(placed['drsched'])}, default {len(placed['default'])}  completed: drsched {done['drsched']}, "
            f"default {done['default']}", force=force)

    def _pod_object(self, pod: DemoPod, pool: str):
        cpu, mem = pod.requests
        obj = small_pod(pod.name, scheduler_name=SCHEDULER_NAMES[pool], cpu=f"{round(cpu * 1000)}m",
                        memory=f"{round(mem * 1024)}Mi", run_for=f"{pod.run_for:g}s",
                        labels={"app.kubernetes.io/part-of": "drsched-demo", "drsched.io/demo-class": pod.kind})
        obj.metadata.namespace = NAMESPACES[pool]
        obj.metadata.annotations["drsched.io/profile"] = pod.profile
        obj.spec.node_selector = {POOL_LABEL: pool}
        return obj

    def decisions(self, pods: list[DemoPod]) -> dict[str, dict | None]:
        """The scores kube-scheduler actually got for each drsched pod (explain's last_decision)."""
        ns = NAMESPACES["drsched"]
        return {p.name: (self._ask(f"/debug/explain?namespace={ns}&name={p.name}") or {}).get("last_decision")
                for p in pods}

    def _ask(self, path: str, body: Any = None) -> dict | None:
        """The extender's JSON answer to GET (or POST ``body`` to) ``path``; None when it gave none, which the
        report shows as a missing answer rather than ending the demo."""
        if self.extender is None:
            raise RuntimeError("drsched is not started yet")
        try:
            status, raw = self.extender.request(path, body)
            return json.loads(raw) if status == 200 else None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            log.warning("extender request failed path=%s error=%s", path.split("?")[0], exc)
            return None

    def pending_reasons(self, pods: list[DemoPod]) -> list[str]:
        placed = self.pod_watch().placed
        return [self.cp.describe_pod(p.name, namespace=NAMESPACES[pool])
                for pool in POOLS for p in pods if p.name not in placed[pool]]

    def keep_running(self) -> None:
        kubectl = self.bins["kubectl"]
        self.out.say("")
        self.out.say("Still running; Ctrl-C stops everything. Try:")
        self.out.say(f"  export KUBECONFIG={self.cp.kubeconfig}")
        self.out.say(f"  {kubectl} get pods -A -o wide")
        self.out.say(f"  {kubectl} get nodes -L {POOL_LABEL}")
        extender = self.extender
        if extender is None:
            raise RuntimeError("drsched is not started yet")
        self.out.say(f"  curl -s '{extender.debug_url}/debug/explain?namespace=demo-drsched&name=cpu-01'")
        self.out.say(f"  curl -s {extender.url}/readyz; curl -s {extender.debug_url}/debug/usage")
        self.out.say(f"  logs: {self.workdir / 'logs'}")
        while True:  # keep the usage file following the pods as KWOK completes them
            self.pod_watch().tick()
            time.sleep(1)

    def close(self) -> None:
        """Stop every process (scheduler first, then the extender, then the control plane); drop the workdir."""
        if self._cp is not None:
            self._cp.stop_component("drsched-scheduler")
        if self.extender is not None:
            self.extender.stop()
        if self._cp is not None:
            self._cp.close()
        if self.args.out is None:
            shutil.rmtree(self.workdir, ignore_errors=True)


def _usage_fresh(answer: dict | None, nodes: list[DemoNode]) -> bool | None:
    """True once the extender's /debug/usage ``answer`` has a fresh sample of every node of both pools."""
    status = (answer or {}).get("nodes") or {}
    names = [n.name(pool) for n in nodes for pool in POOLS]
    return True if all(not (status.get(n) or {"stale": True}).get("stale", True) for n in names) else None


def run(demo: Demo, args: argparse.Namespace) -> int:
    out = demo.out
    rng = np.random.default_rng(args.seed)
    nodes = make_nodes(args.nodes, rng)
    pods = make_pods(args.pods, rng, submit_s=args.submit_seconds, run_for_s=args.run_for)
    demo.build()
    started = time.monotonic()
    demo.start_cluster(nodes)
    demo.start_drsched(nodes, pods)
    explains = demo.submit(pods)
    placed = demo.pod_watch().placed
    decisions = demo.decisions(pods)
    out.say(f"[5/5] report (policy: {demo.served})")
    at = busiest_moment(pods)
    live = sum(1 for p in pods if p.at <= at < p.at + p.run_for)
    summaries = {pool: summarize(nodes, pods, placed[pool]) for pool in POOLS}
    report = [
        "",
        "Where each pod landed. 'after' = the node's busiest resource once the pod arrived (background + expected",
        "demand of running pods); drsched's view = the extender's top nodes just before: score 0-10 and the",
        "after-placement bottleneck it scored on.",
        *pod_table(pods, nodes, placed, decisions, explains),
        "",
        f"Node load at t={at:.0f}s, the busiest moment ({live} pods running), background + expected demand "
        "('!' = over 100%):",
        *node_table(nodes, pods, placed, at),
        "",
        "Summary over every arrival:",
        *summary_lines(summaries),
    ]
    missing = demo.pending_reasons(pods)
    if missing:
        report += ["", f"NOT PLACED within {BIND_TIMEOUT_S:.0f}s:", *missing]
    for line in report:
        out.say(line)
    out.say(f"\ndemo took {time.monotonic() - started:.0f}s after the build")
    if args.out is not None:
        (demo.workdir / "report.txt").write_text("\n".join(report) + "\n")
        (demo.workdir / "report.json").write_text(json.dumps({
            "policy": demo.served, "seed": args.seed,
            "nodes": [{"label": n.label, "kind": n.kind, "capacity": n.capacity.tolist(),
                       "background": n.background.tolist(), "busy": n.busy} for n in nodes],
            "pods": [{"name": p.name, "kind": p.kind, "at": p.at, "run_for": p.run_for, "demand": p.demand,
                      "drsched": placed["drsched"].get(p.name), "default": placed["default"].get(p.name),
                      "scores": (decisions.get(p.name) or {}).get("scores")} for p in pods],
            "summary": {pool: vars(s) for pool, s in summaries.items()},
            "completed": demo.pod_watch().completed,
        }, indent=1))
    if args.keep_running:
        demo.keep_running()
    return 1 if missing else 0


def main(argv: list[str] | None = None) -> int:
    """Run the demo with command-line ``argv``; the exit code (0, 1 failed or a pod not placed, 130 interrupted)."""
    args = parse_args(argv)
    setup_logging(level="INFO" if args.verbose else "WARNING", fmt="text")
    out = Out()
    # SIGTERM and SIGINT unwind as KeyboardInterrupt, also when started with SIGINT ignored (a background job
    # of a script: `kill -INT` must stop it); the handlers before are back once the demo returns.
    main_thread = threading.current_thread() is threading.main_thread()
    signals = interrupt_on_signals(signal.SIGTERM, signal.SIGINT) if main_thread else contextlib.nullcontext()
    with signals:
        demo = Demo(args, out)
        code = 0
        try:
            code = run(demo, args)
        except KeyboardInterrupt:
            out.say("\ninterrupted")
            code = 130
        except (ComponentError, TimeoutError) as exc:
            out.say(f"\ndemo failed: {exc}")
            code = 1
        finally:
            out.say("stopping every process ...")
            if main_thread:  # a second Ctrl-C during teardown must not leave processes behind
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            demo.close()
            where = f"; logs and report in {demo.workdir}" if args.out is not None else ""
            out.say(f"stopped{where}")
    return code
