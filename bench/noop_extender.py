"""The cheapest correct scheduler extender: every node passes, every score 0. The floor drsched is measured against.

Raw ASGI under uvicorn with uvloop and httptools, bodies parsed and replies written with orjson, in the
request's payload mode (``NodeNames`` back for nodeCacheCapable, ``Nodes`` otherwise). Whatever it costs
kube-scheduler to call it is the price of the extender mechanism itself, not of anything drsched decides.
``GET /stats`` gives, per verb, the count and p50 / p99 / total seconds from the request's arrival to its
encoded reply (the same span drsched's ``drsched_extender_request_seconds`` covers).

    python bench/noop_extender.py --port 8899        # POST /filter, /prioritize; GET /stats, /healthz
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import orjson

_JSON = [(b"content-type", b"application/json")]


class NoopExtender:
    """The ASGI app; ``seconds[verb]`` holds every handled request's duration."""

    def __init__(self) -> None:
        self.seconds: dict[str, list[float]] = {"filter": [], "prioritize": []}

    def stats(self) -> dict:
        out = {}
        for verb, xs in self.seconds.items():
            arr = np.asarray(xs)
            out[verb] = {"count": len(xs), "sum_s": float(arr.sum()),
                         "p50_s": float(np.percentile(arr, 50)) if xs else None,
                         "p99_s": float(np.percentile(arr, 99)) if xs else None}
        return out

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        start = time.perf_counter()
        chunks = []
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            chunks.append(msg.get("body", b""))
            if not msg.get("more_body"):
                break
        verb = scope["path"].rstrip("/").rsplit("/", 1)[-1]
        status, body = 200, b""
        if verb in self.seconds and scope["method"] == "POST":
            args = orjson.loads(b"".join(chunks))
            names, nodes = args.get("NodeNames"), args.get("Nodes")
            if verb == "filter":
                reply = {"Nodes": None, "NodeNames": names, "FailedNodes": {}, "FailedAndUnresolvableNodes": {},
                         "Error": ""} if names is not None else \
                    {"Nodes": nodes, "NodeNames": None, "FailedNodes": {}, "FailedAndUnresolvableNodes": {},
                     "Error": ""}
            else:
                hosts = names if names is not None else [n["metadata"]["name"] for n in (nodes or {}).get("items", [])]
                reply = [{"Host": h, "Score": 0} for h in hosts]
            body = orjson.dumps(reply)
            self.seconds[verb].append(time.perf_counter() - start)
        elif verb == "stats":
            body = orjson.dumps(self.stats())
        elif verb == "healthz":
            body = b'{"status":"ok"}'
        else:
            status, body = 404, b'{"Error":"not found"}'
        await send({"type": "http.response.start", "status": status,
                    "headers": [*_JSON, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="listen address")
    parser.add_argument("--port", type=int, default=8899, help="listen port")
    args = parser.parse_args(argv)
    import uvicorn

    uvicorn.run(NoopExtender(), host=args.host, port=args.port, loop="uvloop", http="httptools",
                log_level="warning", access_log=False, lifespan="off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
