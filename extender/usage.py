"""Where node usage comes from: the ``UsageProvider`` interface, the providers by name, and the poller.

A provider answers ``await fetch()`` with ``{node name: NodeUsage}`` in policy units (cores, GiB, MB/s,
MB/s) and the time each sample was taken. ``UsagePoller`` calls it every ``usage_interval_s`` with a
``usage_timeout_s`` timeout and feeds the cache; a failed fetch is reported (log + counter) and the nodes
simply age until ``max_usage_age_s`` makes them stale, when they are scored from requests.

Providers: ``static`` (a YAML file, re-read when it changes), ``none``, ``monitor`` (the drsched node
agents) and ``prometheus`` (node-exporter metrics); the last two live in ``extender.providers`` and keep a
per-node ``UsageHealth`` (last good sample, why the last read failed). A factory gets the settings and a
``ProviderContext`` (telemetry, the cache's node names, the pod index's agents and node addresses).

Every provider implements all of ``UsageProvider`` (subclassing it gives the defaults most need: no
per-node health, no pod readings, nothing to close), so the poller calls it without probing. A provider
that ``reads_pods`` (the monitor) feeds the ``ProfileLearner`` from ``take_pod_samples()`` after every
successful poll. Requests never wait on any of this: they read the cache's last samples.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

from extender.errors import StaticClusterError, UsageUnavailable
from extender.settings import Settings
from extender.static_cluster import load_usage, to_samples
from extender.telemetry import Telemetry
from kube.cache import ClusterCache, NodeUsage
from kube.logs import kv

if TYPE_CHECKING:
    from extender.profile_learning import PodSample
    from extender.providers.health import UsageHealth

log = logging.getLogger(__name__)


class UsageProvider(Protocol):
    """A source of node usage samples (module docstring); subclass it for the defaults below."""

    name: str
    health: UsageHealth | None = None
    """Per-node read status (``/readyz`` stale_nodes, ``/debug/usage``); None: the provider keeps none."""
    reads_pods: ClassVar[bool] = False
    """Whether ``take_pod_samples`` ever returns readings (then the poller feeds the profile learner)."""

    async def fetch(self) -> dict[str, NodeUsage]:
        """{node: sample}; raises ``UsageUnavailable`` when this fetch failed."""
        ...

    def take_pod_samples(self) -> list[PodSample]:
        """The pod readings gathered since the last call."""
        return []

    async def aclose(self) -> None:
        """Release what the provider holds (HTTP clients); called once, when the poller stops."""
        return None


class NoUsage(UsageProvider):
    """No usage at all: every node is scored from requests."""

    name = "none"

    async def fetch(self) -> dict[str, NodeUsage]:
        return {}


class StaticUsageProvider(UsageProvider):
    """Usage from a YAML file; re-parsed only when its mtime changes, stamped ``now - age_s`` each fetch."""

    name = "static"

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time, preloaded: dict | None = None,
                 mtime: float | None = None) -> None:
        self.path = Path(path)
        self._clock = clock
        self._mtime: float | None = mtime if preloaded is not None else None
        self._usage: dict = preloaded or {}

    def _reload(self) -> None:
        try:
            mtime = self.path.stat().st_mtime
        except OSError as exc:
            raise UsageUnavailable(self.name, f"{self.path}: {exc.strerror}") from None
        if mtime != self._mtime:
            try:
                self._usage = load_usage(self.path)
            except StaticClusterError as exc:
                raise UsageUnavailable(self.name, str(exc)) from None
            self._mtime = mtime

    async def fetch(self) -> dict[str, NodeUsage]:
        await asyncio.to_thread(self._reload)
        return to_samples(self._usage, self._clock())


@dataclass
class ProviderContext:
    """What a provider may read besides its settings; every field has a harmless default (``__main__``
    builds providers only to check the configuration)."""

    telemetry: Telemetry = field(default_factory=Telemetry)
    usage_metrics: object | None = None                                   # providers.health.UsageMetrics
    node_names: Callable[[], Iterable[str]] = tuple                       # the cache's nodes
    agents: Callable[[], dict[str, str]] | None = None                    # cluster mode: node -> agent URL
    addresses: Callable[[], Mapping[str, str]] | None = None              # cluster mode: address -> node
    not_ready: Callable[[], Mapping[str, str]] = dict                     # cluster mode: node -> Ready, in words
    collect_pods: bool = True                                             # keep per-pod readings (learning)
    clock: Callable[[], float] = time.time


def _health(name: str, ctx: ProviderContext):
    from extender.providers.health import UsageHealth

    return UsageHealth(name, telemetry=ctx.telemetry, metrics=ctx.usage_metrics, nodes=ctx.node_names,
                       clock=ctx.clock)


def _monitor(s: Settings, ctx: ProviderContext) -> UsageProvider:
    from extender.providers.monitor import MonitorProvider

    static = dict(s.monitor_agents)
    agents = (lambda: static) if static or ctx.agents is None else ctx.agents
    return MonitorProvider(agents=agents, health=_health("monitor", ctx), timeout_s=0.8 * s.usage_timeout_s,
                           stat=s.monitor_stat, pod_stat=s.monitor_pod_stat, collect_pods=ctx.collect_pods,
                           concurrency=s.monitor_concurrency, known_nodes=ctx.node_names, clock=ctx.clock,
                           token=_monitor_token(s.monitor_token_file), not_ready=ctx.not_ready)


def _monitor_token(path) -> str | None:
    """The agents' per-pod readings token; missing or empty: None (agents elsewhere then send no pod readings,
    so no profiles are learned, and node usage still flows)."""
    if path is None:
        return None
    try:
        token = path.read_text().strip()
    except OSError as exc:
        log.warning("monitor token unreadable: agents on other hosts will withhold per-pod readings",
                    extra=kv(path=str(path), error=exc.strerror))
        return None
    return token or None


def _prometheus(s: Settings, ctx: ProviderContext) -> UsageProvider:
    from extender.providers.prometheus import PrometheusProvider
    from extender.providers.promql import queries

    return PrometheusProvider(url=str(s.prometheus_url), label=s.prometheus_node_label,
                              queries=queries(s.prometheus_queries, label=s.prometheus_node_label,
                                              window=s.prometheus_rate_window),
                              health=_health("prometheus", ctx), timeout_s=0.8 * s.usage_timeout_s,
                              instance_map=s.prometheus_instance_map, known_nodes=ctx.node_names,
                              addresses=ctx.addresses, clock=ctx.clock, not_ready=ctx.not_ready)


ProviderFactory = Callable[[Settings, ProviderContext], UsageProvider]
_PROVIDERS: dict[str, ProviderFactory] = {  # one per value of Settings.usage_provider
    "none": lambda s, ctx: NoUsage(),
    "static": lambda s, ctx: StaticUsageProvider(s.usage_file or s.static_cluster),
    "monitor": _monitor,
    "prometheus": _prometheus,
}


def make_provider(settings: Settings, *, static_usage: dict | None = None, static_mtime: float | None = None,
                  context: ProviderContext | None = None) -> UsageProvider:
    """Build the configured provider; ``static_usage`` seeds the static one with an already parsed file."""
    if settings.usage_provider == "static" and settings.usage_file is None and static_usage is not None:
        return StaticUsageProvider(settings.static_cluster, preloaded=static_usage, mtime=static_mtime)
    return _PROVIDERS[settings.usage_provider](settings, context or ProviderContext())


class UsagePoller:
    """Background loop: fetch, apply to the cache, feed the learner, sleep; ``start``/``stop`` from the lifespan.

    Nothing a provider does can end the loop: an unexpected exception is logged with its traceback and
    counted as ``usage_fetch_total{outcome="error"}``; the next poll comes on time.
    """

    def __init__(self, provider: UsageProvider, cache: ClusterCache, telemetry: Telemetry, *,
                 interval_s: float, timeout_s: float, learner=None) -> None:
        self.provider, self.cache, self.telemetry = provider, cache, telemetry
        self.interval_s, self.timeout_s = interval_s, timeout_s
        self.learner = learner  # profile_store.ProfileLearner, when the provider has pod readings
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None
        self.last_ok: float | None = None

    @property
    def health(self) -> UsageHealth | None:
        """The provider's per-node ``UsageHealth`` (None for static / none)."""
        return self.provider.health

    def status(self) -> dict[str, dict]:
        health = self.health
        return health.status() if health is not None else {}

    async def poll_once(self) -> bool:
        try:
            return await self._poll()
        except Exception as exc:  # a provider bug must not end the loop
            log.exception("usage poll failed", extra=kv(provider=self.provider.name, error=repr(exc)))
            self.telemetry.metrics.usage_fetch.labels(provider=self.provider.name, outcome="error").inc()
            return False

    async def _poll(self) -> bool:
        metrics = self.telemetry.metrics
        try:
            samples = await asyncio.wait_for(self.provider.fetch(), self.timeout_s)
        except TimeoutError:
            metrics.usage_fetch.labels(provider=self.provider.name, outcome="timeout").inc()
            self.telemetry.report("usage_fetch_failed", "usage fetch timed out", provider=self.provider.name,
                                  timeout_s=self.timeout_s)
            if self.health is not None:
                self.health.failed_all("timeout", f"fetch took over usage_timeout_s={self.timeout_s:g}")
            return False
        except UsageUnavailable as exc:
            metrics.usage_fetch.labels(provider=self.provider.name, outcome="error").inc()
            self.telemetry.report("usage_fetch_failed", "usage fetch failed", provider=self.provider.name,
                                  error=exc.detail)
            return False
        applied = self.cache.apply_usage(samples)
        metrics.usage_fetch.labels(provider=self.provider.name, outcome="ok").inc()
        self.last_ok = time.time()
        log.debug("usage applied", extra=kv(provider=self.provider.name, samples=len(samples), applied=applied))
        pods = self.provider.take_pod_samples()
        if self.learner is not None:
            await self.learner.after_poll(pods)
        return True

    async def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.interval_s)
            if not self._stop.is_set():
                await self.poll_once()

    async def start(self) -> None:
        """First fetch inline (so the first request sees usage), then the loop in the background."""
        await self.poll_once()
        self._task = asyncio.create_task(self._run(), name="usage-poller")

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.provider.aclose()
        if self.learner is not None:
            await self.learner.close()
