"""Real processes: SIGKILL at seeded random points, SIGTERM, corrupt checkpoints; output must not change."""

from __future__ import annotations

import random
import signal
import time

import pytest

from .jobs import (
    CKPT_UNITS,
    KINDS,
    log_text,
    outputs,
    progress_of,
    run_to_end,
    sigkill,
    start,
    valid_checkpoints,
    wait_exit,
    wait_progress,
)

KILLS = 3


def assert_checkpoints_are_right(kind, state_dir, reference):
    """Every checkpoint that validates holds exactly the state the uninterrupted run had at those units."""
    _, ref_states = reference(kind)
    for units, state in valid_checkpoints(state_dir).items():
        assert state == ref_states[units], f"checkpoint at {units} validates but differs from the reference"


@pytest.mark.parametrize("kind", KINDS)
def test_sigkill_at_random_points_then_resume(kind, tmp_path, reference):
    ref_outputs, _ = reference(kind)
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    rng = random.Random(f"kill-{kind}")
    resumed_from = 0
    for kill in range(KILLS):
        proc = start(kind, state_dir)
        seen = wait_progress(proc, state_dir, resumed_from + rng.randint(CKPT_UNITS // 2, 2 * CKPT_UNITS))
        if seen is None:  # finished before the kill point: nothing more to interrupt
            assert proc.returncode == 0, log_text(state_dir)
            break
        time.sleep(rng.uniform(0, 0.03))  # land anywhere inside a unit or a checkpoint write
        last = progress_of(state_dir, proc.pid) or seen
        sigkill(proc)
        assert_checkpoints_are_right(kind, state_dir, reference)
        newest = max(valid_checkpoints(state_dir), default=0)
        lost = last.units_done - newest
        assert lost < CKPT_UNITS, f"kill {kill}: progress {last.units_done}, newest checkpoint {newest}"
        resumed_from = newest
    else:
        proc = start(kind, state_dir)
        assert wait_exit(proc) == 0, log_text(state_dir)
    final = progress_of(state_dir)
    assert final.state == "done" and final.units_done == final.units_total
    assert outputs(kind, state_dir) == ref_outputs


@pytest.mark.parametrize("kind", KINDS)
def test_sigterm_checkpoints_within_grace_and_resume_continues(kind, tmp_path, reference):
    ref_outputs, _ = reference(kind)
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    proc = start(kind, state_dir, "--grace", "5")
    seen = wait_progress(proc, state_dir, CKPT_UNITS + 3)
    assert seen is not None, "finished before SIGTERM"
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert wait_exit(proc, timeout=10) == 0, log_text(state_dir)
    assert time.monotonic() - sent < 5.0
    stopped = progress_of(state_dir)
    assert stopped.state == "checkpointing"
    assert stopped.checkpoint is not None and stopped.checkpoint.units_done == stopped.units_done >= seen.units_done
    # the job measures its own costs: every checkpoint it wrote, the SIGTERM one included, and no restore
    assert stopped.checkpoint_writes >= 2 and stopped.checkpoint_write_s is not None
    assert 0 < stopped.checkpoint_write_s.last < 5.0 and stopped.checkpoint_write_s.mean > 0
    assert stopped.restore_s is None
    assert stopped.units_done in valid_checkpoints(state_dir)
    assert_checkpoints_are_right(kind, state_dir, reference)

    proc = start(kind, state_dir)
    resumed = wait_progress(proc, state_dir, 0)
    assert resumed is None or resumed.resumed_from == stopped.units_done
    assert wait_exit(proc) == 0, log_text(state_dir)
    assert progress_of(state_dir).resumed_from == stopped.units_done
    assert progress_of(state_dir).restore_s is not None and progress_of(state_dir).restore_s > 0
    assert outputs(kind, state_dir) == ref_outputs


@pytest.mark.parametrize("kind", KINDS)
def test_corrupt_newest_checkpoint_falls_back_to_previous(kind, tmp_path, reference):
    ref_outputs, _ = reference(kind)
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    proc = start(kind, state_dir)
    assert wait_progress(proc, state_dir, 2 * CKPT_UNITS + 2) is not None
    sigkill(proc)
    units = sorted(valid_checkpoints(state_dir))
    assert len(units) >= 2
    newest = state_dir / f"ckpt-{units[-1]:010d}.json"
    newest.write_bytes(newest.read_bytes()[:-20])  # a torn write the atomic rename should make impossible

    run_to_end(kind, state_dir)
    assert "skipping invalid checkpoint" in log_text(state_dir)
    assert progress_of(state_dir).resumed_from == units[-2]
    assert outputs(kind, state_dir) == ref_outputs


def test_io_part_file_that_disagrees_rejects_its_checkpoints(tmp_path, reference):
    ref_outputs, _ = reference("io")
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    proc = start("io", state_dir)
    assert wait_progress(proc, state_dir, CKPT_UNITS + 2) is not None
    sigkill(proc)
    part = state_dir / "output.bin.part"
    with open(part, "r+b") as fh:  # flip the first byte: every checkpoint now points at wrong data
        first = fh.read(1)
        fh.seek(0)
        fh.write(bytes([first[0] ^ 0xFF]))
    run_to_end("io", state_dir)
    assert "prefix does not match" in log_text(state_dir)
    assert progress_of(state_dir).resumed_from == 0
    assert outputs("io", state_dir) == ref_outputs


def test_sigterm_past_grace_exits_3_without_a_new_checkpoint(tmp_path):
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    # One unit takes ~2 s, far longer than the 0.3 s grace.
    proc = start("cpu", state_dir, "--work", "4000000", "--grace", "0.3")
    assert wait_progress(proc, state_dir, 0) is not None
    time.sleep(0.2)  # let unit 0 start: a SIGTERM before it would (rightly) checkpoint at 0 at once
    proc.send_signal(signal.SIGTERM)
    assert wait_exit(proc, timeout=10) == 3
    assert "grace period exceeded" in log_text(state_dir)
    assert valid_checkpoints(state_dir) == {}


def test_rerun_after_done_is_a_noop(tmp_path, reference):
    ref_outputs, _ = reference("cpu")
    state_dir = tmp_path / "state"
    run_to_end("cpu", state_dir)
    run_to_end("cpu", state_dir)
    assert "nothing to do" in log_text(state_dir)
    assert progress_of(state_dir).state == "done"
    assert outputs("cpu", state_dir) == ref_outputs
