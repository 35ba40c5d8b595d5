#!/usr/bin/env python3
"""Every skipped test in pytest JUnit XML reports, with its reason and a count: the end of `make test`.

Why it exists: a test skipped for a missing tool or a busy machine must be visible in the summary, not only
in the middle of a suite's output. Reads the reports that ``scripts/run-tests.sh`` writes, one per suite.

    python scripts/list-skips.py out/unit.xml out/integration.xml
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def skipped(report: Path) -> list[str]:
    """``<suite>: <test id>: <reason>`` for each skipped test case of one report."""
    lines = []
    for case in ET.parse(report).getroot().iter("testcase"):
        for skip in case.findall("skipped"):
            test = f"{case.get('classname', '')}::{case.get('name', '')}"
            lines.append(f"{report.stem}: {test}: {skip.get('message', '').strip()}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="*", type=Path, help="JUnit XML files written by pytest --junitxml")
    args = parser.parse_args(argv)
    lines = [line for report in args.reports if report.is_file() for line in skipped(report)]
    sys.stdout.write(f"=== skipped: {len(lines)}\n" + "".join(f"  {line}\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
