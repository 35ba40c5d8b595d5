"""Real processes for the live usage-provider tests: node agents, the extender, Prometheus, node-exporter.

Each ``start_*`` returns a ``Proc`` (the Popen, its base URL and log file); ``Procs`` stops them all
(SIGTERM, then SIGKILL) when the test ends. Every wait polls with a deadline, never a fixed sleep.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, free_port, wait_for

NOT_YET = (OSError, ValueError, KeyError)
"""What a check raises while a server starts or a report is still incomplete: 'not yet', for ``wait_for``."""



def get_json(url: str, body: dict | None = None, timeout: float = 5.0) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def get_text(url: str, timeout: float = 5.0) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return resp.read().decode()


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen
    url: str
    log: Path
    debug_url: str = ""  # the extender's /debug/* listener

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        if self.alive():
            self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(timeout=10)

    def stop(self) -> None:
        if self.alive():
            self.popen.terminate()
            try:
                self.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=5)

    def wait_http(self, path: str, timeout: float = 30.0) -> None:
        def up() -> bool:
            if not self.alive():
                pytest.fail(f"{self.name} exited with {self.popen.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                urllib.request.urlopen(self.url + path, timeout=1).read()
                return True
            except urllib.error.HTTPError:
                return True      # it answers (e.g. 503 while starting)
            except OSError:
                return False
        wait_for(up, timeout=timeout, what=f"{self.name} at {self.url}{path}")


@dataclass
class Procs:
    tmp: Path
    procs: list[Proc] = field(default_factory=list)

    def start(self, name: str, cmd: list[str], port: int, env: dict | None = None) -> Proc:
        log = self.tmp / f"{name}-{port}.log"
        with log.open("w") as out:
            popen = subprocess.Popen(cmd, cwd=REPO, env={**os.environ, **(env or {})}, stdout=out,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        proc = Proc(name, popen, f"http://127.0.0.1:{port}", log)
        self.procs.append(proc)
        return proc

    def agent(self, node: str, *flags: str) -> Proc:
        port = free_port()
        return self.start(f"agent-{node}", [sys.executable, "-m", "monitor", "--host", "127.0.0.1", "--port",
                                            str(port), "--interval", "0.2", "--window", "20", *flags],
                          port, env={"NODE_NAME": node, "PYTHONPATH": str(REPO)})

    def extender(self, cluster: Path, **options: Any) -> Proc:
        port, debug_port = free_port(), free_port()
        cmd = [sys.executable, "-m", "extender", "--static-cluster", str(cluster), "--port", str(port),
               "--debug-port", str(debug_port)]
        for key, value in options.items():
            cmd += [f"--{key.replace('_', '-')}", value if isinstance(value, str) else json.dumps(value)]
        proc = self.start("extender", cmd, port, env={"PYTHONPATH": str(REPO), "DRSCHED_LOG_FORMAT": "json"})
        proc.debug_url = f"http://127.0.0.1:{debug_port}"  # /debug/* is served apart, on loopback
        proc.wait_http("/readyz")
        return proc

    def stop_all(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()


class FakePod:
    """A cgroup v2 tree (``<root>/kubepods.slice/...``) with one pod burning ``cores`` in real time."""

    def __init__(self, root: Path, cores: float) -> None:
        self.uid = str(uuid.uuid4())
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        (root / "cgroup.controllers").write_text("cpu io memory\n")
        self.dir = (root / "kubepods.slice" / "kubepods-burstable.slice"
                    / f"kubepods-burstable-pod{self.uid.replace('-', '_')}.slice")
        self.dir.mkdir(parents=True)
        self.cores = cores
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _put(self, name: str, text: str) -> None:
        tmp = self.dir / f".{name}"
        tmp.write_text(text)
        os.replace(tmp, self.dir / name)

    def _run(self) -> None:
        start = time.monotonic()
        while True:
            elapsed = time.monotonic() - start
            self._put("cpu.stat", f"usage_usec {int(self.cores * 1e6 * elapsed)}\nuser_usec 0\nsystem_usec 0\n")
            self._put("memory.current", f"{2**30}\n")
            self._put("memory.stat", "anon 1\ninactive_file 0\n")
            self._put("io.stat", f"254:0 rbytes=0 wbytes={int(1e6 * elapsed)} rios=0 wios=1\n")
            if self._stop.wait(0.05):
                return

    def __enter__(self) -> FakePod:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
