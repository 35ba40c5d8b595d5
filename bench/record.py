"""Where a benchmark leaves its figures: one JSON file per benchmark in ``results/bench/``, committed.

Why it exists: figures typed into the README by hand drift from what the code measures (an inference row
outlived the model it timed). Each benchmark writes its figures here with the command, the time and the
machine's load around the run; ``scripts/readme_tables.py`` renders the README's Benchmarks table from
these files, and its ``--check`` (a unit test) fails when the README and the files disagree.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

from policy.paths import BENCH_RESULTS

RESULTS = Path(__file__).resolve().parent.parent / BENCH_RESULTS


def load_average() -> float:
    """The 1-minute load average (what a 2-core figure should be read against)."""
    return float(Path("/proc/loadavg").read_text().split()[0])


def write(path: str | Path | None, figures: dict, *, load_before: float) -> Path | None:
    """Write ``figures`` with the command line, UTC time and load to ``path`` (None or "": nothing)."""
    if not path:
        return None
    path = Path(path)
    record = {
        "command": shlex.join(["python", f"bench/{Path(sys.argv[0]).name}", *sys.argv[1:]]),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_before": round(load_before, 2),
        "load_after": round(load_average(), 2),
        "figures": _rounded(figures),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return path


def _rounded(value):
    """Floats to 4 significant digits: the files are read by people and diffed in review."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value
