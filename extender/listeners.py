"""Who may call what: the service and debug listeners, client certificates, and refused callers.

The extender serves two listeners from one process and one event loop:

* the **service** listener (``host:port``, what the Service exposes): the verbs, ``/healthz``, ``/readyz``,
  ``/metrics``. With ``tls_client_ca_file`` the verbs need a verified client certificate; the three
  others stay open because kubelet probes and Prometheus scrapes present none.
* the **debug** listener (``debug_host:debug_port``, loopback by default; ``kubectl port-forward`` reaches
  it): ``/debug/*``, which names every tenant's pods and profiles. ``debug_port: 0`` serves none.

With a client CA, TLS is terminated by ``TlsFront`` rather than inside uvicorn, for two things uvicorn
does not give: a refused handshake (a certificate from another CA, an expired one) is logged with the
peer's address -- asyncio logs it only in debug mode -- and the verified certificate reaches the app in
the ASGI scope (``extensions.tls.client_cert_chain``, as the ASGI TLS extension names it), where
``ClientCertGate`` refuses the verbs to callers without one (403). Every refusal goes through one
``Refusals`` object: a counter per reason and one log line per peer and reason per minute, so a flood
of refused calls cannot flood the log.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client.core import CounterMetricFamily

from extender.drain import draining_server
from kube.logs import kv

log = logging.getLogger("extender.listeners")
HANDSHAKE_TIMEOUT_S = 10.0
LOG_EVERY_S = 60.0


class Refusals:
    """Refused callers: ``drsched_extender_refused_total{reason}`` and a log line with the peer, at most one a
    minute per peer host, reason and detail (the path, or the handshake error)."""

    def __init__(self, *, log_every_s: float = LOG_EVERY_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.counts: dict[str, int] = {}
        self.log_every_s, self._clock = log_every_s, clock
        self._logged: dict[tuple, float] = {}

    def refuse(self, *, peer: str, reason: str, **fields: Any) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        now = self._clock()
        key = (peer.rpartition(":")[0] or peer, reason, tuple(sorted(map(str, fields.values()))))
        if now - self._logged.get(key, -1e18) < self.log_every_s:
            return
        if len(self._logged) > 10_000:
            self._logged.clear()
        self._logged[key] = now
        log.warning("caller refused", extra=kv(peer=peer, reason=reason, refused_so_far=self.counts[reason], **fields))

    # a prometheus_client collector, registered on the app's registry
    def describe(self) -> Iterable[CounterMetricFamily]:
        return self.collect()

    def collect(self) -> Iterable[CounterMetricFamily]:
        family = CounterMetricFamily("drsched_extender_refused", "Callers refused, by reason (tls_handshake, "
                                     "no_client_cert, bind_disabled)", labels=["reason"])
        for reason, count in sorted(self.counts.items()):
            family.add_metric([reason], count)
        yield family


def peer_of(scope_or_transport: Any) -> str:
    """``host:port`` of the caller, from an ASGI scope or an asyncio transport."""
    addr = (scope_or_transport.get("client") if isinstance(scope_or_transport, dict)
            else scope_or_transport.get_extra_info("peername"))
    return f"{addr[0]}:{addr[1]}" if addr else "unknown"


async def _send_json(send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class ClientCertGate:
    """ASGI middleware: the paths in ``protected`` need a verified client certificate, else 403."""

    def __init__(self, app, *, protected: frozenset[str], refusals: Refusals) -> None:
        self.app, self.protected, self.refusals = app, protected, refusals

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["path"] in self.protected:
            tls = (scope.get("extensions") or {}).get("tls") or {}
            if not tls.get("client_cert_chain"):
                self.refusals.refuse(peer=peer_of(scope), reason="no_client_cert", path=scope["path"])
                return await _send_json(send, 403, b'{"Error":"a client certificate from the extender\'s '
                                                   b'client CA is required"}')
        return await self.app(scope, receive, send)


def _with_tls_scope(app, info: dict[str, Any]):
    async def wrapped(scope, receive, send):
        if scope["type"] == "http":
            scope["extensions"] = {**(scope.get("extensions") or {}), "tls": info}
        return await app(scope, receive, send)

    return wrapped


class TlsFront(asyncio.Protocol):
    """One connection: the TLS handshake (refusals logged with the peer), then uvicorn's HTTP protocol.

    Bytes that arrive after the handshake but before the HTTP protocol is attached are buffered."""

    def __init__(self, inner: asyncio.Protocol, context: ssl.SSLContext, refusals: Refusals) -> None:
        self.inner, self.context, self.refusals = inner, context, refusals
        self._attached, self._pending = False, bytearray()
        self._eof = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.pause_reading()  # start_tls resumes it once the TLS layer is in place
        self._task = asyncio.get_running_loop().create_task(self._handshake(transport))

    async def _handshake(self, transport) -> None:
        peer = peer_of(transport)
        try:
            tls = await asyncio.get_running_loop().start_tls(transport, self, self.context, server_side=True,
                                                             ssl_handshake_timeout=HANDSHAKE_TIMEOUT_S)
        except OSError as exc:  # ssl.SSLError, resets and the handshake timeout are all OSErrors
            self.refusals.refuse(peer=peer, reason="tls_handshake", error=f"{type(exc).__name__}: {exc}")
            transport.close()
            return
        ssl_object = tls.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        subject = dict(x[0] for x in (tls.get_extra_info("peercert") or {}).get("subject", ()))
        self.inner.app = _with_tls_scope(self.inner.app, {  # type: ignore[attr-defined]
            "client_cert_chain": [ssl.DER_cert_to_PEM_cert(der)] if der else [],
            "client_cert_name": subject.get("commonName"), "tls_version": ssl_object.version() if ssl_object else None})
        self.inner.connection_made(tls)
        self._attached = True
        if self._pending:
            data, self._pending = bytes(self._pending), bytearray()
            self.inner.data_received(data)  # type: ignore[attr-defined]
        if self._eof:
            self.inner.eof_received()  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        if self._attached:
            self.inner.data_received(data)  # type: ignore[attr-defined]
        else:
            self._pending += data

    def eof_received(self) -> bool | None:
        if self._attached:
            return self.inner.eof_received()  # type: ignore[attr-defined]
        self._eof = True
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._attached:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._attached:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self._attached:
            self.inner.resume_writing()


def tls_front_factory(context: ssl.SSLContext, refusals: Refusals) -> Callable[..., asyncio.Protocol]:
    """What uvicorn's ``http=`` takes: it builds one protocol per connection with these keyword arguments."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    def make(**kwargs: Any) -> asyncio.Protocol:
        return TlsFront(AutoHTTPProtocol(**kwargs), context, refusals)  # type: ignore[call-arg]

    return make


