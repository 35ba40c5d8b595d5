"""The REAL drsched extender (`python -m extender --kubeconfig ...`) as a child process of the e2e harness.

`ExtenderProcess` runs it through `procs.Component` (own process group, killed at teardown and by
PDEATHSIG if pytest dies, log file whose tail goes into failure messages), on a port picked once so a
stopped extender comes back at the same URL the scheduler config points to. It reads nodes and pods
from the test cluster through its list + watch cache and POSTs Bindings there.

`bind` serves POST /bind: over mTLS when `tls` has a client CA (`mtls` makes the certificates), else
with the extender's local-tests-only insecure flag. `/debug/*` goes to the extender's loopback debug
listener, on a port of its own.

`variant` writes a scheduler config rendered from kube-scheduler-config/ with some extender fields
substituted (weight, ignorable, nodeCacheCapable): the shipped file stays the only copy.
"""

from __future__ import annotations

import json
import os
import ssl
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .pki import Pki
from .procs import Component, free_port, tail
from .schedconfig import ExtenderTls

REPO_ROOT = Path(__file__).resolve().parents[1]
READY_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class ServerTls:
    """Files the extender serves HTTPS with; `client_ca` makes it require client certificates."""

    cert: Path
    key: Path
    client_ca: Path | None = None


@dataclass
class ExtenderProcess:
    """One `python -m extender` against the test cluster; `start()` / `stop()` may alternate."""

    kubeconfig: Path
    log_path: Path
    policy: str = "demand-aware"
    usage_file: Path | None = None
    tls: ServerTls | None = None
    # a client for our own HTTPS calls (metrics, explain) when `tls` requires client certificates
    client_context: ssl.SSLContext | None = None
    extra: Sequence[str] = ()
    bind: bool = False
    port: int = field(default_factory=free_port)
    debug_port: int = field(default_factory=free_port)
    component: Component | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def debug_url(self) -> str:
        return f"http://127.0.0.1:{self.debug_port}"

    def argv(self) -> list[str]:
        argv = [sys.executable, "-m", "extender", f"--kubeconfig={self.kubeconfig}", "--host=127.0.0.1",
                f"--port={self.port}", f"--debug-port={self.debug_port}", f"--policy={self.policy}",
                "--log-format=text"]
        if self.usage_file is not None:
            # re-read when the file changes; a short interval so a test sees new usage within a second
            argv += ["--usage-provider=static", f"--usage-file={self.usage_file}", "--usage-interval-s=0.5",
                     "--usage-timeout-s=0.4"]
        if self.tls is not None:
            argv += [f"--tls-cert-file={self.tls.cert}", f"--tls-key-file={self.tls.key}"]
            if self.tls.client_ca is not None:
                argv.append(f"--tls-client-ca-file={self.tls.client_ca}")
        if self.bind:
            argv.append("--bind-enabled=true")
            if self.tls is None or self.tls.client_ca is None:
                argv.append("--insecure-bind-without-client-ca=true")
        return argv + list(self.extra)

    def start(self) -> ExtenderProcess:
        """Start and wait for /readyz = 200 (the watch cache has listed nodes and pods)."""
        if self.component is not None and self.component.running:
            return self
        pythonpath = os.pathsep.join(filter(None, (str(REPO_ROOT), os.environ.get("PYTHONPATH"))))
        env = {**os.environ, "PYTHONPATH": pythonpath}
        self.component = Component(name="drsched-extender", argv=self.argv(), log_path=self.log_path, env=env)
        self.component.start()
        self.component.wait_ready(lambda: self.get("/readyz").get("status") in ("ready", "degraded"),
                                  timeout=READY_TIMEOUT_S)
        return self

    def stop(self, *, grace: float = 1.0) -> None:
        """SIGTERM, SIGKILL after `grace` s: a clean shutdown joins the watch threads (seconds), which tests
        need not wait for."""
        if self.component is not None:
            self.component.stop(grace=grace)

    @property
    def running(self) -> bool:
        return self.component is not None and self.component.running

    def log_tail(self, lines: int = 40) -> str:
        return tail(self.log_path, lines)

    # ---- HTTP -----------------------------------------------------------------------------------

    def request(self, path: str, body: Any = None, *, timeout: float = 5.0) -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body).encode()
        debug = path.startswith("/debug/")
        base, context = (self.debug_url, None) if debug else (self.url, self.client_context)
        req = urllib.request.Request(base + path, data=data, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=context) as resp:  # noqa: S310
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def get(self, path: str, body: Any = None) -> dict:
        return json.loads(self.request(path, body)[1])

    def post(self, verb: str, body: Any) -> Any:
        status, raw = self.request(f"/{verb}", body)
        if status != 200:
            raise AssertionError(f"POST /{verb} answered {status}: {raw[:500]!r}")
        return json.loads(raw)

    def explain(self, name: str, namespace: str = "default") -> dict | None:
        """GET /debug/explain for a cached pod; None while the cache does not know it."""
        status, raw = self.request(f"/debug/explain?namespace={namespace}&name={name}")
        return json.loads(raw) if status == 200 else None

    def metrics(self) -> dict[str, float]:
        """Prometheus text as {'name{label="v",...}': value} (sample lines only)."""
        status, raw = self.request("/metrics")
        if status != 200:
            raise AssertionError(f"GET /metrics answered {status}")
        return parse_metrics(raw.decode())

    def counter(self, name: str, **labels: str) -> float:
        """Sum of the samples of `name` whose labels include `labels`."""
        return sum_samples(self.metrics(), name, **labels)


