"""The agent's HTTP shell: FastAPI routes over the sampler, and the sampler's lifetime.

``create_app`` builds an app for one ``MonitorSettings``; its lifespan creates the sampler,
takes a first sample, starts the sampling task and stops it (set the event, await the task)
on shutdown. Handlers read ``Sampler.snapshot`` through the ``get_sampler`` dependency,
which tests may override.

Per-pod readings go only to callers ``monitor.access`` allows (loopback, or the token); others get the
node-level readings of the same snapshot.

Health: ``/healthz`` is 200 while the last sample is younger than three intervals plus
two seconds, 503 otherwise (the loop is stuck or the host reads hang) -- the DaemonSet's
liveness probe restarts the agent then.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import Depends, FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.exceptions import HTTPException

from kube.logs import kv
from monitor.access import WITHHELD_HEADER, load_token, may_read_pods
from monitor.guard import LastResort, http_error, internal_errors
from monitor.metrics import build_registry
from monitor.models import HealthOut, UsageReport, usage_report
from monitor.sampler import Sampler
from monitor.settings import MonitorSettings

log = logging.getLogger(__name__)


def get_sampler(request: Request) -> Sampler:
    return request.app.state.sampler


SamplerDep = Annotated[Sampler, Depends(get_sampler)]


def max_sample_age(settings: MonitorSettings) -> float:
    return 3 * settings.interval + 2.0


def create_app(settings: MonitorSettings) -> FastAPI:
    """The agent app; sampling runs only while the app's lifespan is active."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        sampler = Sampler(settings)
        sampler.sample_once()  # so /usage has node memory and /healthz is ok from the first request
        app.state.sampler = sampler
        app.state.registry = build_registry(lambda: sampler.snapshot, settings.node_name)
        app.state.node_registry = build_registry(lambda: sampler.snapshot, settings.node_name, pods=False)
        for registry in (app.state.registry, app.state.node_registry):
            registry.register(errors)
        app.state.pods_token = load_token(settings.pods_token_file)
        stop = asyncio.Event()
        task = asyncio.create_task(sampler.run(stop), name="drsched-monitor-sampler")
        log.info("sampler started", extra=kv(node=settings.node_name, interval=settings.interval))
        try:
            yield
        finally:
            stop.set()
            await task
            log.info("sampler stopped", extra=kv(samples=sampler.snapshot.samples_total))

    app = FastAPI(
        title="drsched node monitor",
        summary="Per-node and per-pod CPU, memory, network and disk usage for the drsched extender.",
        version="0.1.0",
        lifespan=lifespan,
    )
    errors = internal_errors(None)
    app.add_middleware(LastResort, counter=lambda: errors)
    app.add_exception_handler(HTTPException, http_error)

    def pods_allowed(request: Request) -> bool:
        return may_read_pods(client_host=request.client.host if request.client else None,
                             authorization=request.headers.get("authorization"), token=request.app.state.pods_token)

    @app.get("/usage", response_model=UsageReport, summary="Node and per-pod usage at the last sample")
    async def usage(sampler: SamplerDep, request: Request, response: Response) -> UsageReport:
        report = usage_report(sampler.snapshot, sampler.settings, now_mono=time.monotonic())
        if not pods_allowed(request):
            response.headers[WITHHELD_HEADER] = "withheld"
            report = report.model_copy(update={"pods": {}})
        return report

    @app.get("/healthz", response_model=HealthOut, summary="200 while samples are fresh, 503 when stale",
             responses={503: {"model": HealthOut}})
    async def healthz(sampler: SamplerDep, response: Response) -> HealthOut:
        snap = sampler.snapshot
        age = None if snap.mono is None else time.monotonic() - snap.mono
        if age is None:
            response.status_code = 503
            return HealthOut(status="starting", samples_total=0, last_sample_age_seconds=None)
        stale = age > max_sample_age(sampler.settings)
        if stale:
            response.status_code = 503
        return HealthOut(status="stale" if stale else "ok", samples_total=snap.samples_total,
                         last_sample_age_seconds=age)

    @app.get("/metrics", summary="Prometheus metrics (drsched_monitor_*)", response_class=Response)
    async def metrics(request: Request) -> Response:
        registry = request.app.state.registry if pods_allowed(request) else request.app.state.node_registry
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return app
