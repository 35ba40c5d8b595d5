"""Equality label selectors (``k=v,k2=v2``), the only kind drsched's options take, and ``k=v`` lists. Pure.

The extender finds its node agents by one (``monitor_selector``), the migration controller restricts its
target nodes by another (``node_selector``): both parse and match here, so the two options accept the same
text. Set-based terms (``in``, ``notin``, ``!=``) are refused rather than misread. ``parse_pairs`` is the
one reading of a comma-separated ``k=v`` list, which mapping options and the compact profile annotation use too.
"""

from __future__ import annotations

from collections.abc import Mapping


def parse_pairs(text: str, *, what: str = "") -> list[tuple[str, str]]:
    """``k=v,k2=v2`` -> ``[(k, v), (k2, v2)]``, spaces stripped, empty terms skipped, order and repeats kept.

    Raises ``ValueError`` naming the first term without ``=`` (prefixed ``what``, e.g. "selector term")."""
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"{what} {part!r} is not key=value".lstrip())
        out.append((key.strip(), value.strip()))
    return out


def parse_selector(text: str) -> dict[str, str]:
    """``k=v,k2=v2`` (``k==v`` too) -> dict; raises ``ValueError`` naming the first term that is not one."""
    out = {}
    for key, value in parse_pairs(text, what="selector term"):
        if not key or key.endswith("!"):
            raise ValueError(f"selector term {f'{key}={value}'!r} is not key=value")
        out[key] = value.lstrip("=")
    return out


def matches(labels: Mapping[str, str] | None, selector: Mapping[str, str]) -> bool:
    """Whether ``labels`` has every ``key=value`` of ``selector`` (an empty selector matches everything)."""
    labels = labels or {}
    return all(labels.get(k) == v for k, v in selector.items())
