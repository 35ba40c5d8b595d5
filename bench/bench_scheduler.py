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
histogram_quantile; no-op: its own /stats).

What the control plane (kube-scheduler, kube-apiserver, etcd, KWOK) spent per pod, per arm: to the last
binding, and until KWOK has made every pod Running (settled: KWOK's status writes trail the bindings, so
a window ending at the last binding leaves out more of each pod's work the faster an arm binds), and
settled less the idle rate (each process's CPU over ``--idle-s`` seconds after settling, times the
settled window: KWOK writes every node's status every 20-45 s whether anything is scheduled or not, and
every watcher of nodes gets it, so a slower arm pays more per pod); drsched's settled figure against the
no-op extender's (target within 15 %). Then what the control plane did, per scheduled pod, from
kube-apiserver's /metrics and its audit log (``bench/cp_requests.py``): requests by client (user agent) x
verb x resource, requests by verb x resource, watch events and KiB by resource, etcd requests, watches
open. ``--no-audit`` runs without the audit log (no per-client rows; the apiserver
then skips a JSON line per request). ``--repeat N`` runs the no-op and drsched arms N times, alternating
(ABAB...), on the same cluster, and ends with a table of the rounds (``bench/rounds.py``): per round drsched's
ratio to the no-op extender of that round and the extender's CPU per scheduled pod, then the median, min and
max over the rounds; the ratio to no-op printed last, and the README's row, is that median. One round moves
with the machine's load more than with the code; use 5 rounds or more for a figure to argue from. Prints
figures; asserts nothing.

Every run writes a new file, ``results/bench/runs/scheduler-<UTC yyyymmddTHHMM of the start>.json``
(``bench/record.py``; ``--results`` elsewhere), and refuses to start when that file exists: the README's row
is the newest run with >= 5 rounds (``scripts/readme_tables.py``), the others stay beside it.

    python bench/bench_scheduler.py                          # 500 nodes x 2,000 pods
    python bench/bench_scheduler.py --nodes 100 --pods 300   # a quick look
    python bench/bench_scheduler.py --repeat 5               # no-op / drsched interleaved, five rounds
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

import cp_requests  # (bench/ is on the path: run as a script)
import rounds
import yaml
from record import ResultsExist, load_average, refuse_existing, run_path
from record import write as write_results

from harness.cluster import ControlPlane, ensure_binaries
from harness.extender_proc import ExtenderProcess, histogram_quantile, parse_metrics, sum_samples
from harness.objects import KwokNodeShape, fake_node, small_pod
from harness.procs import Component, free_port

ROOT = Path(__file__).resolve().parent.parent

TARGET_RATIO = 0.7
TARGET_NOOP_RATIO = 0.85
SCHEDULER = "drsched-scheduler"
PROCESSES = ("extender", "kube-scheduler", "kube-apiserver", "etcd", "kwok")
CONTROL_PLANE = ("kube-scheduler", "kube-apiserver", "etcd", "kwok")
TARGET_CONTROL_PLANE_EXCESS = 0.15  # drsched's control-plane CPU per pod at most 15 % above the no-op arm's
_TICK = os.sysconf("SC_CLK_TCK")


def _wait(done, deadline: float, why) -> None:
    """Poll ``done()`` every 0.25 s until it holds; past ``deadline`` (perf_counter) raise TimeoutError(why())."""
    while not done():
        if time.perf_counter() > deadline:
            raise TimeoutError(why())
        time.sleep(0.25)


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


def unbound(cp: ControlPlane, namespace: str, *, count: bool = False) -> int:
    """Pods of ``namespace`` without a node: 0 or 1 (whether any is left), all of them with ``count``.

    The loop asks 4 times a second for a page of one: the whole list, every waiting pod as JSON each
    time, cost kube-apiserver more per scheduled pod the slower an arm ran (and the bench's own process
    decoding megabytes took a core from the processes measured)."""
    resp = cp.core.list_namespaced_pod(namespace, field_selector="spec.nodeName=", _preload_content=False,
                                       **({} if count else {"limit": 1}))
    body = json.loads(resp.data)
    return len(body["items"]) or int(bool((body.get("metadata") or {}).get("continue")))  # an empty page, more


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


def scrape(cp: ControlPlane) -> dict[str, float]:
    """kube-apiserver's /metrics, as the admin."""
    resp = cp.api.call_api("GET", f"{cp.api_url}/metrics", _request_timeout=30,
                           header_params={"Accept": "text/plain", "User-Agent": cp.api.user_agent})
    resp.read()
    return parse_metrics(resp.data.decode())


def not_running(cp: ControlPlane, namespace: str) -> int:
    """0 once KWOK has made every pod of ``namespace`` Running, else 1 (a page of one, as ``unbound``)."""
    resp = cp.core.list_namespaced_pod(namespace, field_selector="status.phase!=Running", limit=1,
                                       _preload_content=False)
    body = json.loads(resp.data)
    return len(body["items"]) or int(bool((body.get("metadata") or {}).get("continue")))


def schedule_all(cp: ControlPlane, config: Path, namespace: str, n: int, timeout: float,
                 extender_pid: int | None, *, idle_s: float, audit: cp_requests.AuditTail | None) -> dict:
    """Start the drsched scheduler on the waiting pods and time it from its /readyz until none is unbound.

    CPU-seconds of each process: to the last binding (``cpu_per_pod``, the bench's first figure), and on
    until KWOK has made every pod Running (``cpu_settled_per_pod``): KWOK writes pod statuses behind the
    bindings, so a window that ends at the last binding leaves more of that per-pod work out the faster
    an arm binds. Then ``idle_s`` seconds of the settled cluster give each process's idle rate, taken
    off the settled figure over its window (``cpu_above_idle_per_pod``). What the apiserver served, from
    just before the scheduler started until settled: ``cp_requests.arm_requests``."""
    metrics0 = scrape(cp)  # before the scheduler starts: it binds pods before its /readyz answers
    if audit is not None:
        audit.skip()
    scheduler = cp.start_scheduler(SCHEDULER, config_path=config)
    pids = {"extender": extender_pid, "kube-scheduler": scheduler.proc.pid,
            **{name: cp.components[name].proc.pid for name in ("kube-apiserver", "etcd", "kwok")}}
    cpu0 = {name: cpu_seconds(pid) for name, pid in pids.items()}
    start = time.perf_counter()
    deadline = start + timeout
    _wait(lambda: unbound(cp, namespace) == 0, deadline,
          lambda: f"{unbound(cp, namespace, count=True)} of {n} pods still unbound after {timeout:.0f}s")
    elapsed = time.perf_counter() - start
    cpu1 = {name: cpu_seconds(pid) for name, pid in pids.items()}
    _wait(lambda: not_running(cp, namespace) == 0, deadline,
          lambda: f"pods of {namespace} not all Running after {timeout:.0f}s")
    settled = time.perf_counter() - start
    cpu2 = {name: cpu_seconds(pid) for name, pid in pids.items()}
    lines = audit.read() if audit is not None else None
    requests = cp_requests.arm_requests(metrics0, scrape(cp), lines, n)
    idle = {}
    if idle_s > 0:
        t2, c2 = time.perf_counter(), {name: cpu_seconds(pid) for name, pid in pids.items()}
        time.sleep(idle_s)
        idle = {name: (cpu_seconds(pid) - c2[name]) / (time.perf_counter() - t2) for name, pid in pids.items()}
    cp.stop_component(SCHEDULER)
    whole = {name: cpu2[name] - cpu0[name] for name in pids}
    return {"pods_s": n / elapsed, "seconds": elapsed, "settled_s": settled,
            "cpu_per_pod": {k: (cpu1[k] - cpu0[k]) / n for k in pids},
            "cpu_settled_per_pod": {k: v / n for k, v in whole.items()},
            "idle_cpu_s_per_s": idle,
            "cpu_above_idle_per_pod": {k: (v - idle[k] * settled) / n for k, v in whole.items()} if idle else {},
            "control_plane": requests}


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
    load = load_average()
    create_pods(cp, namespace, args.pods, args.threads)
    result = schedule_all(cp, render_config(cp, extender_url=url, qps=args.qps), namespace, args.pods,
                          args.timeout, pid, idle_s=args.idle_s, audit=args.audit_tail)
    result["load"] = (load, load_average())
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
    cp = ControlPlane(workdir=workdir, binaries=ensure_binaries(), audit=args.audit)
    args.audit_tail = cp_requests.AuditTail(cp.audit_log) if cp.audit_log is not None else None
    arms: dict[str, dict] = {}
    try:
        cp.start()
        cp.api.user_agent = "bench-scheduler"  # its own requests, apart from the extender's in the audit log
        t = time.perf_counter()
        create_nodes(cp, args.nodes, args.threads)
        print(f"{args.nodes} nodes Ready in {time.perf_counter() - t:.1f}s", flush=True)

        arms["no extender"] = run_arm(cp, args, "bench-without", None, None)
        for r in range(1, args.repeat + 1):
            run_round(cp, args, workdir, arms, suffix="" if r == 1 else f" #{r}")
    finally:
        cp.close()
    return arms


def run_round(cp: ControlPlane, args: argparse.Namespace, workdir: Path, arms: dict, *, suffix: str) -> None:
    """The no-op extender's arm, then the baseline tree's (if any), then drsched's; each extender runs only
    during its own arm (an idle drsched would still watch the other arms' pods)."""
    ns = suffix.replace(" #", "-")
    noop = NoopProcess(workdir).start()
    try:
        arm = arms[f"no-op extender{suffix}"] = run_arm(cp, args, f"bench-noop{ns}", noop.url,
                                                          noop.component.proc.pid)
        stats = noop.get("/stats") or {}
        arm["latency"] = {v: (s["p50_s"], s["p99_s"], s["sum_s"] / max(s["count"], 1), s["count"])
                          for v, s in stats.items()}
    finally:
        noop.stop()
    extenders: list[tuple[str, ExtenderProcess]] = []
    if args.baseline_tree is not None:
        base = BaselineExtender(kubeconfig=cp.kubeconfig, log_path=workdir / f"extender-baseline{ns}.log",
                                policy=args.policy)
        base.tree = args.baseline_tree.resolve()
        extenders.append((f"drsched, baseline tree{suffix}", base))
    extenders.append((f"drsched{suffix}", ExtenderProcess(kubeconfig=cp.kubeconfig,
                                                          log_path=workdir / f"extender{ns}.log",
                                                          policy=args.policy)))
    for name, ext in extenders:
        try:
            ext.start()
            arm = arms[name] = run_arm(cp, args, f"bench-{'baseline' if 'baseline' in name else 'with'}{ns}",
                                       ext.url, ext.component.proc.pid)
            arm["latency"] = drsched_latency(ext)
        finally:
            ext.stop()


def control_plane_ms(arm: dict, key: str = "cpu_per_pod") -> float:
    """CPU ms per scheduled pod of kube-scheduler + kube-apiserver + etcd + KWOK."""
    return 1000 * sum(arm[key].get(p, 0.0) for p in CONTROL_PLANE)


def control_plane_excess(arms: dict) -> list[tuple[str, float, float]]:
    """Per round: (suffix, drsched's settled control-plane CPU per pod over the no-op arm's - 1, the same above
    idle)."""
    out = []
    for name in arms:
        if name.startswith("drsched") and not name.startswith("drsched, baseline"):
            suffix = name.removeprefix("drsched")
            noop, mine = arms[f"no-op extender{suffix}"], arms[name]
            above = (control_plane_ms(mine, "cpu_above_idle_per_pod") / control_plane_ms(noop, "cpu_above_idle_per_pod")
                     - 1) if noop.get("cpu_above_idle_per_pod") else float("nan")
            out.append((suffix, control_plane_ms(mine, "cpu_settled_per_pod") /
                        control_plane_ms(noop, "cpu_settled_per_pod") - 1, above))
    return out


def report(args: argparse.Namespace, arms: dict) -> None:
    without, noop, drsched = (arms[k]["pods_s"] for k in ("no extender", "no-op extender", "drsched"))
    ratio, noop_ratio = drsched / without, drsched / noop
    print(f"\n{args.nodes} nodes x {args.pods} pods, stock kube-scheduler, percentageOfNodesToScore 100")
    print(f"  without extender: {without:8.1f} pods/s")
    print(f"  no-op extender:   {noop:8.1f} pods/s   ({noop / without:.2f} of no extender)")
    print(f"  with extender:    {drsched:8.1f} pods/s   (policy {args.policy})")
    verdict = "met" if ratio >= TARGET_RATIO else "MISSED"
    print(f"  ratio:            {ratio:8.2f}        (target >= {TARGET_RATIO}: {verdict})")
    print(f"  ratio to no-op:   {noop_ratio:8.2f}        (round 1; over the rounds: the end)")
    if "drsched, baseline tree" in arms:
        base = arms["drsched, baseline tree"]["pods_s"]
        print(f"  baseline tree ({args.baseline_tree}): {base:.1f} pods/s, {base / noop:.2f} of the no-op extender")
    print("\n  CPU ms per scheduled pod  " + " ".join(f"{p:>14}" for p in PROCESSES) + f" {'total':>8}")
    for arm, res in arms.items():
        cpu = res["cpu_per_pod"]
        print(f"  {arm:<25} " + " ".join(f"{1000 * cpu[p]:>14.2f}" for p in PROCESSES)
              + f" {1000 * sum(cpu.values()):>8.2f}")
    print("\n  control plane (kube-scheduler + kube-apiserver + etcd + KWOK), CPU ms per scheduled pod: to the last"
          "\n  binding; until every pod is Running (settled); settled less the idle rate; seconds to each")
    print(f"  {'arm':<25} {'bound':>8} {'settled':>8} {'above idle':>11} {'idle cores':>11} {'s bound':>8} "
          f"{'settled':>8} {'load':>12}")
    for arm, res in arms.items():
        idle = sum(res["idle_cpu_s_per_s"].get(p, 0.0) for p in CONTROL_PLANE)
        above = f"{control_plane_ms(res, 'cpu_above_idle_per_pod'):.2f}" if res["cpu_above_idle_per_pod"] else "-"
        print(f"  {arm:<25} {control_plane_ms(res):>8.2f} {control_plane_ms(res, 'cpu_settled_per_pod'):>8.2f} "
              f"{above:>11} {idle:>11.3f} {res['seconds']:>8.1f} {res['settled_s']:>8.1f} "
              f"{res['load'][0]:>5.1f} -> {res['load'][1]:<4.1f}")
    for suffix, excess, above in control_plane_excess(arms):
        verdict = "met" if excess <= TARGET_CONTROL_PLANE_EXCESS else "MISSED"
        print(f"  drsched{suffix} vs no-op extender{suffix}: control plane settled {100 * excess:+.0f} % per pod "
              f"(target <= +{100 * TARGET_CONTROL_PLANE_EXCESS:.0f} %: {verdict}); above idle {100 * above:+.0f} %")
    print()
    for line in cp_requests.render(arms):
        print(line)
    fmt = lambda x: "-" if x is None else f"{1000 * x:.2f} ms"  # noqa: E731
    print("\n  extender time per verb, arrival to encoded reply (parsing included)")
    for arm in [a for a in arms if "latency" in arms[a]]:
        for verb, (p50, p99, mean, count) in arms[arm]["latency"].items():
            print(f"  {arm:<22} {verb:<10}  p50 {fmt(p50):>9}  p99 {fmt(p99):>9}  mean {fmt(mean):>9}"
                  f"  ({count:.0f} requests)")
    summary = rounds.summary(arms)
    print()
    for line in rounds.render(summary):
        print(line)
    over = summary["ratio_to_noop"]
    verdict = "met" if over["median"] >= TARGET_NOOP_RATIO else "MISSED"
    print(f"ratio to no-op extender: {over['median']:.2f} (median of {over['n']} rounds, {over['min']:.2f}-"
          f"{over['max']:.2f}; target >= {TARGET_NOOP_RATIO}: {verdict})")


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
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of the no-op / (baseline tree) / drsched arms, in turn (default 1)")
    parser.add_argument("--idle-s", type=float, default=10.0,
                        help="seconds after each arm over which every process's idle CPU rate is read (0: none)")
    parser.add_argument("--no-audit", dest="audit", action="store_false",
                        help="run kube-apiserver without its audit log (no per-client request rows)")
    parser.add_argument("--results", default=None,
                        help="write the figures here, a file that does not exist yet ('' = do not write; default "
                             "results/bench/runs/scheduler-<UTC start>.json, read by the README's table)")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.idle_s < 0:
        parser.error("--repeat must be >= 1 and --idle-s >= 0")
    if args.results is None:
        args.results = str(run_path("scheduler"))
    try:
        refuse_existing(args.results)  # now, not after half an hour of measuring
    except ResultsExist as exc:
        parser.error(str(exc))
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
                                 "control_plane_excess": {f"drsched{s}": {"all": e, "above_idle": a}
                                                          for s, e, a in control_plane_excess(arms)},
                                 "rounds": rounds.summary(arms),
                                 "audit": args.audit, "idle_s": args.idle_s, "arms": arms}, load_before=load_before,
                  overwrite=False)
    if args.results:
        print(f"figures: {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
