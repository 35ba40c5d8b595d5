"""extender/README.md's *Config* table against ``extender.settings.Settings``: every option it names exists, and
every default it writes as a plain value (a number, a `quoted` word, – for none) is the field's default, so the
page a user configures from cannot drift from the code (the hot thresholds 0.65 / 0.95, for one, are defined once
in ``policy.served.HOT_THRESHOLDS`` and only quoted here)."""

from __future__ import annotations

import re
from pathlib import Path

from extender.settings import Settings

README = Path(__file__).resolve().parents[3] / "extender" / "README.md"
NONE = "–"


def _config_rows() -> list[tuple[int, list[str], list[str]]]:
    """(line, option names, written defaults) of each row of the table under ``## Config``."""
    lines = README.read_text().splitlines()
    start = lines.index("## Config")
    rows = []
    for number, line in enumerate(lines[start:], start + 1):
        if line.startswith("## ") and number > start + 1:
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("| `") else []
        if len(cells) >= 3:
            names = re.findall(r"`([a-z_]+)`", cells[0])
            rows.append((number, names, [d.strip() for d in cells[1].split(" / ")]))
    return rows


def _plain(text: str) -> tuple[bool, object]:
    """(True, value) for a default written as a plain value; (False, None) for words that describe one."""
    if text == NONE:
        return True, None
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return True, float(text)
    if re.fullmatch(r"`[^`]*`", text):
        return True, text.strip("`")
    return False, None


def test_every_option_in_the_config_table_exists():
    rows = _config_rows()
    assert len(rows) > 20, "the Config table was not found where this test looks for it"
    unknown = [(line, name) for line, names, _ in rows for name in names if name not in Settings.model_fields]
    assert not unknown, f"{README}: options that Settings does not have: {unknown}"


def test_every_plain_default_in_the_config_table_is_the_fields_default():
    checked, wrong = 0, []
    for line, names, defaults in _config_rows():
        if len(names) != len(defaults):
            continue  # one default written for several options, or prose: nothing to pair
        for name, text in zip(names, defaults, strict=True):
            plain, value = _plain(text)
            if not plain:
                continue
            actual = Settings.model_fields[name].default
            if isinstance(actual, (int, float)) and not isinstance(actual, bool) and isinstance(value, float):
                ok = float(actual) == value
            elif isinstance(actual, Path):  # shipped files: written relative to the repository
                ok = actual == README.parents[1] / str(value)
            elif value is None:  # – : unset, which a selector spells as the empty string
                ok = actual in (None, "")
            else:
                ok = actual == value
            checked += 1
            if not ok:
                wrong.append(f"line {line}: {name}: README says {text}, Settings says {actual!r}")
    assert checked >= 20, f"only {checked} defaults could be checked: is the table still where this test reads it?"
    assert not wrong, f"{README}:\n" + "\n".join(wrong)
