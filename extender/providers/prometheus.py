"""``usage_provider: prometheus`` -- node usage from node-exporter metrics through the Prometheus HTTP API.

One poll runs the instant queries of ``promql.queries`` concurrently (``GET <prometheus_url>/api/v1/query``,
timeout 80 % of ``usage_timeout_s``) and maps the series to nodes (``promql.InstanceMapper``). Prometheus
down, slow, refusing a query or answering garbage fails the poll for every known node with that reason
(the poller then also reports ``usage_fetch_failed``); a node without cpu or memory series is ``no_data``;
a series that maps to no node is counted as ``unmapped``. A node whose Ready condition is not True (``not_ready``,
from the node objects) is ``node_not_ready`` and its series are dropped: a dead kubelet leaves node-exporter
running, so its series stay fresh while nothing new can start there (the monitor provider's rule).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping

import httpx

from extender.errors import UsageUnavailable
from extender.providers.health import UsageHealth
from extender.providers.promql import InstanceMapper, PromError, Vector, combine, parse_vector
from extender.usage import UsageProvider
from kube.cache import NodeUsage


class PrometheusProvider(UsageProvider):
    name = "prometheus"

    def __init__(self, *, url: str, queries: Mapping[str, str], label: str, health: UsageHealth, timeout_s: float,
                 instance_map: Mapping[str, str] | None = None, known_nodes: Callable[[], Iterable[str]] = tuple,
                 addresses: Callable[[], Mapping[str, str]] | None = None, clock: Callable[[], float] = time.time,
                 transport: httpx.AsyncBaseTransport | None = None,
                 not_ready: Callable[[], Mapping[str, str]] = dict) -> None:
        self.url = url.rstrip("/") + "/api/v1/query"
        self.queries, self.label, self.health, self.timeout_s = dict(queries), label, health, timeout_s
        self.instance_map = dict(instance_map or {})
        self.known_nodes, self.addresses, self._clock = known_nodes, addresses, clock
        self.not_ready = not_ready
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout_s), transport=self._transport)
        return self._client

    async def _query(self, key: str, query: str) -> Vector:
        try:
            resp = await self._http().get(self.url, params={"query": query})
        except httpx.TimeoutException:
            raise PromError("timeout", f"{key} query: no answer within {self.timeout_s:g} s") from None
        except (httpx.TransportError, OSError) as exc:
            raise PromError("unreachable", f"{self.url}: {type(exc).__name__}: {exc}") from None
        if resp.status_code != 200:
            # a bad query is 400/422 with a JSON error body: say what Prometheus said
            if resp.status_code in (400, 422):
                try:
                    parse_vector(resp.content, label=self.label)
                except PromError as exc:
                    if exc.reason == "query_error":
                        raise PromError("query_error", f"{key} query: {exc.detail}") from None
            raise PromError("http_status", f"{key} query: HTTP {resp.status_code}")
        try:
            return parse_vector(resp.content, label=self.label)
        except PromError as exc:
            raise PromError(exc.reason, f"{key} query: {exc.detail}") from None

    async def fetch(self) -> dict[str, NodeUsage]:
        keys = list(self.queries)
        results = await asyncio.gather(*(self._query(k, self.queries[k]) for k in keys), return_exceptions=True)
        failure = next((r for r in results if isinstance(r, BaseException)), None)
        if failure is not None:
            if not isinstance(failure, PromError):
                raise failure
            self.health.failed_all(failure.reason, failure.detail)
            self.health.publish()
            raise UsageUnavailable(self.name, f"{failure.reason}: {failure.detail}")
        vectors = dict(zip(keys, results, strict=True))
        known = list(self.known_nodes())
        mapper = InstanceMapper(self.instance_map, known, self.addresses() if self.addresses else None)
        samples, unmapped = combine(vectors, mapper=mapper, now=self._clock())
        self.health.count("unmapped", len(unmapped))
        for node, condition in self.not_ready().items():
            if samples.pop(node, None) is not None:
                self.health.failed(node, "node_not_ready", f"node {condition}: its series are not used")
        for node, sample in samples.items():
            self.health.ok(node, sample.timestamp)
        seen = sorted({v for vec in vectors.values() for v in vec.values})[:5]
        for node in set(known) - set(samples) - set(self.not_ready()):
            self.health.failed(node, "no_data", f"no cpu and memory series for {node} ({self.label} seen: {seen})")
        self.health.publish()
        return samples

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
