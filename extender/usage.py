"""Where node usage comes from: the ``UsageProvider`` interface, its registry, and the poller.

A provider answers ``await fetch()`` with ``{node name: NodeUsage}`` in policy units (cores, GiB, MB/s,
MB/s) and the time each sample was taken. ``UsagePoller`` calls it every ``usage_interval_s`` with a
``usage_timeout_s`` timeout and feeds the cache; a failed fetch is reported (log + counter) and the nodes
simply age until ``max_usage_age_s`` makes them stale, when they are scored from requests.

Providers: ``static`` (a YAML file, re-read when it changes), ``none``. The monitor issue registers
``monitor`` and ``prometheus`` with ``register_provider``; until then naming them is a ``ConfigError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from extender.cache import ClusterCache, NodeUsage
from extender.errors import ConfigError, StaticClusterError, UsageUnavailable
from extender.settings import Settings
from extender.static_cluster import load_usage, to_samples
from extender.telemetry import Telemetry, kv

log = logging.getLogger(__name__)


class UsageProvider(Protocol):
    name: str

    async def fetch(self) -> dict[str, NodeUsage]: ...


class NoUsage:
    """No usage at all: every node is scored from requests."""

    name = "none"

    async def fetch(self) -> dict[str, NodeUsage]:
        return {}


class StaticUsageProvider:
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


ProviderFactory = Callable[[Settings], UsageProvider]
_PROVIDERS: dict[str, ProviderFactory] = {
    "none": lambda s: NoUsage(),
    "static": lambda s: StaticUsageProvider(s.usage_file or s.static_cluster),
}


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Make ``usage_provider: <name>`` build ``factory(settings)`` (the monitor issue's entry point)."""
    _PROVIDERS[name] = factory


def make_provider(settings: Settings, *, static_usage: dict | None = None,
                  static_mtime: float | None = None) -> UsageProvider:
    """Build the configured provider; ``static_usage`` seeds the static one with an already parsed file."""
    if settings.usage_provider == "static" and settings.usage_file is None and static_usage is not None:
        return StaticUsageProvider(settings.static_cluster, preloaded=static_usage, mtime=static_mtime)
    try:
        factory = _PROVIDERS[settings.usage_provider]
    except KeyError:
        raise ConfigError(f"usage_provider {settings.usage_provider!r} is not available yet "
                          f"(available: {', '.join(sorted(_PROVIDERS))})") from None
    return factory(settings)


class UsagePoller:
    """Background loop: fetch, apply to the cache, sleep; ``start``/``stop`` from the app's lifespan."""

    def __init__(self, provider: UsageProvider, cache: ClusterCache, telemetry: Telemetry, *,
                 interval_s: float, timeout_s: float) -> None:
        self.provider, self.cache, self.telemetry = provider, cache, telemetry
        self.interval_s, self.timeout_s = interval_s, timeout_s
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None
        self.last_ok: float | None = None

    async def poll_once(self) -> bool:
        metrics = self.telemetry.metrics
        try:
            samples = await asyncio.wait_for(self.provider.fetch(), self.timeout_s)
        except TimeoutError:
            metrics.usage_fetch.labels(provider=self.provider.name, outcome="timeout").inc()
            self.telemetry.report("usage_fetch_failed", "usage fetch timed out", provider=self.provider.name,
                                  timeout_s=self.timeout_s)
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
