"""HTTP round-trip latency of the extender's filter and prioritize against a real uvicorn.

For each cluster size a static cluster (nodes with usage, 2 pods per node) is written to a temp dir,
``python -m extender --static-cluster`` is started on a free loopback port, and one keep-alive client
sends kube-scheduler-shaped requests in nodeCacheCapable mode (``{"Pod": ..., "Nodes": null,
"NodeNames": [...]}``). The floor is ``POST /debug/noop`` with the same body on the same server in the
same run, so ``ratio`` = what our work costs over HTTP + JSON transport. RSS is the server's VmRSS after
the run. Targets (p99): 2 / 4 / 10 ms at 100 / 1,000 / 5,000 nodes. Prints figures; asserts nothing.

    python bench/bench_extender.py                       # 100, 1000, 5000 nodes, all nodes per request
    python bench/bench_extender.py --sizes 5000 --candidate-frac 0.1 --requests 1000
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from harness.procs import free_port

ROOT = Path(__file__).resolve().parent.parent
TARGET_P99_MS = {100: 2.0, 1000: 4.0, 5000: 10.0}
POD = {
    "metadata": {"name": "bench-pod", "namespace": "default", "uid": "bench-uid",
                 "annotations": {"drsched.io/profile": "cpu=1,mem=2,net=100,disk=20"}},
    "spec": {"containers": [{"name": "main", "image": "busybox",
                             "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]},
    "status": {"phase": "Pending"},
}


def write_cluster(path: Path, n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    names = [f"node-{i:05d}" for i in range(n)]
    lines = ["nodes:"]
    for name in names:
        cpu = int(rng.choice([8, 16, 32]))
        mem = cpu * 4
        lines.append(f"- {{name: {name}, cpu: '{cpu}', memory: {mem}Gi, usage: {{cpu: '{rng.uniform(0, 0.8) * cpu:.2f}', "
                     f"memory: {rng.uniform(0.1, 0.9) * mem:.2f}Gi, net: {rng.uniform(0, 1000):.0f}M, "
                     f"disk: {rng.uniform(0, 400):.0f}M}}}}")
    lines.append("pods:")
    for i in range(n * 2):
        lines.append(f"- {{name: p{i}, node: {names[i % n]}, cpu: 100m, memory: 256Mi}}")
    path.write_text("\n".join(lines) + "\n")
    return names


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


def run_size(n: int, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Path(tmp) / "cluster.yaml"
        names = write_cluster(cluster, n)
        k = max(1, int(round(n * args.candidate_frac)))
        body = json.dumps({"Pod": POD, "Nodes": None, "NodeNames": names[:k]}, separators=(",", ":")).encode()
        port = free_port()
        env = {**os.environ, "DRSCHED_LOG_LEVEL": "WARNING"}
        proc = subprocess.Popen([sys.executable, "-m", "extender", "--static-cluster", str(cluster), "--port",
                                 str(port), "--policy", args.policy], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                    conn.request("GET", "/readyz")
                    conn.getresponse().read()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit(proc.stderr.read().decode()) from None
                    time.sleep(0.2)
            res = {"nodes": n, "candidates": k, "body_kib": len(body) / 1024}
            for verb, path in (("noop", "/debug/noop"), ("filter", "/filter"), ("prioritize", "/prioritize")):
                t = timings(conn, path, body, args.requests, args.warmup)
                res[verb] = (float(np.percentile(t, 50)), float(np.percentile(t, 99)))
            res["rss_mib"] = rss_mib(proc.pid)
            conn.close()
            return res
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,5000", help="comma-separated node counts")
    parser.add_argument("--requests", type=int, default=300, help="timed requests per verb and size")
    parser.add_argument("--warmup", type=int, default=30, help="untimed requests first")
    parser.add_argument("--candidate-frac", type=float, default=1.0,
                        help="fraction of the nodes named per request (kube-scheduler samples >= 100 nodes)")
    parser.add_argument("--policy", default="model",
                        help="policy to serve (model falls back to demand-aware when no artifact exists)")
    args = parser.parse_args(argv)
    print(f"{'nodes':>6} {'cand':>6} {'body KiB':>8} | {'noop p50/p99':>14} | {'filter p50/p99':>15} {'ratio':>5} | "
          f"{'prioritize p50/p99':>18} {'ratio':>5} {'target':>6} | {'RSS MiB':>7}")
    for n in (int(s) for s in args.sizes.split(",")):
        r = run_size(n, args)
        noop = r["noop"][1]
        print(f"{r['nodes']:>6} {r['candidates']:>6} {r['body_kib']:>8.1f} | {r['noop'][0]:>6.2f}/{r['noop'][1]:>6.2f} ms"
              f" | {r['filter'][0]:>6.2f}/{r['filter'][1]:>6.2f} ms {r['filter'][1] / noop:>5.1f} | "
              f"{r['prioritize'][0]:>8.2f}/{r['prioritize'][1]:>6.2f} ms {r['prioritize'][1] / noop:>5.1f} "
              f"{TARGET_P99_MS.get(n, float('nan')):>6.1f} | {r['rss_mib']:>7.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
