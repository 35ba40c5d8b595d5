"""One verb's answer, whichever door the request came through: the call, the one error map, the counting.

Two entry paths serve the extender verbs: ``extender.fastwire`` (raw ASGI, filter and prioritize) and the
FastAPI routes in ``extender.service`` (every verb, and the filter / prioritize bodies fastwire hands on).
Both call ``answer`` here, so what an error becomes on the wire is written once:

=================  ======================  ==========================================================
raised             outcome (requests_total)  reply
=================  ======================  ==========================================================
nothing            ``ok``                  200, the verb's result
``BadRequest``     ``bad_request``         the verb's error reply (``error_reply``)
``BindError``      ``refused``             the verb's error reply; logged as a warning
anything else      ``error``               the verb's error reply, ``internal error: <type>: <text>``;
                                           logged with its traceback, counted in
                                           ``drsched_extender_internal_errors_total{verb}``
=================  ======================  ==========================================================

The verb's error reply is HTTP 200 where kube-scheduler reads an ``Error`` field of the reply (filter,
bind; filter's carries its other fields as null) and 400 ``{"Error": ...}`` where the reply has no such
field (prioritize, preempt). Bodies refused before any verb ran (too large, not JSON, wrong types, nested
too deeply) are counted with ``count(outcome="bad_request")`` by whoever refused them; ``extender.guard``
answers what escapes everything with the same status per verb (``ERROR_STATUS``). The module owns no state.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import orjson
from pydantic_core import to_json

from extender.errors import BadRequest, BindError
from extender.wire import RawJSON
from kube.logs import kv

if TYPE_CHECKING:
    from extender.runtime import Runtime

log = logging.getLogger(__name__)
ERROR_STATUS = {"filter": 200, "bind": 200, "prioritize": 400, "preempt": 400}
"""HTTP status of a verb's error reply: 200 where kube-scheduler reads the reply's ``Error`` field."""
_FILTER_NULLS = {"Nodes": None, "NodeNames": None, "FailedNodes": None, "FailedAndUnresolvableNodes": None}


def encode(result: Any) -> bytes:
    """A verb's result as JSON bytes: ``RawJSON`` as is, else orjson (4x faster than pydantic's encoder on a
    5,000-name filter reply, byte for byte the same); pydantic's only for what orjson refuses (an integer
    beyond 64 bits that a client sent and a reply echoes, e.g. preempt's ``NumPDBViolations``)."""
    if isinstance(result, RawJSON):
        return result
    try:
        return orjson.dumps(result)
    except orjson.JSONEncodeError:
        return to_json(result)


def error_body(message: str) -> bytes:
    """``{"Error": message}``: the body of every error reply that is not filter's (``error_reply``)."""
    return orjson.dumps({"Error": message})


def error_reply(verb: str, message: str) -> tuple[int, bytes]:
    """(status, body) of ``verb``'s error reply saying ``message`` (module docstring)."""
    if verb == "filter":
        return 200, orjson.dumps({**_FILTER_NULLS, "Error": message})
    return ERROR_STATUS.get(verb, 400), error_body(message)


def count(rt: Runtime, verb: str, outcome: str, *, start: float | None = None) -> None:
    """One more ``requests_total{verb, outcome}``, and the verb's latency since ``start`` (perf_counter)."""
    m = rt.telemetry.metrics
    if start is not None:
        m.latency.labels(verb=verb).observe(time.perf_counter() - start)
    m.requests.labels(verb=verb, outcome=outcome).inc()


def answer(rt: Runtime, verb: str, call: Callable[[], Any], *, start: float,
           about: Mapping[str, Any] | None = None) -> tuple[str, int, bytes]:
    """(outcome, status, body) of ``call()`` as ``verb``'s reply, counted (latency from ``start``).

    ``about``: key=value fields naming the request in the log lines (e.g. the pod of a bind)."""
    fields = {"verb": verb, **(about or {})}
    try:
        outcome, status, body = "ok", 200, encode(call())
    except BadRequest as exc:
        outcome, (status, body) = "bad_request", error_reply(verb, str(exc))
    except BindError as exc:
        log.warning("request refused", extra=kv(**fields, error=str(exc)))
        outcome, (status, body) = "refused", error_reply(verb, str(exc))
    except Exception as exc:  # a bug: log it, answer the verb's error, never a 500
        log.exception("request failed", extra=kv(**fields))
        rt.telemetry.metrics.internal_errors.labels(verb=verb).inc()
        outcome, (status, body) = "error", error_reply(verb, f"internal error: {type(exc).__name__}: {exc}")
    count(rt, verb, outcome, start=start)
    return outcome, status, body
