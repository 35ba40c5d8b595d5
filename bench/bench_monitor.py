"""Benchmark: the node agent's own CPU use at 1 s sampling, as % of one core.

Starts ``python -m monitor`` and, in the same run, an idle Python process as a baseline;
after the agent is healthy, reads utime+stime from /proc/<pid>/stat of both at the start
and the end of a measuring window and prints CPU % of one core, plus the agent's RSS.
Optionally a client GETs /usage every ``--poll`` seconds during the window (the load the
extender's usage provider adds). Target: <= 1 % of one core (DRS's monitor: 3.27 %).
Figures only: nothing here asserts on timing.

    python bench/bench_monitor.py --seconds 30
    python bench/bench_monitor.py --seconds 30 --poll 1
    python bench/bench_monitor.py --seconds 30 --fake-pods 50   # per-pod cost, on a fake cgroup v2 tree
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

from record import RESULTS, load_average  # (bench/ is on the path: run as a script)
from record import write as write_results

from harness.procs import free_port

REPO = Path(__file__).resolve().parents[1]
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` in seconds (fields 14 and 15 of /proc/<pid>/stat)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()  # the command name may contain spaces
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read()


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"agent exited with {proc.returncode}")
        try:
            get(url + "/healthz")
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("agent did not become healthy")


def fake_cgroup_tree(root: Path, pods: int) -> None:
    """A cgroup v2 tree with ``pods`` burstable pod cgroups holding static counter files."""
    (root / "cgroup.controllers").write_text("cpu io memory\n")
    for _ in range(pods):
        uid = str(uuid.uuid4()).replace("-", "_")
        pod = root / "kubepods.slice" / "kubepods-burstable.slice" / f"kubepods-burstable-pod{uid}.slice"
        pod.mkdir(parents=True)
        (pod / "cpu.stat").write_text("usage_usec 1000\nuser_usec 800\nsystem_usec 200\n")
        (pod / "memory.current").write_text("104857600\n")
        (pod / "memory.stat").write_text("anon 52428800\nfile 52428800\ninactive_file 10485760\n")
        (pod / "io.stat").write_text("254:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30, help="length of the measuring window (default 30)")
    parser.add_argument("--interval", type=float, default=1.0, help="agent sampling interval in seconds (default 1)")
    parser.add_argument("--warmup", type=float, default=3, help="seconds after /healthz before measuring (default 3)")
    parser.add_argument("--poll", type=float, default=0,
                        help="GET /usage every POLL seconds during the window (0 = no client)")
    parser.add_argument("--fake-pods", type=int, default=0,
                        help="point the agent at a temp cgroup v2 tree with this many pods (0 = the real cgroup root)")
    parser.add_argument("--results", default=str(RESULTS / "monitor.json"),
                        help="write the figures here for the README's table ('' = do not write)")
    parser.add_argument("agent_args", nargs="*", help="extra flags for python -m monitor (after --)")
    args = parser.parse_args()
    args.load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="bench-monitor-") as tmp:
        if args.fake_pods:
            fake_cgroup_tree(Path(tmp), args.fake_pods)
            args.agent_args += ["--cgroup-root", tmp]
        run(args)


def run(args: argparse.Namespace) -> None:

    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    agent = subprocess.Popen(
        [sys.executable, "-m", "monitor", "--host", "127.0.0.1", "--port", str(port), "--interval", str(args.interval),
         "--log-level", "WARNING", *args.agent_args],
        cwd=REPO, env=env,
    )
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(10**6)"])
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, agent)
        time.sleep(args.warmup)
        start_wall, agent0, idle0 = time.monotonic(), cpu_seconds(agent.pid), cpu_seconds(idle.pid)
        polls = 0
        end = start_wall + args.seconds
        while (now := time.monotonic()) < end:
            if args.poll > 0:
                get(url + "/usage")
                polls += 1
                time.sleep(max(min(args.poll, end - time.monotonic()), 0))
            else:
                time.sleep(end - now)
        wall = time.monotonic() - start_wall
        agent_pct = 100 * (cpu_seconds(agent.pid) - agent0) / wall
        idle_pct = 100 * (cpu_seconds(idle.pid) - idle0) / wall
        metrics = get(url + "/metrics").decode()
        duration = next((float(line.split()[-1]) for line in metrics.splitlines()
                         if line.startswith("drsched_monitor_sample_duration_seconds ")), float("nan"))
        pods = len(json.loads(get(url + "/usage"))["pods"])
        print(f"window            {wall:.1f} s at {args.interval:g} s sampling, {pods} pods, {polls} GET /usage")
        print(f"agent CPU         {agent_pct:.2f} % of one core")
        print(f"idle python CPU   {idle_pct:.2f} % of one core (baseline)")
        print(f"agent - baseline  {agent_pct - idle_pct:.2f} % of one core (target <= 1 %, DRS monitor 3.27 %)")
        print(f"agent RSS         {rss_mib(agent.pid):.1f} MiB")
        print(f"last sample took  {duration * 1000:.2f} ms")
        print(f"clock ticks       {CLK_TCK}/s: resolution {100 / CLK_TCK / wall:.3f} % over this window")
        write_results(args.results, {"interval_s": args.interval, "pods": pods, "polls": polls, "window_s": wall,
                                     "agent_cpu_pct": agent_pct, "baseline_cpu_pct": idle_pct,
                                     "rss_mib": rss_mib(agent.pid), "sample_ms": duration * 1000},
                      load_before=args.load_before)
    finally:
        for proc in (agent, idle):
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main()
