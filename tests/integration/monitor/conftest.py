"""Fixtures for the monitor integration tests: the agent as a real process, and load generators.

``start_agent(*flags)`` runs ``python -m monitor --host 127.0.0.1 --port <free> --interval 0.2``
plus ``flags``, waits for ``/healthz``, and stops it (SIGTERM, then SIGKILL) at teardown.
``busy()`` starts a CPU-burning subprocess that a test kills when done.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import REPO, deadline, free_port, wait_for

from .reports import INTERVAL

BUSY_LOOP = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"


@dataclass
class Agent:
    process: subprocess.Popen
    port: int
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.url + path, timeout=5)

    def usage(self) -> dict[str, Any]:
        response = self.get("/usage")
        response.raise_for_status()
        return response.json()

    def log(self) -> str:
        return self.log_path.read_text()

    def alive(self) -> bool:
        return self.process.poll() is None


@pytest.fixture
def start_agent(tmp_path: Path) -> Iterator[Callable[..., Agent]]:
    agents: list[Agent] = []

    def start(*flags: str, interval: float = INTERVAL) -> Agent:
        port = free_port()
        log_path = tmp_path / f"agent-{port}.log"
        env = {**os.environ, "PYTHONPATH": str(REPO), "NODE_NAME": "it-node"}
        cmd = [sys.executable, "-m", "monitor", "--host", "127.0.0.1", "--port", str(port),
               "--interval", str(interval), *flags]
        with log_path.open("w") as log:
            process = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        agent = Agent(process, port, log_path)
        agents.append(agent)

        def healthy() -> bool:
            if not agent.alive():
                pytest.fail(f"agent exited with {process.returncode}:\n{agent.log()}")
            try:
                return agent.get("/healthz").status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(healthy, timeout=20, what="agent /healthz")
        return agent

    yield start
    for agent in agents:
        if agent.alive():
            agent.process.send_signal(signal.SIGTERM)
            try:
                agent.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                agent.process.kill()
                agent.process.wait()


@pytest.fixture
def busy() -> Iterator[Callable[..., subprocess.Popen]]:
    """Start CPU-burning subprocesses (each ends by itself after ``seconds`` at the latest)."""
    procs: list[subprocess.Popen] = []

    def start(seconds: float = 20.0, argv: list[str] | None = None) -> subprocess.Popen:
        # its lifetime stretches with the waits that watch it (tests.helpers.deadline), or it would end before
        # a stretched wait on a busy machine could see it
        cmd = argv or [sys.executable, "-c", BUSY_LOOP.format(seconds=deadline(seconds))]
        proc = subprocess.Popen(cmd)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
