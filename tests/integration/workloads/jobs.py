"""The workload jobs as real processes for the integration tests: start, watch progress, kill, compare outputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import REPO
from workloads.checkpoint import CheckpointError, verify_checkpoint
from workloads.progress import Progress, ProgressError, read_progress

CKPT_UNITS = 10
"""Checkpoint interval (units) used by every test run."""

# Each whole run takes ~0.5-1.5 s on an idle core.
KIND_ARGS: dict[str, list[str]] = {
    "cpu": ["--units", "60", "--work", "15000"],
    "io": ["--units", "60", "--chunk-bytes", "16384", "--bandwidth", "1.0"],
    "net": ["--start-sink", "--units", "60", "--chunk-bytes", "16384", "--bandwidth", "1.0"],
    "train": ["--units", "60", "--samples", "12000", "--features", "16"],
}
KINDS = tuple(KIND_ARGS)
OUTPUTS: dict[str, tuple[str, ...]] = {
    "cpu": ("output.json",),
    "io": ("output.bin",),
    "net": ("output.json", "sink/job.bin"),
    "train": ("output.json",),
}


def command(kind: str, state_dir: Path, *extra: str, base: list[str] | None = None) -> list[str]:
    return [sys.executable, "-m", "workloads", kind, "--state-dir", str(state_dir), *(base or KIND_ARGS[kind]),
            "--checkpoint-units", str(CKPT_UNITS), "--checkpoint-every", "0", "--progress-interval", "0.01",
            *extra]


def popen(argv: list[str], log_path: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1"}
    with open(log_path, "ab") as log:
        return subprocess.Popen(argv, cwd=REPO, env=env, stdout=log, stderr=log)


def start(kind: str, state_dir: Path, *extra: str, base: list[str] | None = None) -> subprocess.Popen:
    return popen(command(kind, state_dir, *extra, base=base), state_dir.parent / f"{state_dir.name}.log")


def log_text(state_dir: Path) -> str:
    return (state_dir.parent / f"{state_dir.name}.log").read_text(errors="replace")


def wait_exit(proc: subprocess.Popen, timeout: float = 30.0) -> int:
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"process {proc.args} did not exit within {timeout}s") from None


def run_to_end(kind: str, state_dir: Path, *extra: str, timeout: float = 30.0) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    rc = wait_exit(start(kind, state_dir, *extra), timeout)
    assert rc == 0, log_text(state_dir)


def progress_of(state_dir: Path, pid: int | None = None) -> Progress | None:
    """The current progress document, or None if absent (or written by another process than ``pid``)."""
    try:
        doc = read_progress(state_dir / "progress.json")
    except ProgressError:
        return None
    return doc if pid is None or doc.pid == pid else None


def wait_progress(proc: subprocess.Popen, state_dir: Path, units: int, timeout: float = 20.0) -> Progress | None:
    """Poll until ``proc`` reports ``units_done >= units``; None if it exited first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        doc = progress_of(state_dir, proc.pid)
        if doc is not None and doc.units_done >= units:
            return doc
        if proc.poll() is not None:
            return None
        time.sleep(0.003)
    raise AssertionError(f"timed out waiting for units_done >= {units} in {state_dir}")


def valid_checkpoints(state_dir: Path) -> dict[int, dict]:
    """units_done -> state of every checkpoint file that verifies."""
    found = {}
    for path in state_dir.glob("ckpt-*.json"):
        try:
            ckpt = verify_checkpoint(path)
        except CheckpointError:
            continue
        found[ckpt.units_done] = ckpt.state
    return found


def outputs(kind: str, state_dir: Path) -> dict[str, bytes]:
    return {name: (state_dir / name).read_bytes() for name in OUTPUTS[kind]}


def sigkill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)


def json_file(path: Path) -> dict:
    return json.loads(path.read_text())
