"""Shared fixtures: one uninterrupted reference run per job kind, computed once per session."""

from __future__ import annotations

import pytest

from .jobs import outputs, run_to_end, valid_checkpoints


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

