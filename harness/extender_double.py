"""TEST DOUBLE of the drsched extender: a tiny real HTTP server speaking the scheduler-extender wire protocol.

It exists only until the real extender (`python -m extender`) can serve these e2e tests; the tests
talk to it through the same URL and check the same observable facts (which verbs the scheduler
called, where pods landed), so swapping in the real extender changes the fixture, not the tests.

Wire format (reference/k8s-extender.md §1): kube-scheduler POSTs PascalCase JSON with no JSON tags;
with nodeCacheCapable it sends `{"Pod": {...}, "Nodes": null, "NodeNames": [...]}` and the filter
reply must carry `NodeNames`. Prioritize returns `[{"Host": ..., "Score": int 0..10}]`. Any reply
other than HTTP 200 is an error to the scheduler.
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Call:
    verb: str
    body: dict[str, Any]

    @property
    def pod_name(self) -> str | None:
        pod = self.body.get("Pod") or {}
        return (pod.get("metadata") or {}).get("name") or self.body.get("PodName")


@dataclass
class ExtenderDouble:
    """Answers filter / prioritize / bind / preempt and records every call it gets.

    `reject` lists nodes the filter fails; `prefer` gets score 10 and every other node 0;
    `bind` is a callable (pod namespace, pod name, pod uid, node) doing the real binding.
    """

    reject: set[str] = field(default_factory=set)
    prefer: str | None = None
    bind: Callable[[str, str, str, str], None] | None = None
    tls_context: ssl.SSLContext | None = None
    calls: list[Call] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    def start(self) -> ExtenderDouble:
        double = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                verb = self.path.strip("/").rsplit("/", 1)[-1]
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with double._lock:
                    double.calls.append(Call(verb, body))
                status, reply = double.answer(verb, body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, fmt: str, *args: Any) -> None:
                log.debug("extender-double " + fmt, *args)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if self.tls_context is not None:
            self._server.socket = self.tls_context.wrap_socket(self._server.socket, server_side=True)
        threading.Thread(target=self._server.serve_forever, name="extender-double", daemon=True).start()
        return self

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("ExtenderDouble.start() first")
        scheme = "https" if self.tls_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self._server.server_address[1]}/"

    def verbs(self, pod_name: str | None = None) -> set[str]:
        with self._lock:
            return {c.verb for c in self.calls if pod_name is None or c.pod_name == pod_name}

    def answer(self, verb: str, body: dict[str, Any]) -> tuple[int, Any]:
        names: list[str] = body.get("NodeNames") or []
        if verb == "filter":
            keep = [n for n in names if n not in self.reject]
            failed = {n: "rejected by the e2e extender double" for n in names if n in self.reject}
            return 200, {"NodeNames": keep, "FailedNodes": failed, "FailedAndUnresolvableNodes": None, "Error": ""}
        if verb == "prioritize":
            return 200, [{"Host": n, "Score": 10 if n == self.prefer else 0} for n in names]
        if verb == "bind":
            if self.bind is None:
                return 200, {"Error": "this extender double was started without a binder"}
            try:
                self.bind(body["PodNamespace"], body["PodName"], body["PodUID"], body["Node"])
            except Exception as exc:  # report to the scheduler, as the protocol asks
                return 200, {"Error": f"bind failed: {exc}"}
            return 200, {"Error": ""}
        if verb == "preempt":
            # Agree with the scheduler's proposed victims (UIDs only, nodeCacheCapable).
            return 200, {"NodeNameToMetaVictims": body.get("NodeNameToMetaVictims") or {}}
        return 404, {"Error": f"unknown verb {verb!r}"}

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
