"""Where a benchmark leaves its figures: one JSON file per benchmark in ``results/bench/``, committed.

Why it exists: figures typed into the README by hand drift from what the code measures (an inference row
outlived the model it timed). Each benchmark writes its figures here with the command, the time and the
machine's load around the run; ``scripts/readme_tables.py`` renders the README's Benchmarks table from
these files, and its ``--check`` (a unit test) fails when the README and the files disagree.

The benchmarks whose figures move with the machine's load (bench_scheduler, bench_extender) keep every run: each
writes a new ``results/bench/runs/<bench>-<UTC yyyymmddTHHMM>.json`` (``run_path``, stamped with the time the run
starts) and refuses to overwrite a file that exists, so a run that went badly cannot replace the one before it
unseen, and a claim can cite the run it rests on.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

from policy.paths import BENCH_RESULTS, BENCH_RUNS

RESULTS = Path(__file__).resolve().parent.parent / BENCH_RESULTS
RUNS = Path(__file__).resolve().parent.parent / BENCH_RUNS


class ResultsExist(FileExistsError):
    """The results file of this run exists already: pick another ``--results`` (every run keeps its own file)."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} exists; every run keeps its own file: wait a minute or pass another --results")


def run_path(bench: str, *, at: float | None = None) -> Path:
    """``results/bench/runs/<bench>-<UTC yyyymmddTHHMM>.json`` for a run starting at ``at`` (default now)."""
    return RUNS / f"{bench}-{time.strftime('%Y%m%dT%H%M', time.gmtime(at))}.json"


def refuse_existing(path: str | Path | None) -> None:
    """Raise ``ResultsExist`` when ``path`` is a file already: checked before a run, not after it."""
    if path and Path(path).exists():
        raise ResultsExist(Path(path))


def load_average() -> float:
    """The 1-minute load average (what a 2-core figure should be read against)."""
    return float(Path("/proc/loadavg").read_text().split()[0])


def write(path: str | Path | None, figures: dict, *, load_before: float, overwrite: bool = True) -> Path | None:
    """Write ``figures`` with the command line, UTC time and load to ``path`` (None or "": nothing); without
    ``overwrite``, ``ResultsExist`` when the file is there already."""
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
    try:
        with path.open("w" if overwrite else "x") as f:
            f.write(json.dumps(record, indent=1, sort_keys=True) + "\n")
    except FileExistsError:
        raise ResultsExist(path) from None
    return path


def finish(path: str | Path | None, figures: dict, *, load_before: float) -> int:
    """A benchmark's last step: ``write`` its figures to a new file (never over one), say where, and give the
    command's exit status (0)."""
    written = write(path, figures, load_before=load_before, overwrite=False)
    if written:
        print(f"figures: {written}")  # noqa: T201 -- the benchmark's printout
    return 0


def commit_of(tree: Path) -> str | None:
    """The commit checked out in ``tree`` (None outside git): which code a record's figures measured."""
    try:
        return subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def _rounded(value):
    """Floats to 4 significant digits: the files are read by people and diffed in review."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value