def serve(settings, app, debug_app=None) -> None:
    """Run the service listener and, when given, the debug listener until a signal stops them (SIGTERM after
    the app's drain, ``extender.drain``).

    The app's lifespan (cache, model, loops) runs on the service listener only; the debug app reads the
    service app's runtime. When either server stops, the other is told to stop too."""
    import uvicorn

    context = settings.server_ssl_context()
    front: Any = "auto"
    if context is not None and settings.tls_client_ca_file is not None:
        front = tls_front_factory(context, app.state.refusals)
        context = None  # TlsFront terminates TLS; uvicorn sees plain bytes
    common: dict[str, Any] = {"log_config": None, "access_log": False}
    drain = app.state.drain  # the first SIGTERM drains (extender.drain); both listeners stop when it is due
    servers = [draining_server(uvicorn.Config(app, host=settings.host, port=settings.port, http=front, **common,
                                              timeout_keep_alive=settings.keep_alive_s,
                                              **_uvicorn_ssl(settings, context)), drain)]
    if debug_app is not None:
        servers.append(draining_server(uvicorn.Config(debug_app, host=settings.debug_host,
                                                      port=settings.debug_port, lifespan="off", **common), drain))
    asyncio.run(_serve_all(servers))


def _uvicorn_ssl(settings, context: ssl.SSLContext | None) -> dict[str, Any]:
    """uvicorn builds its own context from files: HTTPS without client certificates (none asked for)."""
    if context is None:
        return {}
    return {"ssl_certfile": str(settings.tls_cert_file), "ssl_keyfile": str(settings.tls_key_file)}


async def _serve_all(servers: list) -> None:
    tasks = [asyncio.create_task(s.serve(), name=f"listener-{i}") for i, s in enumerate(servers)]
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for server in servers:
        server.should_exit = True
    await asyncio.gather(*tasks)
