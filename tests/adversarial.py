"""Adversarial requests for every listener drsched opens, and a raw HTTP client that sees exactly what comes back.

Why it exists: schemathesis generates requests from the OpenAPI schema, so it never sends what no schema
describes -- JSON nested 1,500 levels deep, a body cut off mid-token, invalid UTF-8, 100,000 keys, integers of
5,000 digits. Those reached a plain-text 500 once (``extender.guard``). ``bodies(valid)`` builds that corpus
around a valid body of the listener's own; ``send`` writes one request over a fresh socket and reads the whole
answer, so a dropped connection (no status line) is seen as such rather than as a client exception, and a reset
(RST: the server closed with our bytes unread, so a client still sending gets an error, not the answer) is
flagged on the answer.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass


def _deep(n: int, open_: str = "[", close: str = "]") -> bytes:
    return (open_ * n + close * n).encode()


def bodies(valid: dict) -> dict[str, bytes]:
    """name -> body: depth, width, huge numbers, odd Unicode, duplicate keys, truncation, wrong top-level types."""
    raw = json.dumps(valid).encode()
    keys = list(valid)
    first = keys[0] if keys else "x"
    deep_obj = ('{"a":' * 1500 + "1" + "}" * 1500).encode()
    cases = {
        "depth-array-1500": _deep(1500),
        "depth-object-1500": deep_obj,
        "depth-array-100000": _deep(100_000),
        "width-keys-100000": ("{" + ",".join(f'"k{i}":{i}' for i in range(100_000)) + "}").encode(),
        "width-array-200000": ("[" + ",".join("0" for _ in range(200_000)) + "]").encode(),
        "huge-int-5000-digits": ("9" * 5000).encode(),
        "huge-float": b"1e999999",
        "nan": b"NaN",
        "infinity": b"-Infinity",
        "invalid-utf8": b'{"\xff\xfe": "\xc0\xaf"}',
        "bom-then-valid": b"\xef\xbb\xbf" + raw,
        "lone-surrogate": b'{"x": "\\ud800"}',
        "nul-and-controls": b'{"x": "\\u0000\\u001b[31m\\u202e\\ufeff"}',
        "empty": b"",
        "whitespace": b" \n\t ",
        "null": b"null",
        "string": b'"x"',
        "number": b"1",
        "duplicate-top-keys": raw[:-1] + b", " + json.dumps(first).encode() + b": []}" if raw.endswith(b"}") else raw,
    }
    for key in keys:  # each member of the valid body, replaced by something hostile
        for name, value in (("depth", _deep(1500)), ("depth-object", deep_obj), ("huge-int", b"9" * 5000),
                            ("huge-float", b"1e999999"), ("surrogate", b'"\\udfff"'), ("utf8", b'"\xed\xa0\x80"'),
                            ("wide-string", b'"' + b"n" * 200_000 + b'"'),
                            ("wide-list", b"[" + b",".join(b'"n%d"' % i for i in range(50_000)) + b"]")):
            cases[f"{key}-{name}"] = _with_member(valid, key, value)
    for cut in sorted({1, 2, len(raw) // 3, len(raw) // 2, len(raw) - 2, len(raw) - 1}):
        if 0 < cut < len(raw):
            cases[f"truncated-at-{cut}"] = raw[:cut]
    return cases


def _with_member(valid: dict, key: str, raw_value: bytes) -> bytes:
    rest = {k: v for k, v in valid.items() if k != key}
    head = json.dumps(rest).encode()
    member = json.dumps(key).encode() + b": " + raw_value
    return b"{" + member + (b", " + head[1:] if rest else b"}")


@dataclass
class Answer:
    status: int | None  # None: the connection closed without a status line (a drop)
    body: bytes
    reset: bool = False  # the server reset the connection (RST, not FIN): a real client may never see the answer

    def json(self):
        return json.loads(self.body)


def send(port: int, method: str, path: str, body: bytes = b"", *, headers: dict[str, str] | None = None,
         timeout: float = 30.0) -> Answer:
    """One HTTP/1.1 request on a fresh connection; reads until the server closes or the body is complete."""
    head = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close",
            f"Content-Length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in (headers or {"Content-Type": "application/json"}).items()]
    data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1", "replace") + body
    reset = False
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
        except (ConnectionResetError, BrokenPipeError):
            reset = True  # it answered (or not) and closed before reading all we sent; read what it said
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                reset = True
                break
            if not chunk:
                break
            chunks.append(chunk)
    reply = b"".join(chunks)
    if not reply.startswith(b"HTTP/1."):
        return Answer(None, reply, reset)
    status_line, _, rest = reply.partition(b"\r\n")
    _, _, payload = rest.partition(b"\r\n\r\n")
    return Answer(int(status_line.split()[1]), payload, reset)


def metric(port: int, name: str, path: str = "/metrics") -> dict[str, float]:
    """labels -> value of every sample of ``name`` on a Prometheus endpoint."""
    text = send(port, "GET", path, headers={}).body.decode()
    out = {}
    for line in text.splitlines():
        if line.startswith(name) and not line.startswith("#"):
            labels, _, value = line.rpartition(" ")
            out[labels[len(name):]] = float(value)
    return out