@dataclass(frozen=True)
class Mtls:
    """Certificates for an mTLS extender and the scheduler that calls it, all from one CA."""

    server: ServerTls            # the extender's serving certificate and the client CA it trusts
    scheduler: ExtenderTls       # what kube-scheduler's tlsConfig names
    client: ssl.SSLContext       # our own calls, with the scheduler's client certificate


def mtls(pki: Pki, *, name: str = "drsched") -> Mtls:
    """Issue an extender serving certificate (SAN 127.0.0.1, drsched-extender) and a scheduler client one."""
    server = pki.issue(f"{name}-extender-serving", common_name="drsched-extender", dns_names=("drsched-extender",),
                       ips=("127.0.0.1",), server=True)
    client = pki.issue(f"{name}-scheduler-client", common_name="drsched-scheduler", client=True)
    context = ssl.create_default_context(cafile=str(pki.ca.cert))
    context.load_cert_chain(str(client.cert), str(client.key))
    return Mtls(server=ServerTls(cert=server.cert, key=server.key, client_ca=pki.ca.cert),
                scheduler=ExtenderTls(cert_file=client.cert, key_file=client.key, ca_file=pki.ca.cert),
                client=context)


def parse_metrics(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def sum_samples(samples: dict[str, float], name: str, **labels: str) -> float:
    want = [f'{k}="{v}"' for k, v in labels.items()]
    total = 0.0
    for key, value in samples.items():
        base, _, rest = key.partition("{")
        if base == name and all(w in rest for w in want):
            total += value
    return total


def histogram_quantile(samples: dict[str, float], name: str, q: float, **labels: str) -> float | None:
    """The q-quantile of a Prometheus histogram, interpolated inside its bucket as PromQL's
    histogram_quantile does; None when it has no observations."""
    want = [f'{k}="{v}"' for k, v in labels.items()]
    buckets: list[tuple[float, float]] = []
    for key, value in samples.items():
        base, _, rest = key.partition("{")
        if base == f"{name}_bucket" and all(w in rest for w in want):
            le = rest.split('le="', 1)[1].split('"', 1)[0]
            buckets.append((float("inf") if le == "+Inf" else float(le), value))
    buckets.sort()
    if not buckets or buckets[-1][1] == 0:
        return None
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for upper, count in buckets:
        if count >= rank:
            if upper == float("inf"):
                return lower
            return lower + (upper - lower) * (rank - below) / max(count - below, 1e-12)
        lower, below = upper, count
    return lower


def variant(rendered: Path, **fields: Any) -> Path:
    """A copy of a rendered scheduler config with `fields` set on every extender (e.g. ignorable=False,
    nodeCacheCapable=False, weight=100); the name says which fields changed."""
    config = yaml.safe_load(rendered.read_text())
    for extender in config.get("extenders") or []:
        extender.update(fields)
    suffix = "-".join(f"{k}={v}" for k, v in fields.items())
    dest = rendered.with_name(f"{rendered.stem}-{suffix}.yaml")
    dest.write_text(yaml.safe_dump(config, sort_keys=False))
    return dest


class Extenders:
    """The extenders one test started (the `extenders` fixture): all stopped at teardown, logs for failures."""

    def __init__(self, *, kubeconfig: Path, workdir: Path) -> None:
        self.kubeconfig, self.workdir = kubeconfig, workdir
        self.procs: list[ExtenderProcess] = []

    def new(self, **kwargs: Any) -> ExtenderProcess:
        """An extender configured but not started (tests that need its URL before it runs)."""
        kwargs.setdefault("kubeconfig", self.kubeconfig)
        proc = ExtenderProcess(log_path=self.workdir / f"extender-{len(self.procs)}.log", **kwargs)
        self.procs.append(proc)
        return proc

    def start(self, **kwargs: Any) -> ExtenderProcess:
        return self.new(**kwargs).start()

    def close(self) -> None:
        for proc in self.procs:
            proc.stop()

    def log_tails(self, lines: int = 40) -> str:
        return "\n".join(f"===== {p.log_path} ({'running' if p.running else 'stopped'}) =====\n{p.log_tail(lines)}"
                         for p in self.procs)
