"""Equality label selectors (``k=v,k2=v2``), the only kind drsched's options take. Pure.

The extender finds its node agents by one (``monitor_selector``), the migration controller restricts its
target nodes by another (``node_selector``): both parse and match here, so the two options accept the same
text. Set-based terms (``in``, ``notin``, ``!=``) are refused rather than misread.
"""

from __future__ import annotations

from collections.abc import Mapping


def parse_selector(text: str) -> dict[str, str]:
    """``k=v,k2=v2`` (``k==v`` too) -> dict; raises ``ValueError`` naming the first term that is not one."""
    out = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip().lstrip("=")
        if not sep or not key or key.endswith("!"):
            raise ValueError(f"selector term {part.strip()!r} is not key=value")
        out[key] = value
    return out


def matches(labels: Mapping[str, str] | None, selector: Mapping[str, str]) -> bool:
    """Whether ``labels`` has every ``key=value`` of ``selector`` (an empty selector matches everything)."""
    labels = labels or {}
    return all(labels.get(k) == v for k, v in selector.items())
