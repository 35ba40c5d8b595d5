"""The one configuration error of the policy layer (simulator, environment, migration rule).

A ``ConfigError`` is bad input, not a bug: it names the offending ``field`` so a CLI can print one line
(``field: message``) and exit 2. ``policy.sim``, ``policy.env`` and ``policy.migrate`` all raise this type.
"""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration value is impossible (unknown name, non-positive capacity, bad range).

    Attributes:
        field: the name of the offending configuration field.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
