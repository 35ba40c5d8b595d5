"""Where committed results live: one place, so every writer and reader names the same tree.

``RESULTS`` is relative to the checkout's root (the Makefile and the docs run every command from there); each producer
writes its own sub-tree: ``RESULTS / "policy"`` (evaluations, calibration, sweeps), ``RESULTS / "lab"`` (real-node
runs) and ``RESULTS / "bench"`` (benchmark figures; ``BENCH_RUNS``: a file per run of the benchmarks that keep every
run). Results are outputs, so they sit outside the code packages.
Standard library only.
"""

from pathlib import Path

RESULTS = Path("results")
POLICY_RESULTS = RESULTS / "policy"
LAB_RESULTS = RESULTS / "lab"
BENCH_RESULTS = RESULTS / "bench"
BENCH_RUNS = BENCH_RESULTS / "runs"
