"""A threaded TCP server served from a daemon thread: what the net job's sink and source have in common.

``start()`` serves in the background, ``stop()`` ends serving and closes the socket; ``address`` is the
(host, port) it listens on (port 0 asked: the one the kernel picked). No state beyond the server's own.
"""

from __future__ import annotations

import socketserver
import threading


class BackgroundTCPServer(socketserver.ThreadingTCPServer):
    """One thread per connection, all daemons; ``thread_name`` names the serving thread."""

    daemon_threads = True
    allow_reuse_address = True
    thread_name = "tcp-server"

    def __init__(self, address: tuple[str, int], handler: type[socketserver.BaseRequestHandler]) -> None:
        self._thread: threading.Thread | None = None
        super().__init__(address, handler)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server_address[:2]
        return host, port

    def start(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
