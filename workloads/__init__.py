"""Checkpointable workloads: the cpu / io / net / training-like jobs that drsched schedules and migrates.

Run as ``python -m workloads <cpu|io|net|train> --state-dir DIR [--units N] ...``. Each job works in
deterministic units, reports progress through ``DIR/progress.json`` (contract: ``workloads.progress``),
writes self-verifying checkpoints (``workloads.checkpoint``), resumes from the newest valid one, and
checkpoints then exits 0 on SIGTERM. See ``workloads/README.md``.
"""
