"""Keep freed request buffers in the process heap instead of handing them back to the kernel each time.

A prioritize at 5,000 nodes allocates a few dozen numpy arrays of 0.1-2 MiB (snapshot rows, feature
columns, the Q-network's activations) and frees them when it answers. glibc serves such sizes with
``mmap`` and returns them with ``munmap`` (or trims the heap top), so the next request page-faults every
page in again: on a VM that was more than half of prioritize's time (Q-network at 5,000 nodes 3.4 ms
-> 1.2 ms once the pages stay mapped). Raising the mmap and trim thresholds keeps them; the cost is that
the heap holds on to up to ``TRIM_THRESHOLD`` of free memory.

Only glibc has ``mallopt``; elsewhere (musl, macOS) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

from kube.logs import kv

log = logging.getLogger(__name__)

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 * 2**20
"""glibc's largest allowed mmap threshold on 64-bit: blocks up to this size come from the heap."""
TRIM_THRESHOLD = 16 * 2**20
"""Free memory kept at the heap top before glibc gives it back: above a 5,000-node prioritize's working set
(~8 MiB), low enough that a 10 MiB full-Nodes body does not stay resident."""


def keep_freed_memory() -> bool:
    """Set the thresholds; True if glibc accepted both. Call once, early (before the app allocates)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        log.info("heap tuning unavailable", extra=kv(reason="no glibc mallopt"))
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    ok = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    log.debug("heap tuned", extra=kv(ok=ok, mmap_threshold=MMAP_THRESHOLD, trim_threshold=TRIM_THRESHOLD))
    return ok
