"""HTTP round-trip latency of the extender's filter and prioritize against a real uvicorn.

For each cluster size a static cluster (nodes with usage, 2 pods per node) is written to a temp dir,
``python -m extender --static-cluster`` is started on a free loopback port, and one keep-alive client
sends kube-scheduler-shaped requests in both payload modes: ``names`` (nodeCacheCapable: ``{"Pod": ...,
"Nodes": null, "NodeNames": [...]}``) and ``nodes`` (the default ``nodeCacheCapable: false``: full v1.Node
objects in ``Nodes.items``, as kube-scheduler serialises them). The floor is ``POST /debug/noop`` with
the same body on the same server (its
loopback debug listener) in the same run, so ``ratio`` = what our work costs over HTTP + JSON
transport. RSS is the server's VmRSS after the run. In-process, the DQN's encode + Q-values over the
whole cluster (what prioritize computes per request) is timed alone. Targets: prioritize p99 2 / 4 / 10 ms
at 100 / 1,000 / 5,000 nodes (names), 5 ms at 100 full nodes; encode + Q-values p50 2 ms at 5,000 nodes;
RSS at 5,000 nodes 142 MiB. Prints figures; asserts nothing.

``--bind-flood N`` adds an arm per size: the extender as deployed with binding (HTTPS, client CA, bind
on), prioritize timed by a client holding the scheduler's certificate, in blocks that alternate between
alone and while N processes without a certificate POST ``/bind`` as fast as they can (each gets 403).
It prints both p50/p99, the flood's rate, and how many binds got through (must be 0). Prints figures;
asserts nothing.

    python bench/bench_extender.py                       # 100, 1000, 5000 nodes, all nodes per request
    python bench/bench_extender.py --sizes 5000 --candidate-frac 0.1 --requests 1000
    python bench/bench_extender.py --sizes 1000 --bind-flood 2
    python bench/bench_extender.py --modes names --rounds 3 --baseline-tree /tmp/base \
        --results results/bench/extender-incremental.json   # before / after, same run, arms alternating

``--baseline-tree DIR`` serves from another checkout too (``git worktree add /tmp/base main``), one server
per size, tree and round, the trees alternating (and which goes first), and prints per tree the median and
range over the rounds of the server CPU per request: the comparison a busy machine still allows.

``--pin`` (the default where this process may run on two CPUs or more; ``--no-pin`` turns it off) puts each
server on one CPU and this process, the load generator timing the requests, on another
(``os.sched_setaffinity``; the printout and the record say which). Why: a latency is the client's clock from
send to reply, and on a shared 2-core machine an unpinned client and server queue for the same core, so a
p99 then measures the scheduler's choice of core as much as the server. Processes started from here (the
in-process workers) inherit the client's CPU; the ``--bind-flood`` flooders get back every CPU this run was
allowed, as before. Unpinned figures are what the machine gives both together.

Every run writes a new ``results/bench/runs/extender-<UTC yyyymmddTHHMM of the start>.json``
(``bench/record.py``; ``--results`` elsewhere) and refuses to start when that file exists; the README's rows
are the newest run of this checkout alone at 100, 1,000 and 5,000 names-mode nodes, else the older
``results/bench/extender.json`` (``scripts/readme_tables.py``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy, as the extender serves (encode + Q is timed in-process)
import numpy as np  # noqa: E402
from record import ResultsExist, commit_of, load_average, refuse_existing, run_path  # noqa: E402  (bench/ is on the path)
from record import write as write_results  # noqa: E402

from harness.pki import Pki  # noqa: E402
from harness.procs import free_port  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

BIND = json.dumps({"PodName": "victim", "PodNamespace": "other-tenant", "PodUID": "u", "Node": "node-00000"}).encode()
TARGET_P99_MS = {("names", 100): 2.0, ("names", 1000): 4.0, ("names", 5000): 10.0, ("nodes", 100): 5.0}
TARGET_ENCODE_Q_MS = 2.0
TARGET_RSS_MIB = 142.0
POD = {
    "metadata": {"name": "bench-pod", "namespace": "default", "uid": "bench-uid",
                 "annotations": {"drsched.io/profile": "cpu=1,mem=2,net=100,disk=20"}},
    "spec": {"containers": [{"name": "main", "image": "busybox",
                             "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]},
    "status": {"phase": "Pending"},
}


def write_cluster(path: Path, n: int, seed: int = 0) -> list[dict]:
    """The static cluster file; returns each node as a v1.Node."""
    rng = np.random.default_rng(seed)
    names = [f"node-{i:05d}" for i in range(n)]
    nodes = []
    lines = ["nodes:"]
    for name in names:
        cpu = int(rng.choice([8, 16, 32]))
        mem = cpu * 4
        nodes.append(v1_node(name, cpu, mem))
        lines.append(f"- {{name: {name}, cpu: '{cpu}', memory: {mem}Gi, "
                     f"usage: {{cpu: '{rng.uniform(0, 0.8) * cpu:.2f}', "
                     f"memory: {rng.uniform(0.1, 0.9) * mem:.2f}Gi, net: {rng.uniform(0, 1000):.0f}M, "
                     f"disk: {rng.uniform(0, 400):.0f}M}}}}")
    lines.append("pods:")
    for i in range(n * 2):
        lines.append(f"- {{name: p{i}, node: {names[i % n]}, cpu: 100m, memory: 256Mi}}")
    path.write_text("\n".join(lines) + "\n")
    return nodes


def v1_node(name: str, cpu: int, mem_gib: int) -> dict:
    """A v1.Node as kube-scheduler sends it with nodeCacheCapable false (informer copy, managedFields dropped)."""
    return {
        "metadata": {"name": name, "uid": f"0b6f3c9e-{name}", "resourceVersion": "48151623",
                     "creationTimestamp": "2026-11-29T09:00:00Z",
                     "labels": {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                                "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
                                "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "m5.2xlarge",
                                "topology.kubernetes.io/region": "eu-west-1",
                                "topology.kubernetes.io/zone": "eu-west-1a"},
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0", "drsched.io/net-mbps": "1250",
                                     "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
        "spec": {"podCIDR": "10.244.3.0/24", "podCIDRs": ["10.244.3.0/24"], "providerID": f"aws:///eu-west-1a/{name}"},
        "status": {
            "capacity": {"cpu": str(cpu), "ephemeral-storage": "104845292Ki", "hugepages-2Mi": "0",
                         "memory": f"{mem_gib}Gi", "pods": "110"},
            "allocatable": {"cpu": str(cpu), "ephemeral-storage": "96625420948", "hugepages-2Mi": "0",
                            "memory": f"{mem_gib}Gi", "pods": "110"},
            "conditions": [{"type": t, "status": "True" if t == "Ready" else "False", "reason": f"Kubelet{t}",
                            "message": "kubelet is posting ready status" if t == "Ready" else "ok",
                            "lastHeartbeatTime": "2026-11-30T10:00:00Z", "lastTransitionTime": "2026-11-29T09:00:00Z"}
                           for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")],
            "addresses": [{"type": "InternalIP", "address": "10.0.3.17"}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": "ec2a", "systemUUID": "ec2a", "bootID": "b0", "kernelVersion": "6.1.0",
                         "osImage": "Debian GNU/Linux 12", "containerRuntimeVersion": "containerd://1.7.24",
                         "kubeletVersion": "v1.35.4", "kubeProxyVersion": "", "operatingSystem": "linux",
                         "architecture": "amd64"},
        },
    }


def encode_q_ms(cluster: Path, count: int) -> tuple[float, float] | None:
    """p50 of ``policy.features.encode`` + the served model's Q-values over the whole cluster, in-process:
    (wall ms, CPU ms of this thread). On a shared machine the CPU figure is what the call costs on its own
    core; the wall figure adds the time spent waiting for one."""
    from extender.heap import keep_freed_memory
    from extender.static_cluster import load_static_cluster, to_samples
    from kube.cache import ClusterCache
    from policy.features import encode
    from policy.model import ModelError, load_model
    from policy.state import PodView

    keep_freed_memory()  # as the server does at start
    try:
        model = load_model(ROOT / "policy" / "models" / "default.npz")
    except ModelError:
        return None
    static = load_static_cluster(cluster, default_net_mbps=1250, default_disk_mbps=500)
    cache = ClusterCache()
    cache.replace_nodes(static.nodes)
    cache.replace_pods(static.pods)
    now = time.time()
    cache.apply_usage(to_samples(static.usage, now))
    snap = cache.view().snapshot(now)
    pod = PodView(requests=[0.5, 1.0], demand=[1.0, 2.0, 100.0, 20.0], demand_source="annotation")
    out, cpu = np.empty(count), np.empty(count)
    for i in range(count + 10):
        start, start_cpu = time.perf_counter(), time.thread_time()
        model.q_values(encode(snap, pod))
        if i >= 10:
            out[i - 10], cpu[i - 10] = time.perf_counter() - start, time.thread_time() - start_cpu
    return float(np.percentile(out, 50)) * 1000.0, float(np.percentile(cpu, 50)) * 1000.0


def prioritize_cpu_ms(cluster: Path, count: int, policy: str) -> dict:
    """Thread CPU p50 (ms) of one names-mode prioritize in-process, from the body's bytes to the encoded reply
    (``extender.fastwire.answer``, the server's path without HTTP): ``steady`` with the cache unchanged
    between requests, ``churn`` with a pod bound into the cache before each one (every bind makes a new
    cache view, as in a live cluster). Runs the code of the checkout it is started in. Where that code keeps
    rows across requests (``Runtime.rows``), ``*_from_scratch`` is the same request with encoding from
    scratch, interleaved request by request with the other in the same process (one bind before each)."""
    from extender import decide
    from extender.fastwire import answer, parse_args
    from extender.heap import keep_freed_memory
    from extender.runtime import Runtime, load_policy
    from extender.settings import build_settings
    from extender.static_cluster import load_static_cluster, to_samples
    from extender.telemetry import Telemetry
    from kube.cache import ClusterCache, PodRecord

    keep_freed_memory()
    settings = build_settings(static_cluster=str(cluster), policy=policy, log_level="WARNING")
    static = load_static_cluster(cluster, default_net_mbps=1250, default_disk_mbps=500)
    cache = ClusterCache()
    cache.replace_nodes(static.nodes)
    cache.replace_pods(static.pods)
    cache.apply_usage(to_samples(static.usage, time.time()))
    telemetry = Telemetry()
    served = load_policy(settings, telemetry)[0]
    runtimes = {"": Runtime(settings=settings, cache=cache, telemetry=telemetry, policy=served)}
    if hasattr(runtimes[""], "rows"):
        runtimes["_from_scratch"] = Runtime(settings=settings, cache=cache, telemetry=telemetry, policy=served,
                                            rows=_FromScratch(decide.whole))
    names = cache.node_names
    body = json.dumps({"Pod": POD, "Nodes": None, "NodeNames": list(names)}).encode()
    out = {}
    for arm in ("steady", "churn"):
        cpu = {suffix: np.empty(count) for suffix in runtimes}
        for i in range(count + 20):
            for suffix, rt in runtimes.items():
                if arm == "churn":
                    cache.upsert_pod(PodRecord(namespace="churn", name=f"c{i}{suffix}", uid=f"churn-{i}{suffix}",
                                               node=names[i % len(names)], requests=np.array([0.01, 0.01]),
                                               demand=np.zeros(4), demand_source="requests", bound_at=time.time()))
                start = time.thread_time()
                status = answer(rt, "prioritize", parse_args(body))[1]
                if i >= 20:
                    cpu[suffix][i - 20] = time.thread_time() - start
                if status != 200:
                    raise SystemExit(f"in-process prioritize answered {status}")
        for suffix, times in cpu.items():
            out[arm + suffix] = float(np.percentile(times, 50)) * 1000.0
    return out


class _FromScratch:
    """A stand-in for ``Runtime.rows`` that encodes every request from scratch (``extender.decide.whole``)."""

    def __init__(self, whole) -> None:
        self.whole = whole


def cpu_seconds(pid: int) -> float:
    """utime + stime of the server (/proc/<pid>/stat): its CPU per request is steadier than wall time on a
    busy machine, where a request's wall time is mostly waiting for a core."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def timings(conn: http.client.HTTPConnection, path: str, body: bytes, count: int, warmup: int) -> np.ndarray:
    headers = {"Content-Type": "application/json"}
    out = np.empty(count)
    for i in range(warmup + count):
        start = time.perf_counter()
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        elapsed = time.perf_counter() - start
        if resp.status != 200:
            raise SystemExit(f"{path}: HTTP {resp.status}")
        if i >= warmup:
            out[i - warmup] = elapsed
    return out * 1000.0


def pin_cpus(allowed: set[int], pin: bool | None) -> tuple[int, int] | None:
    """(server CPU, client CPU) from the CPUs this process may use: the lowest two; None unpinned (``pin``
    False, or None with fewer than two allowed). ``pin`` True with fewer than two: ValueError."""
    if pin is False or (pin is None and len(allowed) < 2):
        return None
    if len(allowed) < 2:
        raise ValueError(f"--pin needs two CPUs; this process may use {sorted(allowed)}")
    server, client = sorted(allowed)[:2]
    return server, client


def start_extender(cluster: Path, port: int, debug_port: int, policy: str, *extra: str,
                   tree: Path = ROOT, cpu: int | None = None) -> subprocess.Popen:
    """``python -m extender`` of checkout ``tree`` (its own code: the working directory comes first on the path),
    on CPU ``cpu`` alone when one is given."""
    env = {**os.environ, "DRSCHED_LOG_LEVEL": "ERROR"}  # a refused flood logs rate-limited WARNINGs only
    proc = subprocess.Popen([sys.executable, "-m", "extender", "--static-cluster", str(cluster), "--port", str(port),
                             "--debug-port", str(debug_port), "--policy", policy, *extra], cwd=tree, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if cpu is not None:
        # Popen returns once the child has exec'd, before the interpreter starts a thread: every thread
        # it makes later (and the child it forks to parse the cluster) inherits the mask
        os.sched_setaffinity(proc.pid, {cpu})
    return proc


def connect(proc: subprocess.Popen, port: int, context: ssl.SSLContext | None = None) -> http.client.HTTPConnection:
    """A keep-alive connection once /readyz answers (HTTPS with `context`)."""
    deadline = time.monotonic() + 120
    while True:
        try:
            conn = (http.client.HTTPSConnection("127.0.0.1", port, timeout=30, context=context) if context
                    else http.client.HTTPConnection("127.0.0.1", port, timeout=30))
            conn.request("GET", "/readyz")
            conn.getresponse().read()
            return conn
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(proc.stderr.read().decode()) from None
            time.sleep(0.2)


def run_size(n: int, args: argparse.Namespace, *, tree: Path = ROOT, in_process: bool = True) -> dict:
    """Both payload modes against one server of checkout ``tree`` on an ``n``-node static cluster, then (with
    ``in_process``) encode + Q in-process."""
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Path(tmp) / "cluster.yaml"
        nodes = write_cluster(cluster, n)
        k = max(1, int(round(n * args.candidate_frac)))
        bodies = {"names": {"Pod": POD, "Nodes": None, "NodeNames": [x["metadata"]["name"] for x in nodes[:k]]},
                  "nodes": {"Pod": POD, "Nodes": {"metadata": {}, "items": nodes[:k]}, "NodeNames": None}}
        bodies = {m: json.dumps(bodies[m], separators=(",", ":")).encode() for m in args.modes.split(",")}
        port, debug_port = free_port(), free_port()
        proc = start_extender(cluster, port, debug_port, args.policy, tree=tree, cpu=args.server_cpu)
        try:
            results = []
            for mode, body in bodies.items():
                res = {"mode": mode, "nodes": n, "candidates": k, "body_kib": len(body) / 1024}
                for verb, p, path in (("noop", debug_port, "/debug/noop"), ("filter", port, "/filter"),
                                      ("prioritize", port, "/prioritize")):
                    # a fresh connection per verb: one left idle while another verb is timed outlives
                    # uvicorn's keep-alive timeout on a loaded machine
                    c = connect(proc, p)
                    cpu0 = cpu_seconds(proc.pid)
                    t = timings(c, path, body, args.requests, args.warmup)
                    res[verb] = (float(np.percentile(t, 50)), float(np.percentile(t, 99)),
                                 1000 * (cpu_seconds(proc.pid) - cpu0) / (args.requests + args.warmup))
                    c.close()
                res["rss_mib"] = rss_mib(proc.pid)
                results.append(res)
            encode_q = encode_q_ms(cluster, args.requests) if args.policy == "model" and in_process else None
            return {"rows": results, "encode_q_ms": encode_q}
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def flood(port: int, ca: str, go, stop, sent, cpus: set[int]) -> None:
    """One flooding process: keep-alive HTTPS without a client certificate, POST /bind while `go` is set (on
    ``cpus``, every CPU the run was allowed: not only the timing client's)."""
    os.sched_setaffinity(0, cpus)
    context = ssl.create_default_context(cafile=ca)
    count = 0
    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
    while not stop.is_set():
        if not go.wait(timeout=0.1):
            continue
        try:
            conn.request("POST", "/bind", body=BIND, headers={"Content-Type": "application/json"})
            conn.getresponse().read()
            count += 1
        except OSError:
            conn.close()
            conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
    with sent.get_lock():
        sent.value += count


def run_flood(n: int, args: argparse.Namespace) -> dict:
    """prioritize p50/p99 over mTLS, alone and under an unauthenticated /bind flood, on one server.

    The two conditions alternate in `--flood-rounds` blocks, so a change in the machine's load during
    the run falls on both alike."""
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Path(tmp) / "cluster.yaml"
        names = [x["metadata"]["name"] for x in write_cluster(cluster, n)]
        k = max(1, int(round(n * args.candidate_frac)))
        body = json.dumps({"Pod": POD, "Nodes": None, "NodeNames": names[:k]}, separators=(",", ":")).encode()
        pki = Pki(Path(tmp) / "pki")
        server = pki.issue("server", common_name="drsched-extender", ips=("127.0.0.1",), server=True)
        client = pki.issue("scheduler", common_name="drsched-scheduler", client=True)
        trusted = ssl.create_default_context(cafile=str(pki.ca.cert))
        trusted.load_cert_chain(str(client.cert), str(client.key))
        port = free_port()
        proc = start_extender(cluster, port, free_port(), args.policy, "--tls-cert-file", str(server.cert),
                              "--tls-key-file", str(server.key), "--tls-client-ca-file", str(pki.ca.cert),
                              "--bind-enabled", "true", cpu=args.server_cpu)
        mp = multiprocessing.get_context("fork")
        go, stop, sent = mp.Event(), mp.Event(), mp.Value("q", 0)
        flooders = []
        try:
            conn = connect(proc, port, trusted)
            res = {"nodes": n, "candidates": k, "flooders": args.bind_flood, "rounds": args.flood_rounds}
            timings(conn, "/prioritize", body, args.requests, args.warmup)  # a fresh server: warm it first
            flooders = [mp.Process(target=flood, args=(port, str(pki.ca.cert), go, stop, sent, args.allowed_cpus))
                        for _ in range(args.bind_flood)]
            for f in flooders:
                f.start()
            per_block = max(1, args.requests // args.flood_rounds)
            alone, flooded, flood_s = [], [], 0.0
            for _ in range(args.flood_rounds):
                alone.append(timings(conn, "/prioritize", body, per_block, 0))
                go.set()
                time.sleep(0.5)  # the flood is at full rate before timing starts
                start = time.perf_counter()
                flooded.append(timings(conn, "/prioritize", body, per_block, 0))
                flood_s += time.perf_counter() - start + 0.5
                go.clear()
                time.sleep(0.2)  # requests in flight drain
            stop.set()
            for f in flooders:
                f.join(timeout=30)
            for key, blocks in (("alone", alone), ("flooded", flooded)):
                t = np.concatenate(blocks)
                res[key] = (float(np.percentile(t, 50)), float(np.percentile(t, 99)))
            res["flood_rate"] = sent.value / flood_s
            conn.request("GET", "/metrics")
            metrics = conn.getresponse().read().decode()
            res["refused"] = _sample(metrics, 'drsched_extender_refused_total{reason="no_client_cert"}')
            res["binds"] = _sample(metrics, "drsched_extender_binds_total")
            conn.close()
            return res
        finally:
            stop.set()
            for f in flooders:
                if f.is_alive():
                    f.terminate()
            proc.terminate()
            proc.wait(timeout=10)


def _sample(metrics: str, prefix: str) -> float:
    return sum(float(line.rpartition(" ")[2]) for line in metrics.splitlines()
               if line.startswith(prefix) and not line.startswith("#") and "_created" not in line)


def _print_rows(rows: list[dict], n: int, *, label: str = "") -> None:
    for r in rows:
        noop = r["noop"][1]
        target = TARGET_P99_MS.get((r["mode"], n), float("nan"))
        print(f"{r['mode']:>5} {r['nodes']:>6} {r['candidates']:>6} {r['body_kib']:>8.1f} | "
              f"{r['noop'][0]:>6.2f}/{r['noop'][1]:>6.2f} ms | {r['filter'][0]:>6.2f}/{r['filter'][1]:>6.2f} ms "
              f"{r['filter'][1] / noop:>5.1f} | {r['prioritize'][0]:>8.2f}/{r['prioritize'][1]:>6.2f} ms "
              f"{r['prioritize'][1] / noop:>5.1f} {target:>6.1f} | {r['rss_mib']:>7.1f} | "
              f"{r['noop'][2]:.2f} / {r['filter'][2]:.2f} / {r['prioritize'][2]:.2f}"
              + (f"  [{label}]" if label else ""), flush=True)


def _summary(rows: list[dict]) -> list[dict]:
    """Per mode, size and tree: median (min-max) over the rounds of the server CPU per request and the p50s."""
    print(f"\n{'mode':>5} {'nodes':>6} {'tree':>8} {'rounds':>6} | server CPU ms/request, median (min-max): "
          f"{'filter':>19} {'prioritize':>19} | p50 ms median: filter, prioritize | RSS MiB")
    out = []
    keys = sorted({(r["mode"], r["nodes"], r["tree"]) for r in rows}, key=lambda k: (k[0], k[1], k[2] != "baseline"))
    for key in keys:
        arm = [r for r in rows if (r["mode"], r["nodes"], r["tree"]) == key]
        fig = {"mode": key[0], "nodes": key[1], "tree": key[2], "rounds": len(arm),
               "rss_mib": float(np.median([r["rss_mib"] for r in arm]))}
        for verb in ("noop", "filter", "prioritize"):
            cpu = [r[verb][2] for r in arm]
            fig[verb] = {"cpu_ms": [float(np.median(cpu)), min(cpu), max(cpu)],
                         "p50_ms": float(np.median([r[verb][0] for r in arm]))}
        out.append(fig)
        f, p = fig["filter"]["cpu_ms"], fig["prioritize"]["cpu_ms"]
        print(f"{key[0]:>5} {key[1]:>6} {key[2]:>8} {len(arm):>6} | {'':>40}{f[0]:>6.2f} ({f[1]:.2f}-{f[2]:.2f}) "
              f"{p[0]:>6.2f} ({p[1]:.2f}-{p[2]:.2f}) | {fig['filter']['p50_ms']:.2f}, {fig['prioritize']['p50_ms']:.2f}"
              f" | {fig['rss_mib']:.1f}", flush=True)
    return out


def run_in_process(args: argparse.Namespace, trees: dict[str, Path]) -> list[dict]:
    """``prioritize_cpu_ms`` per size, round and tree, each in a fresh process of that tree's code."""
    out = []
    print(f"\nin-process prioritize, thread CPU p50 ms ({args.requests} requests per arm)")
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            cluster = Path(tmp) / "cluster.yaml"
            write_cluster(cluster, n)
            for rnd in range(args.rounds):
                for name in (list(trees) if rnd % 2 == 0 else list(trees)[::-1]):
                    tree = trees[name]
                    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--in-process-worker",
                                           str(cluster), "--requests", str(args.requests), "--policy", args.policy],
                                          cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True,
                                          text=True, check=False)
                    if proc.returncode != 0:
                        raise SystemExit(f"in-process worker in {tree} failed:\n{proc.stderr[-2000:]}")
                    ms = json.loads(proc.stdout.strip().splitlines()[-1])
                    out.append({"nodes": n, "tree": name, "round": rnd, **ms})
                    print(f"{n:>6} {name:>8} round {rnd}: " + ", ".join(f"{k} {v:.3f}" for k, v in ms.items()),
                          flush=True)
    for n in sorted({r["nodes"] for r in out}):
        for name in trees:
            arm = [r for r in out if r["nodes"] == n and r["tree"] == name]
            keys = [k for k in arm[0] if k not in ("nodes", "tree", "round")]
            line = "; ".join(f"{k} {np.median([r[k] for r in arm]):.3f} ({min(r[k] for r in arm):.3f}-"
                             f"{max(r[k] for r in arm):.3f})" for k in keys)
            print(f"{n:>6} {name:>8} median (min-max) over {len(arm)} rounds: {line}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,5000", help="comma-separated node counts")
    parser.add_argument("--requests", type=int, default=300, help="timed requests per verb and size")
    parser.add_argument("--warmup", type=int, default=30, help="untimed requests first")
    parser.add_argument("--candidate-frac", type=float, default=1.0,
                        help="fraction of the nodes named per request (kube-scheduler samples >= 100 nodes)")
    parser.add_argument("--modes", default="names,nodes",
                        help="payload modes: names (nodeCacheCapable true), nodes (full v1.Node objects)")
    parser.add_argument("--policy", default="model",
                        help="policy to serve (model falls back to demand-aware when no artifact exists)")
    parser.add_argument("--bind-flood", type=int, default=0, metavar="N",
                        help="also time prioritize over mTLS while N processes without a certificate flood /bind")
    parser.add_argument("--flood-rounds", type=int, default=6,
                        help="alternating alone / flooded blocks the --requests are split into")
    parser.add_argument("--baseline-tree", default=None, metavar="DIR",
                        help="also serve from this checkout (e.g. `git worktree add /tmp/base main`), in the same "
                             "run, alternating with this tree; prints both trees' medians over the rounds")
    parser.add_argument("--rounds", type=int, default=1,
                        help="servers started per size and tree (with --baseline-tree, the arms alternate)")
    parser.add_argument("--results", default=None,
                        help="write the figures here, a file that does not exist yet ('' = do not write; default "
                             "results/bench/runs/extender-<UTC start>.json, read by the README's table)")
    parser.add_argument("--pin", action=argparse.BooleanOptionalAction, default=None,
                        help="each server on one CPU, this client on another (default: on where >= 2 CPUs are "
                             "allowed)")
    parser.add_argument("--in-process", action="store_true",
                        help="also time prioritize in-process (thread CPU, steady and with a bind before each "
                             "request), per tree in fresh processes, after the HTTP runs")
    parser.add_argument("--http", action=argparse.BooleanOptionalAction, default=True,
                        help="the HTTP runs (--no-http: only --in-process)")
    parser.add_argument("--in-process-worker", metavar="CLUSTER", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.in_process_worker:  # one tree's in-process timing, in that tree's process (run_in_process)
        print(json.dumps(prioritize_cpu_ms(Path(args.in_process_worker), args.requests, args.policy)))
        return 0
    args.allowed_cpus = os.sched_getaffinity(0)
    try:
        pinned = pin_cpus(args.allowed_cpus, args.pin)
    except ValueError as exc:
        parser.error(str(exc))
    if args.results is None:
        args.results = str(run_path("extender"))
    try:
        refuse_existing(args.results)
    except ResultsExist as exc:
        parser.error(str(exc))
    args.server_cpu = pinned[0] if pinned else None
    if pinned is not None:
        os.sched_setaffinity(0, {pinned[1]})  # this thread, the one timing requests (it starts no other)
    load_before = load_average()
    print(f"load average before: {Path('/proc/loadavg').read_text().strip()}")
    print(f"pinned: server on CPU {pinned[0]}, client on CPU {pinned[1]}" if pinned else
          f"not pinned: server and client share CPUs {sorted(args.allowed_cpus)}")
    print(f"{'mode':>5} {'nodes':>6} {'cand':>6} {'body KiB':>8} | {'noop p50/p99':>14} | {'filter p50/p99':>15} "
          f"{'ratio':>5} | {'prioritize p50/p99':>18} {'ratio':>5} {'target':>6} | {'RSS MiB':>7} | "
          f"server CPU ms/request noop / filter / prioritize")
    encode_q, rows = {}, []
    trees = {"this": ROOT} if args.baseline_tree is None else {"baseline": Path(args.baseline_tree), "this": ROOT}
    for n in (int(s) for s in args.sizes.split(",")) if args.http else ():
        for rnd in range(args.rounds):
            # the arms alternate, and which goes first too, so the machine's load drifts over both alike
            for name in (list(trees) if rnd % 2 == 0 else list(trees)[::-1]):
                out = run_size(n, args, tree=trees[name], in_process=name == "this" and n not in encode_q)
                if out["encode_q_ms"] is not None or n not in encode_q:
                    encode_q[n] = out["encode_q_ms"]
                for r in out["rows"]:
                    r.update(tree=name, round=rnd)
                rows += out["rows"]
                _print_rows(out["rows"], n, label=name if args.baseline_tree else "")
    for n, ms in encode_q.items():
        if ms is not None:
            print(f"encode + Q-values p50 at {n} nodes: {ms[0]:.2f} ms wall, {ms[1]:.2f} ms CPU"
                  + (f" (target {TARGET_ENCODE_Q_MS} ms)" if n == 5000 else ""))
    summary = _summary(rows) if args.baseline_tree and rows else []
    in_process = run_in_process(args, trees) if args.in_process else []
    print(f"RSS target at 5000 nodes: <= {TARGET_RSS_MIB:.0f} MiB; "
          f"load average after: {Path('/proc/loadavg').read_text().strip()}")
    flood = []
    if args.bind_flood:
        print(f"\n{'nodes':>6} {'cand':>6} | {'prioritize p50/p99 alone':>24} | {'under /bind flood':>17} | "
              f"{'rounds':>6} {'flooders':>8} {'flood req/s':>11} {'refused':>8} {'binds':>5}")
        for n in (int(s) for s in args.sizes.split(",")):
            r = run_flood(n, args)
            flood.append(r)
            print(f"{r['nodes']:>6} {r['candidates']:>6} | {r['alone'][0]:>11.2f}/{r['alone'][1]:>6.2f} ms | "
                  f"{r['flooded'][0]:>7.2f}/{r['flooded'][1]:>6.2f} ms | {r['rounds']:>6} {r['flooders']:>8} "
                  f"{r['flood_rate']:>11.0f} {r['refused']:>8.0f} {r['binds']:>5.0f}", flush=True)
    figures = {"rows": rows, "encode_q_ms": {str(n): ms for n, ms in encode_q.items()}, "bind_flood": flood,
               "policy": args.policy, "requests": args.requests, "in_process_prioritize_cpu_ms": in_process,
               "pin": {"server_cpu": pinned[0], "client_cpu": pinned[1]} if pinned else None,
               "allowed_cpus": sorted(args.allowed_cpus)}
    if args.baseline_tree:
        figures.update(baseline_tree=args.baseline_tree, baseline_commit=commit_of(Path(args.baseline_tree)),
                       commit=commit_of(ROOT), rounds=args.rounds, summary=summary)
    write_results(args.results, figures, load_before=load_before, overwrite=False)
    if args.results:
        print(f"figures: {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
