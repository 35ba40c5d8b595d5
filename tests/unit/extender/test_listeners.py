"""Refused callers are counted every time and logged once a minute per peer host, reason and detail;
the client-certificate gate lets through only protected paths that carry a verified certificate."""

from __future__ import annotations

import asyncio
import logging

from prometheus_client import CollectorRegistry

from extender.listeners import ClientCertGate, Refusals


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_refusals_count_all_and_log_once_a_minute_per_peer_reason_and_detail(caplog) -> None:
    clock = Clock()
    refusals = Refusals(clock=clock)
    registry = CollectorRegistry()
    registry.register(refusals)
    with caplog.at_level(logging.WARNING, logger="extender.listeners"):
        for port in range(1000, 1100):  # a flood from one host, new source port each time
            refusals.refuse(peer=f"10.0.0.9:{port}", reason="no_client_cert", path="/bind")
        refusals.refuse(peer="10.0.0.9:2000", reason="no_client_cert", path="/filter")  # another detail
        refusals.refuse(peer="10.0.0.7:2000", reason="no_client_cert", path="/bind")    # another host
        refusals.refuse(peer="10.0.0.9:2001", reason="tls_handshake", error="expired")  # another reason
        clock.now = 61.0
        refusals.refuse(peer="10.0.0.9:3000", reason="no_client_cert", path="/bind")    # a minute later
    lines = [r for r in caplog.records if r.getMessage() == "caller refused"]
    assert [(r.kv["peer"], r.kv["reason"]) for r in lines] == [
        ("10.0.0.9:1000", "no_client_cert"), ("10.0.0.9:2000", "no_client_cert"), ("10.0.0.7:2000", "no_client_cert"),
        ("10.0.0.9:2001", "tls_handshake"), ("10.0.0.9:3000", "no_client_cert")]
    assert registry.get_sample_value("drsched_extender_refused_total", {"reason": "no_client_cert"}) == 103
    assert registry.get_sample_value("drsched_extender_refused_total", {"reason": "tls_handshake"}) == 1


def _call(gate: ClientCertGate, path: str, tls: dict | None) -> int:
    scope = {"type": "http", "path": path, "client": ("10.0.0.9", 5000),
             "extensions": {"tls": tls} if tls is not None else {}}
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(gate(scope, receive, send))
    return sent[0]["status"]


def test_the_gate_needs_a_verified_certificate_on_protected_paths_only() -> None:
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    refusals = Refusals()
    gate = ClientCertGate(app, protected=frozenset({"/bind", "/filter"}), refusals=refusals)
    assert _call(gate, "/bind", None) == 403
    assert _call(gate, "/filter", {"client_cert_chain": []}) == 403
    assert _call(gate, "/bind", {"client_cert_chain": ["-----BEGIN CERTIFICATE-----..."]}) == 200
    assert _call(gate, "/readyz", None) == 200 and _call(gate, "/metrics", None) == 200
    assert refusals.counts == {"no_client_cert": 2}
