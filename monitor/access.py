"""Who may read per-pod readings: callers on the node itself, and callers presenting the agent's token.

Per-pod readings (``pods`` in ``/usage``, the ``drsched_monitor_pod_*`` series in ``/metrics``) tell
anyone who asks which pods run on the node and how hard they work. The agent serves them only to a
caller on loopback (the node itself: the agent runs with hostNetwork) or to one that sends
``Authorization: Bearer <token>`` with the token read from ``pods_token_file`` (a Secret both the agent
and the extender mount; Prometheus sends it with ``authorization: {credentials_file: ...}``). Everyone
else gets the node-level readings, with ``pods`` empty and the header ``X-Drsched-Pods: withheld``.
A NetworkPolicy cannot do this job alone: Kubernetes leaves policy for host-network pods undefined.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from pathlib import Path

from kube.logs import kv

log = logging.getLogger(__name__)
WITHHELD_HEADER = "X-Drsched-Pods"


def load_token(path: Path | None) -> str | None:
    """The token in ``path`` (stripped), or None: unset, missing or empty (then only loopback reads pods)."""
    if path is None:
        return None
    try:
        token = path.read_text().strip()
    except OSError as exc:
        log.warning("pod readings token unreadable: only loopback callers get per-pod readings",
                    extra=kv(path=path, error=exc.strerror))
        return None
    if not token:
        log.warning("pod readings token file is empty: only loopback callers get per-pod readings",
                    extra=kv(path=path))
        return None
    return token


def may_read_pods(*, client_host: str | None, authorization: str | None, token: str | None) -> bool:
    """Loopback callers always; others only with ``Bearer <token>`` (compared in constant time)."""
    try:
        if client_host is not None and ipaddress.ip_address(client_host).is_loopback:
            return True
    except ValueError:
        pass
    if token is None or not authorization:
        return False
    return hmac.compare_digest(authorization.encode(), f"Bearer {token}".encode())
