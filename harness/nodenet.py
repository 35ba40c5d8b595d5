"""A real node's network link: its CNI bridge, with the node's inbound bandwidth shaped.

All emulated nodes share the host's network stack, so without shaping a node's "NIC" is as fast as
the CPU can copy. Each node's bridge gets a token-bucket (tbf) qdisc on its egress, which is every packet
entering the node's pods from outside the node: streams into one node share its link. Traffic between
pods of one node is switched inside the bridge and stays unshaped, like a real node's loopback.
The outbound direction is not shaped: redirecting the bridge's ingress through an ifb device (the usual
way) stalled TCP here (the ifb dropped re-injected packets, likely with br_netfilter loaded).
The bridge is made here, before CNI runs (the CNI bridge plugin adopts an existing bridge of its name),
so the limit is in place for the first pod.
"""

from __future__ import annotations

import subprocess

from harness.errors import HarnessError

BURST = "64kb"
LATENCY = "100ms"


class NodeNetError(HarnessError, RuntimeError):
    """ip or tc refused a command; the message has its stderr."""


def _run(*argv: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise NodeNetError(f"{' '.join(argv)} failed: {done.stderr.strip()}")


def make_shaped_bridge(*, bridge: str, mbit: int) -> None:
    """Create `bridge` (up) and, when `mbit` > 0, limit what enters the node through it to `mbit` Mbit/s."""
    _run("ip", "link", "add", bridge, "type", "bridge")
    _run("ip", "link", "set", bridge, "up")
    if mbit > 0:
        _run(
            "tc",
            "qdisc",
            "add",
            "dev",
            bridge,
            "root",
            "tbf",
            "rate",
            f"{mbit}mbit",
            "burst",
            BURST,
            "latency",
            LATENCY,
        )


def remove_links(*names: str) -> None:
    """Delete links if present (their qdiscs go with them)."""
    for name in names:
        subprocess.run(["ip", "link", "del", name], capture_output=True, check=False)
