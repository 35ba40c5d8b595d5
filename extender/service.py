"""The FastAPI app: lifespan (cache, model, background loops), the four verbs, health, metrics, debug.

Routes (``P`` = ``url_prefix`` without its trailing slash):

    POST P/filter  P/prioritize  P/bind  P/preempt      the extender verbs (always HTTP 200 when handled)
    GET  /healthz  /readyz  /metrics                    liveness, readiness (degraded = heuristic fallback;
                                                        draining = stopping, ``extender.drain``)

``P/bind`` answers 404 unless ``bind_enabled``; with ``tls_client_ca_file`` every verb needs a verified
client certificate (``extender.listeners.ClientCertGate``). The ``/debug/*`` routes are a separate app
(``extender.debug_routes``) on a separate listener.

Error mapping: a body that is not JSON, has wrong types or is too large -> 400 ``{"Error": ...}``, refused
here before any verb runs; what a verb raises is mapped by ``extender.verbs`` (the one table both entry
paths use: a well-formed request that cannot be served -> 200 with ``Error`` for filter and bind, 400 for
prioritize and preempt; a bug -> logged with its traceback and answered the same way, never a bare 500).
What escapes every route (a decoder's ``RecursionError``, FastAPI's own 404 / 405 / parse errors) is
answered by ``extender.guard`` in the same ``{"Error": ...}`` shape.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic_core import to_json
from starlette.exceptions import HTTPException as StarletteHTTPException

from extender.annotation_trust import AnnotationTrust
from extender.drain import CloseWhileDraining, Drain
from extender.fastwire import FastVerbs, replay_body
from extender.guard import LastResort, http_error, verb_of
from extender.listeners import ClientCertGate, Refusals, peer_of
from extender.pod_index import PodIndex
from extender.profile_store import JsonFileBackend, LearnedProfileStore, ProfileLearner, ProfileMetrics
from extender.providers.health import UsageMetrics
from extender.recording import Recording
from extender.runtime import Binder, PodWorkload, Readiness, RecordingBinder, Runtime, load_policy, thresholds_of
from extender.settings import Settings, get_settings
from extender.static_cluster import StaticCluster, load_static_cluster
from extender.telemetry import Telemetry
from extender.usage import ProviderContext, UsagePoller, make_provider
from extender.verbs import answer, count, error_body
from extender.watch_health import WatchHealth, WatchMetrics
from extender.wire import (
    ErrorBody,
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
)
from kube.cache import ClusterCache
from kube.logs import kv
from kube.selectors import parse_selector

log = logging.getLogger(__name__)
_400 = {400: {"model": ErrorBody, "description": "The request could not be read (not JSON, wrong types, too large)."}}


def _json(body: Any, status: int = 200) -> Response:
    return Response(to_json(body), status_code=status, media_type="application/json")


def _raw(status: int, body: bytes) -> Response:
    return Response(body, status_code=status, media_type="application/json")


def _error(status: int, message: str) -> Response:
    return _raw(status, error_body(message))


class BodyLimit:
    """ASGI middleware: refuse bodies over ``limit`` bytes with 400 before anything parses them."""

    def __init__(self, app, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        if not headers.get(b"content-type", b"").startswith(b"application/json"):
            # kube-scheduler always sends JSON; `curl -d` says form-urlencoded. Every body here is JSON.
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k != b"content-type"]
                     + [(b"content-type", b"application/json")]}
        length = headers.get(b"content-length")
        if length is not None:
            try:
                too_big = int(length) > self.limit
            except ValueError:
                too_big = True
            if too_big:
                count_bad_request(scope.get("app"), scope.get("path", ""))
                return await _error(400, f"request body over the {self.limit}-byte limit")(scope, receive, send)
            return await self.app(scope, receive, send)
        chunks, size = [], 0  # chunked: read it all here (bounded), then replay
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return None
            size += len(msg.get("body", b""))
            if size > self.limit:
                count_bad_request(scope.get("app"), scope.get("path", ""))
                return await _error(400, f"request body over the {self.limit}-byte limit")(scope, receive, send)
            chunks.append(msg.get("body", b""))
            if not msg.get("more_body"):
                break
        return await self.app(scope, replay_body(b"".join(chunks), receive), send)


def _stale_nodes(rt: Runtime) -> dict[str, dict]:
    """Nodes scored from requests because their usage is stale or missing, with what the provider knows about
    why ({age_s, error, detail}); none for usage provider ``none``, where no node ever has usage."""
    if rt.settings.usage_provider == "none":
        return {}
    view, now = rt.cache.view(), time.time()
    status = rt.usage_status()
    out = {}
    for name, ts in zip(view.names, view.usage_ts, strict=True):
        if now - ts > rt.settings.max_usage_age_s:
            why = status.get(name) or {}
            out[name] = {"age_s": None if ts == -float("inf") else round(now - float(ts), 1),
                         "error": why.get("error"), "detail": why.get("detail")}
    return out


def count_internal_error(app: FastAPI, verb: str) -> None:
    """One more ``drsched_extender_internal_errors_total{verb}`` on the runtime behind ``app`` (once it exists)."""
    rt = getattr(app.state, "runtime", None)
    if rt is not None:
        rt.telemetry.metrics.internal_errors.labels(verb=verb).inc()


def count_bad_request(app: FastAPI | None, path: str) -> None:
    """One more ``requests_total{verb, outcome="bad_request"}`` for a verb's body refused before its route ran
    (too large, not JSON, wrong types, nested too deeply): the routes count only the requests they handle."""
    rt = getattr(getattr(app, "state", None), "runtime", None)
    verb = verb_of(path)
    if rt is not None and verb != "other":
        count(rt, verb, "bad_request")


def describe_invalid(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts)


async def _build_runtime(app: FastAPI, settings: Settings | None,
                         cluster: StaticCluster | None) -> tuple[Runtime, list[Callable[[], Awaitable]]]:
    """Cache, policy, binder and background loops for ``settings``; returns the runtime and its stoppers."""
    settings = settings or app.dependency_overrides.get(get_settings, get_settings)()
    telemetry = Telemetry()
    cache = ClusterCache(assume_grace_s=settings.assume_grace_s)
    registry = telemetry.metrics.registry
    profiles = LearnedProfileStore(
        min_samples=settings.profile_min_samples, half_life_s=settings.profile_half_life_s,
        workload_labels=settings.workload_labels, ttl_s=settings.profile_ttl_s, max_profiles=settings.profile_max,
        backend=JsonFileBackend(settings.profile_file) if settings.profile_file else None,
        metrics=ProfileMetrics(registry),
        trust=AnnotationTrust(fraction=settings.annotation_trust_fraction, registry=registry, telemetry=telemetry))
    await asyncio.to_thread(profiles.load)
    watch_metrics = WatchMetrics(registry)  # the families are announced in every mode (the alert rules read them)
    context = ProviderContext(telemetry=telemetry, usage_metrics=UsageMetrics(registry),
                              node_names=lambda: cache.node_names)
    pod_workload: PodWorkload = settings.pod_workloads.get
    policy, degraded = load_policy(settings, telemetry)
    stoppers: list[Callable[[], Awaitable]] = []
    recording = Recording(settings, cache=cache, policy=policy, telemetry=telemetry,
                          thresholds=thresholds_of(settings), workload_of=profiles.workload_of)
    recording.start()  # first: a log directory it cannot write stops the start before anything runs
    binder: Binder
    ready: Readiness
    static_usage, static_mtime = None, None
    pod_labels: dict[tuple[str, str], dict[str, str]] = {}  # a static cluster's; a watched cache keeps none
    if settings.static_cluster is not None:
        static_mtime = settings.static_cluster.stat().st_mtime if settings.static_cluster.exists() else None
        if cluster is None:
            cluster = await asyncio.to_thread(load_static_cluster, settings.static_cluster,
                                              default_net_mbps=settings.default_net_mbps,
                                              default_disk_mbps=settings.default_disk_mbps)
        static_usage = cluster.usage
        cache.replace_nodes(cluster.nodes)
        cache.replace_pods(cluster.pods)
        pod_labels = cluster.pod_labels
        for workload, demand in cluster.profiles.items():
            profiles.put(workload, demand)
        binder = RecordingBinder()
        watch_status = dict  # no apiserver, no watches

        def ready() -> tuple[bool, str]:
            return True, "static cluster"
    else:
        from extender.kube import KubeBinder, make_core_api
        from extender.kube_index import IndexingWatcher
        from kube.client import KubeEventSink

        core = await asyncio.to_thread(make_core_api, kubeconfig=settings.kubeconfig)
        sink = KubeEventSink(core, component="drsched-extender")
        telemetry.events.sink = sink
        index = PodIndex(selector=parse_selector(settings.monitor_selector), port=settings.monitor_port,
                         namespace=settings.monitor_namespace, workload_of=profiles.workload_of)
        context.agents, context.addresses, pod_workload = index.agents, index.addresses, index.workload
        context.not_ready = index.not_ready
        watches = WatchHealth(metrics=watch_metrics)
        watcher = IndexingWatcher(core, cache, settings, store=profiles, telemetry=telemetry, index=index,
                                  health=watches)
        watch_status = watches.snapshot
        watcher.observer = recording.observe_pod  # shadow mode and outcomes see each pod event first
        watcher.start()
        binder = KubeBinder(core, timeout_s=settings.bind_timeout_s)

        def ready() -> tuple[bool, str]:
            # Synced once, it stays ready: a frozen cache still scores what it knows; it says which watch is down.
            if not all(e.is_set() for e in watcher.synced.values()):
                return False, "cache not synced with the apiserver yet"
            down = watches.down()
            return True, f"cache synced; {down} (scoring from the last-known cache)" if down else "cache synced"

        async def stop_watch() -> None:
            await asyncio.to_thread(watcher.stop)
            sink.close()

        stoppers.append(stop_watch)
    provider = make_provider(settings, static_usage=static_usage, static_mtime=static_mtime, context=context)
    learner = ProfileLearner(profiles, pod_workload, save_interval_s=settings.profile_save_interval_s) \
        if provider.reads_pods else None
    poller = UsagePoller(provider, cache, telemetry, interval_s=settings.usage_interval_s,
                         timeout_s=settings.usage_timeout_s, learner=learner)
    rt = Runtime(settings=settings, cache=cache, telemetry=telemetry, policy=policy, degraded=degraded,
                 profiles=profiles, binder=binder, ready=ready, usage_status=poller.status,
                 pod_workload=pod_workload, recording=recording, watch_status=watch_status,
                 pod_labels=lambda namespace, name: pod_labels.get((namespace, name)))
    await poller.start()
    stoppers.insert(0, poller.stop)
    stoppers.append(recording.stop)  # last: after the watch, whose events it writes, has stopped
    telemetry.metrics.model.info({"policy": policy.name, "version": policy.version,
                                  "degraded": "true" if degraded else "false"})
    registry.register(app.state.refusals)
    log.info("extender configured", extra=kv(**settings.echo()))
    if settings.bind_enabled and settings.tls_client_ca_file is None:
        log.error("INSECURE: POST /bind is served to ANY caller, without client certificates "
                  "(insecure_bind_without_client_ca); anyone who reaches the port can bind pods. Local tests only.",
                  extra=kv(port=settings.port))
    if settings.debug_port and settings.debug_host not in ("127.0.0.1", "::1", "localhost"):
        log.warning("debug endpoints listen beyond loopback; they name every tenant's pods and profiles",
                    extra=kv(debug_host=settings.debug_host, debug_port=settings.debug_port))
    log.info("serving", extra=kv(policy=policy.name, version=policy.version, degraded=degraded or "",
                                 nodes=len(cache.node_names), pods=cache.n_pods))
    return rt, stoppers


def create_app(settings: Settings | None = None, *, cluster: StaticCluster | None = None) -> FastAPI:
    """The app. ``settings`` None: ``get_settings()`` (or its dependency override) inside the lifespan.

    ``cluster``: the static cluster already parsed from ``settings.static_cluster`` (``__main__`` parses it
    up front to fail fast), so a large file is not parsed twice.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        rt, stoppers = await _build_runtime(app, settings, cluster)
        app.state.runtime = rt
        try:
            yield
        finally:
            for stop in stoppers:
                await stop()

    effective = settings if settings is not None else get_settings()
    prefix, limit = effective.prefix, effective.max_body_bytes
    app = FastAPI(title="drsched extender", version="1", lifespan=lifespan,
                  description="Kubernetes scheduler extender: load-aware filter / prioritize / bind / preempt.")
    app.add_middleware(FastVerbs, prefix=prefix)  # inside BodyLimit: bodies are size-checked first
    app.add_middleware(BodyLimit, limit=limit)
    app.state.refusals = refusals = Refusals()
    if effective.tls_client_ca_file is not None:
        verbs = frozenset(f"{prefix}/{verb}" for verb in ("filter", "prioritize", "bind", "preempt"))
        app.add_middleware(ClientCertGate, protected=verbs, refusals=refusals)
    app.add_middleware(LastResort, count=lambda verb: count_internal_error(app, verb))
    app.state.drain = drain = Drain(effective.shutdown_drain_s)  # started by SIGTERM (extender.listeners.serve)
    app.add_middleware(CloseWhileDraining, drain=drain)  # outermost: every answer while draining closes

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 400:  # FastAPI could not parse the body (a 404 / 405 names no verb's request)
            count_bad_request(request.app, request.url.path)
        return await http_error(request, exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        count_bad_request(request.app, request.url.path)
        return _error(400, describe_invalid(exc))

    def rt_of(request: Request) -> Runtime:
        return request.app.state.runtime

    def serve(request: Request, verb: str, call: Callable[[Runtime], Any]) -> Response:
        rt = rt_of(request)
        _, status, body = answer(rt, verb, lambda: call(rt), start=time.perf_counter())
        return _raw(status, body)

    @app.post(f"{prefix}/filter", response_model=ExtenderFilterResult, responses=_400, tags=["extender"])
    async def filter_(args: ExtenderArgs, request: Request) -> Response:
        """Drop nodes the pod does not fit (requests) or that run hot (measured usage); reasons per node."""
        return serve(request, "filter", lambda rt: rt.filter(args))

    @app.post(f"{prefix}/prioritize", response_model=list[HostPriority], responses=_400, tags=["extender"])
    async def prioritize(args: ExtenderArgs, request: Request) -> Response:
        """Score each candidate node 0-10 with the served policy."""
        return serve(request, "prioritize", lambda rt: rt.prioritize(args))

    @app.post(f"{prefix}/bind", response_model=ExtenderBindingResult, responses=_400, tags=["extender"])
    async def bind(args: ExtenderBindingArgs, request: Request) -> Response:
        """POST the Binding (idempotent); static mode records it and assumes the pod on the node."""
        if not effective.bind_enabled:
            refusals.refuse(peer=peer_of(request.scope), reason="bind_disabled", path=request.url.path)
            return _error(404, "bind is disabled on this extender (bind_enabled: false); kube-scheduler's "
                               "DefaultBinder binds")
        rt = rt_of(request)

        def run() -> dict:
            rt.bind(namespace=args.PodNamespace, name=args.PodName, uid=args.PodUID, node=args.Node)
            return {"Error": ""}

        outcome, status, body = await asyncio.to_thread(
            answer, rt, "bind", run, start=time.perf_counter(),
            about={"pod": f"{args.PodNamespace}/{args.PodName}", "node": args.Node})
        rt.telemetry.metrics.binds.labels(outcome=outcome).inc()
        return _raw(status, body)

    @app.post(f"{prefix}/preempt", response_model=ExtenderPreemptionResult, responses=_400, tags=["extender"])
    async def preempt(args: ExtenderPreemptionArgs, request: Request) -> Response:
        """Accept kube-scheduler's candidate victims unchanged (as UIDs)."""

        def run(rt: Runtime) -> dict:
            if args.NodeNameToMetaVictims is not None:
                return args.model_dump(include={"NodeNameToMetaVictims"})
            out: dict[str, Any] = {}
            for node, victims in (args.NodeNameToVictims or {}).items():
                if victims is None:
                    out[node] = None
                    continue
                uids = [{"UID": str(((p.get("metadata") or {}) if isinstance(p.get("metadata"), dict) else {})
                                    .get("uid", ""))} for p in victims.Pods or []]
                out[node] = {"Pods": uids, "NumPDBViolations": victims.NumPDBViolations}
            return {"NodeNameToMetaVictims": out}

        return serve(request, "preempt", run)

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict:
        """Liveness: the process answers."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["ops"],
             responses={503: {"description": "Cache not synced yet, or draining before shutdown."}})
    async def readyz(request: Request) -> Response:
        """Readiness; ``degraded`` (still 200) when a heuristic stands in for the model, with the reason;
        ``draining`` (503) between SIGTERM and shutdown (``extender.drain``)."""
        rt = rt_of(request)
        ok, why = rt.ready()
        status = ("degraded" if rt.degraded else "ready") if ok else "not ready"
        if request.app.state.drain.active:  # stopping: the Service should send new connections elsewhere
            ok, why, status = False, "draining before shutdown", "draining"
        body = {"status": status, "policy": rt.policy.name, "version": rt.policy.version,
                "reason": rt.degraded or why, "nodes": len(rt.cache.node_names), "pods": rt.cache.n_pods,
                "usage_provider": rt.settings.usage_provider, "stale_nodes": _stale_nodes(rt),
                "watches": rt.watch_status()}
        return _json(body, 200 if ok else 503)

    @app.get("/metrics", tags=["ops"])
    async def metrics(request: Request) -> Response:
        """Prometheus exposition."""
        rt = rt_of(request)
        m = rt.telemetry.metrics
        view = rt.cache.view()
        m.cache_age.set(max(0.0, time.time() - rt.cache.last_change))
        m.nodes.set(len(view.names))
        m.pods.set(rt.cache.n_pods)
        fresh = (time.time() - view.usage_ts) <= rt.settings.max_usage_age_s
        m.stale_nodes.set(int((~fresh).sum()))
        m.node_stale.clear()  # nodes that left the cluster leave the series too
        for name, ok in zip(view.names, fresh, strict=True):
            m.node_stale.labels(node=name).set(0 if ok else 1)
        return Response(generate_latest(m.registry), media_type=CONTENT_TYPE_LATEST)

    return app
