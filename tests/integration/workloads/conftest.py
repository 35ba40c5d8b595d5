"""Shared fixtures: one uninterrupted reference run per job kind, computed once per session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# This directory has no __init__.py (a tests.integration.workloads package would shadow the real
# ``workloads``), so make the harness module next to it importable explicitly.
sys.path.insert(0, str(Path(__file__).parent))

from workloads_harness import outputs, run_to_end, valid_checkpoints  # noqa: E402


@pytest.fixture(scope="session")
def reference(tmp_path_factory):
    """kind -> (outputs, {units: checkpoint state}) of an uninterrupted run checkpointing after every unit."""
    cache: dict[str, tuple[dict[str, bytes], dict[int, dict]]] = {}

    def get(kind: str):
        if kind not in cache:
            state_dir = tmp_path_factory.mktemp(f"ref-{kind}") / "state"
            run_to_end(kind, state_dir, "--checkpoint-units", "1", "--keep", "1000")
            cache[kind] = (outputs(kind, state_dir), valid_checkpoints(state_dir))
        return cache[kind]

    return get

