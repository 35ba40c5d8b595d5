"""Kubernetes resource quantities (``500m``, ``1Gi``, ``1e3``, ``128974848``) as floats, with no I/O.

The grammar is apimachinery's ``resource.Quantity``: a signed decimal number followed by at most one
suffix, either binary-SI (``Ki Mi Gi Ti Pi Ei``), decimal-SI (``n u m k M G T P E``; none = 1) or a
decimal exponent (``e3``, ``E-2``). Parsing goes through ``Decimal`` so ``0.1`` or ``1.5Gi`` do not pick up
binary float error before the final conversion. Helpers below convert to the policy units of
``policy.state`` (cores, GiB, MB/s).
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal, InvalidOperation

from kube.errors import QuantityError

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
            "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
            "P": Decimal("1e15"), "E": Decimal("1e18")}
_RE = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")

GIB = float(2**30)
MB = 1e6


def parse_quantity(value: str | int | float) -> float:
    """The quantity in base units (cores for cpu, bytes for memory, bytes/s for net and disk).

    Raises ``QuantityError`` naming the value for anything apimachinery would refuse, and for negative
    or non-finite numbers (no resource here can be negative).
    """
    if isinstance(value, bool):
        raise QuantityError(f"quantity must be a string or number, got {value!r}")
    if isinstance(value, int | float):
        if value != value or value in (float("inf"), float("-inf")) or value < 0:
            raise QuantityError(f"quantity must be a finite number >= 0, got {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise QuantityError(f"quantity must be a string or number, got {type(value).__name__}")
    return _parse_text(value)


@functools.lru_cache(maxsize=1024)
def _parse_text(value: str) -> float:
    """``parse_quantity`` of a string, remembered: a cluster's pods and nodes spell their quantities with a
    few dozen strings (``100m``, ``128Mi``, ``16``, ``110``), and each watch event and request reads 2-5 of
    them, ~3 us apiece through the regex and ``Decimal`` (a refused string raises and is not remembered)."""
    text = value.strip()
    match = _RE.match(text)
    if not match:
        raise QuantityError(f"cannot parse quantity {value!r} (expected e.g. 500m, 2, 1.5Gi, 128974848, 1e3)")
    number, suffix = match.group(1), match.group(2) or ""
    try:
        num = Decimal(number)
        if suffix in _BINARY:
            result = num * _BINARY[suffix]
        elif suffix in _DECIMAL:
            result = num * _DECIMAL[suffix]
        else:
            exp = int(suffix[1:])
            if abs(exp) > 308:
                raise QuantityError(f"quantity {value!r}: exponent out of range")
            result = num.scaleb(exp)
    except InvalidOperation:
        raise QuantityError(f"cannot parse quantity {value!r}") from None
    if result < 0:
        raise QuantityError(f"quantity {value!r} is negative")
    out = float(result)
    if out == float("inf"):
        raise QuantityError(f"quantity {value!r} is too large")
    return out


def cpu_cores(value: str | int | float) -> float:
    """A cpu quantity in cores (``500m`` -> 0.5)."""
    return parse_quantity(value)


def mem_gib(value: str | int | float) -> float:
    """A memory quantity in GiB (``1Gi`` -> 1.0, ``512Mi`` -> 0.5)."""
    return parse_quantity(value) / GIB


def rate_mbps(value: str | int | float) -> float:
    """A bytes-per-second quantity in MB/s (``60M`` -> 60.0, ``1Gi`` -> 1073.741824)."""
    return parse_quantity(value) / MB
