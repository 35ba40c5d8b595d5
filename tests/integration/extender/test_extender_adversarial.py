"""Hostile bodies against a real ``python -m extender``: both listeners, every verb, no 500, no drop, no bug.

The corpus (``tests.adversarial``) is what no schema describes: depth, width, huge numbers, odd Unicode,
duplicate keys, truncation. Every answer must be a 4xx with an ``Error`` naming the problem, or a 200 whose
``Error`` does (filter and bind carry it); nothing may reach the unexpected-exception path, so
``drsched_extender_internal_errors_total`` stays 0 -- and when something does, the guard logs it and counts
it (checked by injecting a fault below).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.adversarial import Answer, bodies, metric, send
from tests.helpers import REPO, free_port, wait_for

from .payloads import EXAMPLE, args_names

pytestmark = pytest.mark.timeout(300)
PREFIX = "/scheduler"
BIND = {"PodName": "p", "PodNamespace": "default", "PodUID": "u", "Node": "node-a"}
PREEMPT = {"Pod": args_names()["Pod"], "NodeNameToVictims": {"node-a": {"Pods": [], "NumPDBViolations": 0}}}


@pytest.fixture(scope="module")
def extender(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int, subprocess.Popen]]:
    port, debug_port = free_port(), free_port()
    log_path = tmp_path_factory.mktemp("extender") / "extender.log"
    with log_path.open("wb") as log_file:  # a file, not a pipe: nobody reads a pipe while the corpus runs
        proc = subprocess.Popen([sys.executable, "-m", "extender", "--static-cluster", str(EXAMPLE), "--port",
                                 str(port), "--debug-port", str(debug_port), "--url-prefix", PREFIX, "--bind-enabled",
                                 "true", "--insecure-bind-without-client-ca", "true"], cwd=REPO, stdout=log_file,
                                stderr=subprocess.STDOUT)
    wait_for(lambda: send(port, "GET", "/healthz", headers={}).status == 200, timeout=30,
             what="the extender's /healthz", ignore=(OSError,))
    yield port, debug_port, proc
    proc.terminate()
    proc.wait(timeout=10)
    assert "Traceback" not in log_path.read_text(), \
        "an exception was printed that the guard did not log (see the extender log)"


def _check(name: str, answer: Answer, *, error_field_ok: bool) -> None:
    assert answer.status is not None, f"{name}: the connection closed without an answer"
    assert not answer.reset, f"{name}: answered {answer.status}, then reset the connection (body left unread)"
    assert answer.status < 500, (name, answer.status, answer.body[:300])
    try:
        body = answer.json()
    except ValueError:
        pytest.fail(f"{name}: answer {answer.status} is not JSON: {answer.body[:300]!r}")
    if answer.status >= 400:
        assert isinstance(body, dict) and body.get("Error"), (name, answer.status, body)
    elif error_field_ok and isinstance(body, dict) and "Error" in body:
        assert isinstance(body["Error"], str), (name, body)


@pytest.mark.parametrize("verb,valid", [("filter", args_names()), ("prioritize", args_names()), ("bind", BIND),
                                        ("preempt", PREEMPT)])
def test_every_hostile_body_gets_a_4xx_or_an_error_naming_it(extender, verb: str, valid: dict) -> None:
    port, _, _ = extender
    corpus = bodies(valid)
    refused = 0
    for name, body in corpus.items():
        answer = send(port, "POST", f"{PREFIX}/{verb}", body)
        _check(f"{verb} {name}", answer, error_field_ok=verb in ("filter", "bind"))
        refused += answer.status >= 400 or bool(answer.json().get("Error") if isinstance(answer.json(), dict)
                                                 else False)
    assert refused >= len(corpus) // 2, "most of the corpus is refused (it is hostile)"
    deep = send(port, "POST", f"{PREFIX}/{verb}", corpus["depth-array-1500"])
    assert "nested too deeply" in deep.json()["Error"], deep.body
    assert not any(metric(port, "drsched_extender_internal_errors_total").values()), \
        "a hostile body reached the unexpected-exception path"


def test_debug_listener_and_odd_requests_get_4xx_with_error(extender) -> None:
    port, debug_port, _ = extender
    for name, body in bodies(args_names()).items():
        _check(f"debug explain {name}", send(debug_port, "POST", "/debug/explain", body), error_field_ok=False)
    odd = [("GET", "/debug/explain?namespace=%ff%fe&name=%00"), ("GET", "/debug/explain"),
           ("GET", "/debug/profiles?workload=" + "w" * 20_000), ("DELETE", "/debug/usage"), ("GET", "/nope")]
    for method, path in odd:
        answer = send(debug_port, method, path)
        assert answer.status is not None and answer.status < 500 and not answer.reset, (method, path, answer)
        if answer.status >= 400:
            assert answer.json().get("Error"), (method, path, answer.body)
    for method, path in [("GET", f"{PREFIX}/filter"), ("PUT", f"{PREFIX}/prioritize"), ("GET", "/%ff/..%2f"),
                         ("POST", "/healthz")]:
        answer = send(port, method, path)
        assert answer.status is not None and 400 <= answer.status < 500 and not answer.reset, (method, path, answer)
        assert answer.json().get("Error"), (method, path, answer.body)
    wide = bodies(args_names())["width-keys-100000"]  # 1.4 MB to routes that never read a body
    for listener, method, path in [(port, "POST", "/healthz"), (port, "PUT", f"{PREFIX}/prioritize"),
                                   (port, "POST", "/nope"), (debug_port, "POST", "/debug/usage")]:
        answer = send(listener, method, path, wide)
        assert answer.status is not None and 400 <= answer.status < 500, (method, path, answer.status)
        assert not answer.reset, f"{method} {path}: answered {answer.status}, then reset (body left unread)"
        assert answer.json().get("Error"), (method, path, answer.body)
    assert not any(metric(port, "drsched_extender_internal_errors_total").values())


def test_a_fault_outside_every_route_is_logged_counted_and_answered(monkeypatch) -> None:
    """The guard itself: a decoder that raises something unexpected (injected) is answered, logged, counted."""
    from fastapi.testclient import TestClient

    import extender.fastwire as fastwire
    from extender.service import create_app

    from .payloads import static_settings

    def broken(body: bytes):
        raise KeyError("injected")

    monkeypatch.setattr(fastwire, "parse_args", broken)
    app = create_app(static_settings())
    with TestClient(app, raise_server_exceptions=False) as client:
        with pytest.MonkeyPatch.context() as m:
            logged = []
            m.setattr("extender.guard.log.exception", lambda msg, **kw: logged.append((msg, kw)))
            reply = client.post(f"{app.state.runtime.settings.prefix}/prioritize",
                                content=json.dumps(args_names()), headers={"content-type": "application/json"})
        assert reply.status_code == 400 and "internal error: KeyError" in reply.json()["Error"]
        assert logged and "prioritize" in repr(logged[0][1]["extra"]), logged
        text = client.get("/metrics").text
        assert 'drsched_extender_internal_errors_total{verb="prioritize"} 1.0' in text
