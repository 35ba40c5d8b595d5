"""Reading ``manifests/monitoring/prometheusrule.yaml`` and ``docs/runbook.md`` for the alert tests.

``metric_names(expr)`` is the set of series names a PromQL expression reads: strings, label matchers,
ranges and grouping clauses are removed first, then every remaining identifier that is not a function
call or an operator keyword is a metric name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from tests.helpers import REPO

RULES = REPO / "manifests" / "monitoring" / "prometheusrule.yaml"
RUNBOOK = REPO / "docs" / "runbook.md"
RUNBOOK_LINK = "docs/runbook.md#"
KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left",
            "group_right", "inf", "nan"}


def load_rules(path: Path = RULES) -> list[dict[str, Any]]:
    """Every alerting rule of the PrometheusRule, each with its group's name under ``group``."""
    doc = yaml.safe_load(path.read_text())
    return [{**rule, "group": group["name"]} for group in doc["spec"]["groups"] for rule in group["rules"]]


def metric_names(expr: str) -> set[str]:
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)        # label values, which may hold anything
    text = re.sub(r"\{[^}]*\}", " ", text)                 # label matchers
    text = re.sub(r"\[[^\]]*\]", " ", text)                # range and subquery windows
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        word, after = match.group(), text[match.end():].lstrip()
        if word.lower() in KEYWORDS or after.startswith("("):
            continue
        if re.fullmatch(r"\d+[smhdwy]", word) or text[match.start() - 1:match.start()].isdigit():
            continue  # a duration or the exponent of a number
        names.add(word)
    return names


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def runbook_anchors(path: Path = RUNBOOK) -> set[str]:
    """The anchors of the runbook's headings (a ``#`` line inside a fenced code block is a comment)."""
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.M | re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+)$", text, flags=re.M)}
