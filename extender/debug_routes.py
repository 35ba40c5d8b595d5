"""The ``/debug/*`` routes, as an app of their own for the debug listener (loopback by default).

They tell a caller every tenant's pod names, demand profiles, placements and the usage of every node,
so they are not served on the service port that kube-scheduler and the Service reach
(``extender.listeners``). The app has no lifespan: it reads the runtime the service app's lifespan built.

    GET  /debug/explain?namespace=&name=     explain a cached pod against every untainted, uncordoned node
    POST /debug/explain                      explain an ExtenderArgs
    GET  /debug/usage                        per-node usage age, staleness and provider errors
    GET  /debug/profiles?workload=           learned (and static) workload profiles
    GET  /debug/shadow                       shadow mode: agreement, predicted gain, recent comparisons
    GET|POST /debug/noop                     does nothing (the benchmark's floor)
"""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic_core import to_json
from starlette.exceptions import HTTPException as StarletteHTTPException

from extender.errors import BadRequest
from extender.guard import LastResort, http_error
from extender.runtime import Runtime
from extender.wire import ErrorBody, ExtenderArgs
from kube.logs import kv

log = logging.getLogger("extender.debug")


def _json(body: Any, status: int = 200) -> Response:
    return Response(to_json(body), status_code=status, media_type="application/json")


def create_debug_app(service_app: FastAPI) -> FastAPI:
    """The debug app over ``service_app``'s runtime (503 until the service app has started)."""
    from extender.service import BodyLimit, count_internal_error, describe_invalid

    app = FastAPI(title="drsched extender debug", version="1", openapi_url=None, docs_url=None, redoc_url=None)
    app.add_middleware(BodyLimit, limit=64 * 2**20)
    app.add_middleware(LastResort, count=lambda verb: count_internal_error(service_app, "debug"))
    app.add_exception_handler(StarletteHTTPException, http_error)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        return _json({"Error": describe_invalid(exc)}, 400)

    def runtime() -> Runtime | None:
        return getattr(service_app.state, "runtime", None)

    def not_started() -> Response:
        return _json({"Error": "the extender has not started yet"}, 503)

    @app.get("/debug/explain", responses={404: {"model": ErrorBody}})
    async def explain_get(namespace: str = Query("default"), name: str = Query(...)) -> Response:
        """Explain a pod the cache knows, against every cached node."""
        rt = runtime()
        if rt is None:
            return not_started()
        pod = rt.cache.pod_view(namespace, name)
        if pod is None:
            return _json({"Error": f"pod {namespace}/{name} is not in the cache"}, 404)
        rec = rt.cache.pod(namespace, name)
        return _json(rt.explain(pod=pod, key=(namespace, name, rec.uid if rec else "")))

    @app.post("/debug/explain")
    async def explain_post(args: ExtenderArgs) -> Response:
        """Explain an ExtenderArgs: what filter and prioritize would answer, node by node."""
        rt = runtime()
        if rt is None:
            return not_started()
        try:
            return _json(rt.explain(args))
        except BadRequest as exc:
            return _json({"Error": str(exc)}, 400)
        except Exception as exc:  # a bug: logged, answered, never a bare 500
            log.exception("explain failed", extra=kv(path="/debug/explain"))
            rt.telemetry.metrics.internal_errors.labels(verb="explain").inc()
            return _json({"Error": f"internal error: {type(exc).__name__}: {exc}"}, 400)

    @app.get("/debug/usage")
    async def debug_usage() -> Response:
        """Per cached node: age of its usage sample, stale or not, and the provider's last error."""
        rt = runtime()
        if rt is None:
            return not_started()
        view, now = rt.cache.view(), time.time()
        status = rt.usage_status()
        nodes = {}
        for name, ts in zip(view.names, view.usage_ts.tolist(), strict=True):
            age = now - ts if ts > -1e300 else None
            nodes[name] = {"age_s": None if age is None else round(max(age, 0.0), 3),
                           "stale": age is None or age > rt.settings.max_usage_age_s,
                           **{k: v for k, v in (status.get(name) or {}).items() if k != "age_s"}}
        return _json({"provider": rt.settings.usage_provider, "max_usage_age_s": rt.settings.max_usage_age_s,
                      "nodes": nodes})

    @app.get("/debug/profiles")
    async def debug_profiles(workload: str | None = Query(None)) -> Response:
        """Learned workload profiles (demand, samples, trusted) and the static ones, by workload key."""
        rt = runtime()
        if rt is None:
            return not_started()
        s = rt.settings
        return _json({"min_samples": s.profile_min_samples, "half_life_s": s.profile_half_life_s,
                      "file": str(s.profile_file) if s.profile_file else None,
                      "profiles": rt.profiles.describe(workload)})

    @app.get("/debug/shadow")
    async def debug_shadow() -> Response:
        """Shadow mode's summary: bindings seen, agreement rate, mean predicted gain, the latest comparisons."""
        rt = runtime()
        if rt is None:
            return not_started()
        return _json(rt.recording.summary() if rt.recording is not None else {"enabled": False})

    @app.api_route("/debug/noop", methods=["GET", "POST"])
    async def noop() -> Response:
        """Does nothing; the benchmark's round-trip floor."""
        return Response(b"{}", media_type="application/json")

    return app
