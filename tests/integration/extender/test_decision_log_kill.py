"""kill -9 of a process writing the decision log: the log stays readable, and only the rows of the last flush
interval (and a torn last line) are lost -- the bound ``extender.decision_log`` states."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

from policy.decisionlog import read_log
from tests.helpers import REPO, free_port, wait_for

from .payloads import EXAMPLE, args_names, post

FLUSH_S = 0.2
SLACK_S = 1.0  # scheduling delay of the writer thread on a busy 2-core CI machine

WRITER = """
import sys, time
from functools import partial
from pathlib import Path
from extender.decision_log import DecisionLog
from extender.telemetry import Telemetry
from policy.decisionlog import outcome_row

log = DecisionLog(directory=Path(sys.argv[1]), telemetry=Telemetry(), max_file_bytes=1 << 26,
                  max_total_bytes=1 << 27, flush_interval_s=float(sys.argv[2]), queue_size=100_000)
log.start()
print("started", flush=True)
i = 0
while True:
    now = time.time()
    log.submit(partial(outcome_row, ts=now, replica="killed", pod=("ns", "p", f"uid-{i}"), node="n1",
                       phase="Succeeded", created=now, started=now, finished=now))
    i += 1
    time.sleep(0.001)
"""


def test_kill_9_loses_at_most_the_last_flush_interval_and_leaves_a_readable_log(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(FLUSH_S)], cwd=REPO,
                            stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert proc.stdout.readline().strip() == b"started"
        wait_for(lambda: sum(p.stat().st_size for p in tmp_path.glob("decisions-*.jsonl")) > 20_000, timeout=30,
                 what="the writer to put rows on disk")
        time.sleep(1.0)
        killed_at = time.time()
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    log = read_log(tmp_path)  # readable: at most a torn last line, skipped
    assert len(log.torn) <= 1
    seq = [int(uid.split("-")[1]) for uid in log.outcomes]
    assert seq == list(range(len(seq))) and len(seq) > 100  # a prefix of what was submitted, no holes
    newest = max(r["ts"] for r in log.outcomes.values())
    assert newest >= killed_at - FLUSH_S - SLACK_S, f"lost {killed_at - newest:.2f} s of rows"


def test_kill_9_of_a_real_extender_leaves_its_decisions_readable(tmp_path):
    """``python -m extender`` over HTTP with the log on: every decision older than the flush interval survives."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "extender", "--static-cluster", str(EXAMPLE), "--port", str(port),
                             "--debug-port", "0", "--decision-log-dir", str(tmp_path), "--decision-log-flush-ms",
                             str(int(FLUSH_S * 1000))], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: urllib.request.urlopen(f"{base}/healthz", timeout=1).read(), timeout=30,
                 what=f"the extender at {base}", ignore=(OSError,))
        body = json.dumps(args_names()).encode()
        answers = [json.loads(post(f"{base}/prioritize", body)[1]) for _ in range(40)]
        time.sleep(FLUSH_S + SLACK_S)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    log = read_log(tmp_path)
    assert len(log.decisions) == 40 and not log.torn
    assert [d["scores"] for d in log.decisions] == [[h["Score"] for h in a] for a in answers]
