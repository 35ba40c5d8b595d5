"""Child processes of the e2e harness.

Each component (etcd, kube-apiserver, kube-scheduler, kwok, ...) runs in its own process group with
its output in one log file, so teardown can kill everything it started and a failure can show the
component's last lines. This module owns those processes and nothing else.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.errors import HarnessError

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.2
_PR_SET_PDEATHSIG = 1


@functools.cache
def _die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn asking Linux to SIGKILL the child when the harness dies without tearing down.

    Children run in their own sessions, so a SIGKILLed pytest (a CI timeout) would otherwise leave
    etcd and the apiserver running. prctl is resolved here, in the parent, so the code run between
    fork and exec is a single foreign call.
    """
    if sys.platform != "linux":
        return None
    try:
        prctl = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return lambda: prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class ComponentError(HarnessError, RuntimeError):
    """A component exited early or never became ready; the message carries its log tail."""


def free_port() -> int:
    """A loopback port that was free a moment ago (the kernel picks it when binding port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tail(path: Path, lines: int = 40) -> str:
    """The last `lines` lines of a log file, or a note that it is missing."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return f"(no log at {path})"
    text = data[-64 * 1024 :].decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


class Component:
    """One long-running child process with a log file and a readiness probe."""

    def __init__(self, *, name: str, argv: Sequence[str], log_path: Path, env: dict[str, str] | None = None):
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log_file:
            log_file.write(f"$ {' '.join(self.argv)}\n".encode())
            log_file.flush()
            try:
                # A new session makes the child a process-group leader, so stop() reaches its children too.
                self.proc = subprocess.Popen(
                    self.argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=_die_with_parent(),
                    env=self.env,
                )
            except OSError as exc:
                raise ComponentError(f"{self.name}: cannot start {self.argv[0]}: {exc}") from exc
        log.info("started component=%s pid=%d log=%s", self.name, self.proc.pid, self.log_path)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def explain(self, problem: str, lines: int = 40) -> str:
        return f"{self.name} {problem}\n--- last {lines} lines of {self.log_path} ---\n{tail(self.log_path, lines)}"

    def check_alive(self) -> None:
        """Raise ComponentError if the process has exited."""
        if self.proc is None:
            raise ComponentError(f"{self.name} was never started")
        code = self.proc.poll()
        if code is not None:
            raise ComponentError(self.explain(f"exited with code {code}"))

    def wait_ready(self, probe: Callable[[], bool], *, timeout: float) -> None:
        """Poll `probe` until it returns True; fail fast if the process exits, give up after `timeout`."""
        deadline = time.monotonic() + timeout
        last_error: Exception | None = None
        while True:
            self.check_alive()
            try:
                if probe():
                    return
            except Exception as exc:  # any probe failure just means "not yet"
                last_error = exc
            if time.monotonic() > deadline:
                self.stop()
                raise ComponentError(self.explain(f"not ready after {timeout:.0f}s (last probe error: {last_error!r})"))
            time.sleep(POLL_INTERVAL_S)

    def stop(self, *, grace: float = 5.0) -> None:
        """SIGTERM the process group, SIGKILL it after `grace` seconds, then reap the leader."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        pgid = proc.pid  # the leader of its own session: pgid == pid
        _signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        # Wait without reaping: while the leader is an unreaped zombie its pgid cannot be reused,
        # so the SIGKILL below can only reach processes this component started.
        while time.monotonic() < deadline and not _exited_unreaped(proc.pid):
            time.sleep(0.05)
        _signal_group(pgid, signal.SIGKILL)
        proc.wait(timeout=10)
        log.info("stopped component=%s code=%s", self.name, proc.returncode)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _exited_unreaped(pid: int) -> bool:
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def run_to_completion(*, name: str, argv: Sequence[str], log_path: Path, timeout: float,
                      progress: Callable[[str], None] | None = None, every_s: float = 30.0) -> None:
    """Run a finite command in its own process group; on timeout kill the whole group (go build forks).

    With ``progress``, every ``every_s`` seconds it gets one honest line (``build_status``): elapsed time, the
    command's own latest step line, and how many Go modules it has downloaded so far."""
    component = Component(name=name, argv=argv, log_path=log_path)
    component.start()
    proc = component.proc
    if proc is None:
        raise ComponentError(f"{name} did not start")
    started = time.monotonic()
    while True:
        left = timeout - (time.monotonic() - started)
        try:
            code = proc.wait(timeout=max(0.0, min(left, every_s) if progress else left))
            break
        except subprocess.TimeoutExpired:
            if time.monotonic() - started >= timeout:
                component.stop()
                raise ComponentError(component.explain(f"did not finish within {timeout:.0f}s")) from None
            if progress is not None:
                progress(build_status(name, log_path, elapsed_s=time.monotonic() - started))
    if code != 0:
        raise ComponentError(component.explain(f"failed with code {code}"))


def build_status(name: str, log_path: Path, *, elapsed_s: float) -> str:
    """``<name>: 4m10s elapsed, step: <its latest '<name>: ...' line>; N Go modules downloaded`` from its log.

    Only the command's own step lines count as the step: go prints ``go: downloading ...`` once per module
    and then nothing for minutes while it compiles, so its last line would go stale."""
    try:
        lines = log_path.read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    steps = [line[len(name) + 1:].strip() for line in lines if line.startswith(f"{name}:")]
    downloads = sum(line.startswith("go: downloading ") for line in lines)
    minutes, seconds = divmod(int(elapsed_s), 60)
    text = f"{name}: {minutes}m{seconds:02d}s elapsed, step: {steps[-1] if steps else 'starting'}"
    return text + (f"; {downloads} Go modules downloaded" if downloads else "") + f" (log: {log_path})"


@contextlib.contextmanager
def interrupt_on_signals(*signums: signal.Signals):
    """SIGTERM (and the given signals) raise KeyboardInterrupt once, so ``finally`` blocks tear down what a
    command started instead of leaving it to PDEATHSIG (which kills the children but leaves their cgroups and
    state behind); further signals are ignored while that teardown runs. Handlers are restored on exit."""
    signums = signums or (signal.SIGTERM,)

    def on_signal(signum: int, _frame: object) -> None:
        log.info("signal received, tearing down signum=%d", signum)
        for s in signums:
            signal.signal(s, signal.SIG_IGN)
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, on_signal) for s in signums}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
