"""Where committed results live: one place, so every writer and reader names the same tree.

``RESULTS`` is relative to the checkout's root (the Makefile and the docs run every command from there); each producer
writes its own sub-tree: ``RESULTS / "policy"`` (evaluations, calibration, sweeps), ``RESULTS / "lab"`` (real-node
runs) and ``RESULTS / "bench"`` (benchmark figures; ``BENCH_RUNS``: a file per run of the benchmarks that keep every
run). Results are outputs, so they sit outside the code packages. ``repo_relative`` names a file the way a committed
report should: from the checkout's root, not from the machine that ran it.
Standard library only.
"""

from pathlib import Path

RESULTS = Path("results")
POLICY_RESULTS = RESULTS / "policy"
LAB_RESULTS = RESULTS / "lab"
BENCH_RESULTS = RESULTS / "bench"
BENCH_RUNS = BENCH_RESULTS / "runs"

ROOT = Path(__file__).resolve().parents[1]
"""The checkout's root (this file is ``policy/paths.py``)."""


def repo_relative(path: Path | str) -> str:
    """``path`` from the checkout's root when it lies under it (``policy/models/default.npz``, whatever the
    working directory or the absolute path it was given as), else unchanged: a report records no machine's
    directory for a file of the repository."""
    try:
        return Path(path).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)
