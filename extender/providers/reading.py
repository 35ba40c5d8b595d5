"""What both usage providers share when reading an answer: the error type and the JSON-object check."""

from __future__ import annotations

import json
from typing import Any

from extender.errors import ExtenderError


class UsageReadError(ExtenderError):
    """An answer a provider cannot use; ``reason`` is the ``usage_errors_total`` label, ``detail`` the why."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def json_object(body: bytes | str | dict, error: type[UsageReadError]) -> dict[str, Any]:
    """``body`` decoded to a JSON object, or ``error("bad_response", ...)``."""
    if isinstance(body, bytes | str):
        try:
            body = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise error("bad_response", f"not JSON: {str(exc)[:80]}") from None
    if not isinstance(body, dict):
        raise error("bad_response", f"expected a JSON object, got {type(body).__name__}")
    return body
