"""``usage_provider: monitor`` -- poll every node agent's ``GET /usage`` concurrently with httpx.

Which agents: in a cluster, the agent pods the extender's one pod watch already sees
(``extender.pod_index.PodIndex``: label ``monitor_selector``, Running, with an IP; the DaemonSet uses
hostNetwork so the pod IP is the node's) at ``http://<pod IP>:<monitor_port>``. With a static cluster (or
in tests), ``monitor_agents`` lists ``node: base URL``. One poll asks every agent at once (at most
``monitor_concurrency`` in flight), each with a timeout of 80 % of ``usage_timeout_s`` so the poller's own
timeout never has to cut a poll short. An agent that is down, slow, or answers garbage fails only its own
node (``UsageHealth``); a node of the cluster with no agent is ``no_agent``. A node whose Ready condition
is not True (``not_ready``, from the node objects) is ``node_not_ready`` and its agent is not asked: when a
kubelet dies, its containers (the agent too) keep running and answering, so fresh readings alone would hide
that nobody looks after the node any more; its last sample ages until the node is stale. Pod readings of the
poll are kept for the profile learner (``take_pod_samples``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping

import httpx

from extender.profile_learning import PodSample
from extender.providers.health import UsageHealth
from extender.providers.monitor_report import BadReport, parse_report
from extender.usage import UsageProvider
from kube.cache import NodeUsage


class MonitorProvider(UsageProvider):
    name = "monitor"
    reads_pods = True

    def __init__(self, *, agents: Callable[[], dict[str, str]], health: UsageHealth, timeout_s: float,
                 stat: str = "ewma", pod_stat: str = "mean", collect_pods: bool = True, concurrency: int = 32,
                 known_nodes: Callable[[], Iterable[str]] = tuple, clock: Callable[[], float] = time.time,
                 transport: httpx.AsyncBaseTransport | None = None, token: str | None = None,
                 not_ready: Callable[[], Mapping[str, str]] = dict) -> None:
        self.agents, self.health, self.timeout_s = agents, health, timeout_s
        self.stat, self.pod_stat, self.collect_pods = stat, pod_stat, collect_pods
        self.known_nodes, self._clock, self.not_ready = known_nodes, clock, not_ready
        self._sem = asyncio.Semaphore(concurrency)
        self._concurrency, self._transport = concurrency, transport
        # the agents serve per-pod readings to other hosts only with their token (monitor.access)
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._client: httpx.AsyncClient | None = None
        self._pods: list[PodSample] = []

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
            limits = httpx.Limits(max_connections=self._concurrency, max_keepalive_connections=self._concurrency)
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout_s), limits=limits,
                                             transport=self._transport, follow_redirects=False,
                                             headers=self._headers)
        return self._client

    async def _one(self, node: str, base: str) -> NodeUsage | None:
        url = base if base.endswith("/usage") else base.rstrip("/") + "/usage"
        try:
            async with self._sem:
                resp = await self._http().get(url)
        except httpx.TimeoutException:
            self.health.failed(node, "timeout", f"{url}: no answer within {self.timeout_s:g} s")
            return None
        except (httpx.TransportError, OSError) as exc:
            self.health.failed(node, "unreachable", f"{url}: {type(exc).__name__}: {exc}")
            return None
        if resp.status_code != 200:
            self.health.failed(node, "http_status", f"{url}: HTTP {resp.status_code}")
            return None
        try:
            reading = parse_report(resp.content, node=node, received_at=self._clock(), stat=self.stat,
                                   pod_stat=self.pod_stat, with_pods=self.collect_pods)
        except BadReport as exc:
            self.health.failed(node, exc.reason, f"{url}: {exc.detail}")
            return None
        self.health.ok(node, reading.usage.timestamp)
        self._pods.extend(reading.pods)
        return reading.usage

    async def fetch(self) -> dict[str, NodeUsage]:
        agents = dict(self.agents())  # a copy: not-ready nodes are taken out of it
        for node in set(self.known_nodes()) - set(agents):
            self.health.failed(node, "no_agent", "no drsched-monitor agent known on this node")
        for node, condition in self.not_ready().items():
            if agents.pop(node, None) is not None:
                self.health.failed(node, "node_not_ready", f"node {condition}: its agent's readings are not used")
        names = list(agents)
        results = await asyncio.gather(*(self._one(n, agents[n]) for n in names))
        self.health.publish()
        return {n: u for n, u in zip(names, results, strict=True) if u is not None}

    def take_pod_samples(self) -> list[PodSample]:
        """The pod readings gathered since the last call (the profile learner's input)."""
        out, self._pods = self._pods, []
        return out

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
