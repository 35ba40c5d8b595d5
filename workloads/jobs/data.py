"""Deterministic pseudo-random payload for the io input file and the net stream.

Chunk ``i`` of a seed is ``SHAKE-256("drsched:<seed>:<i>")`` truncated to the chunk size: any chunk can
be regenerated on its own, so a resumed job can rebuild the hash of everything before its checkpoint
without reading it back.
"""

from __future__ import annotations

import hashlib


def chunk(seed: int, index: int, size: int) -> bytes:
    return hashlib.shake_256(f"drsched:{seed}:{index}".encode()).digest(size)


def prefix_hasher(seed: int, units: int, size: int):
    """A sha256 object that has consumed chunks ``0 .. units-1``."""
    hasher = hashlib.sha256()
    for index in range(units):
        hasher.update(chunk(seed, index, size))
    return hasher
